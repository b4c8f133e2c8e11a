// RandomCluster: ElasticQuotas, as a forest. Roots get limits around the cluster's size (the sum of
// mins sometimes binding, sometimes not; lists absent or partial; now and then a max below its
// min, which the API server would admit without our webhook). Children (quota_depth > 1) name
// their parent with kParentQuotaAnnotation and get limits inside the parent's: their mins sum to
// at most the parent's min, their max stays within the parent's max (capacity-semantics 5, as
// config/quota_hierarchy_check.h checks it).
#include <algorithm>

#include "core/elastic_quota.h"
#include "tests/support/quantity_text.h"
#include "tests/support/random_cluster.h"

namespace capext::testing {
namespace {

const char* const kGpu = "nvidia.com/gpu";
const char* const kGpuV100 = "nvidia.com/gpu.V100";

std::string AmountText(SeededRandom& rng, const std::string& resource, int64_t amount) {
  if (resource == "cpu") return CpuText(rng, amount);
  if (resource == "memory") return MemoryText(rng, amount);
  return std::to_string(amount);
}

}  // namespace

std::vector<QuotaPlan> RandomCluster::PlanQuotas() {
  std::vector<QuotaPlan> plans;
  children_.clear();
  const int roots = rng_.Between(1, options_.max_quota_namespaces);
  for (int i = 1; i <= roots; ++i) {
    const std::string ns = "q" + std::to_string(i);
    plans.push_back({ns, rng_.Chance(60) ? ns : "eq-" + ns, "", 0});
  }
  // Children, level by level: each quota of the level above gets 0-2 children.
  for (int depth = 1; depth < options_.quota_depth; ++depth) {
    const std::size_t count = plans.size();
    for (std::size_t p = 0; p < count; ++p) {
      if (plans[p].depth != depth - 1) continue;
      const std::string parent = plans[p].ns + "/" + plans[p].name;
      const int children = rng_.Between(0, 2);
      children_[parent] = children;
      for (int k = 1; k <= children; ++k) {
        const std::string ns = plans[p].ns + "-" + std::to_string(k);
        plans.push_back({ns, ns, parent, depth});
      }
    }
  }
  return plans;
}

QuotaLimits RandomCluster::RootLimits(int depth) {
  // A share of the cluster per quota (smaller for the duplicates drawn at depth 1).
  const int64_t divisor = int64_t{1} << depth;
  auto share = [&](int64_t total) {
    return std::max<int64_t>(1, total * rng_.Pick({10, 20, 30, 40, 60}) / 100 / divisor);
  };
  const QuotaLimits::Amounts mins = {
      {"cpu", share(std::max<int64_t>(total_cpu_, 1000)) / 100 * 100},
      {"memory", share(std::max<int64_t>(total_memory_, kGiB)) / kMiB * kMiB},
      {"pods", rng_.Between(1, 6)},
      {kGpu, std::max<int64_t>(1, total_gpu_ / 4)},
      {kGpuV100, 1}};
  auto max_of = [&](int64_t min) {
    if (rng_.Chance(4)) return std::max<int64_t>(1, min / 2);  // max below min (invalid, served)
    return min * rng_.Pick({1, 1, 2, 2, 3}) + (rng_.Chance(30) ? min / 2 : 0);
  };
  QuotaLimits limits;
  for (const bool is_max : {false, true}) {
    if (rng_.Chance(15)) continue;  // the list is absent
    QuotaLimits::Amounts list;
    auto maybe = [&](const std::string& resource, int percent) {
      if (!rng_.Chance(percent)) return;
      const int64_t min = mins.at(resource);
      list[resource] = is_max ? max_of(min) : min;
    };
    maybe("cpu", 90);
    // The reference compares memory whenever a list is present (an omitted memory = 0): name it
    // more often there, or nearly every pod would be rejected.
    maybe("memory", semantics_ == QuotaSemantics::kSchedulerPlugins ? 85 : 60);
    maybe("pods", 20);
    maybe(kGpu, 25);
    if (!accelerator_annotation_.empty()) maybe(kGpuV100, 50);
    (is_max ? limits.max : limits.min) = std::move(list);
  }
  return limits;
}

QuotaLimits RandomCluster::ChildLimits(const QuotaLimits& parent, int siblings) {
  QuotaLimits limits;
  // Mins: a part of each of the parent's, at most half of it over all siblings. A parent
  // without a min list has a min of 0 in everything: its children name none.
  if (parent.min && rng_.Chance(90)) {
    limits.min.emplace();
    for (const auto& [resource, amount] : *parent.min) {
      if (rng_.Chance(80))
        (*limits.min)[resource] = amount * rng_.Pick({20, 30, 50}) / 100 / siblings;
    }
  }
  // Maxes: within the parent's where it has one, anything (unbounded above) where it has none.
  if (rng_.Chance(85)) {
    limits.max.emplace();
    const QuotaLimits root = RootLimits(0);
    const QuotaLimits::Amounts& bounds =
        parent.max ? *parent.max : root.max.value_or(QuotaLimits::Amounts{});
    for (const auto& [resource, amount] : bounds) {
      if (!rng_.Chance(80)) continue;
      int64_t max = parent.max ? amount * rng_.Pick({50, 80, 100}) / 100 : amount;
      if (limits.min && limits.min->count(resource) != 0) {
        // Never below the child's own min, nor above the parent's max.
        max = std::max(max, limits.min->at(resource));
        if (parent.max) max = std::min(max, amount);
      }
      (*limits.max)[resource] = max;
    }
  }
  return limits;
}

JsonTree RandomCluster::NewQuota(const QuotaPlan& plan) {
  QuotaLimits limits;
  if (auto parent = limits_.find(plan.parent); !plan.parent.empty() && parent != limits_.end()) {
    limits = ChildLimits(parent->second, std::max(1, children_[plan.parent]));
  } else {
    limits = RootLimits(plan.depth);
  }
  limits_[plan.ns + "/" + plan.name] = limits;

  JsonTree eq = JsonTree::Object();
  eq["apiVersion"] =
      rng_.Chance(80) ? "scheduling.x-k8s.io/v1alpha1" : "scheduling.sigs.k8s.io/v1alpha1";
  eq["kind"] = "ElasticQuota";
  eq["metadata"]["name"] = plan.name;
  eq["metadata"]["namespace"] = plan.ns;
  if (!plan.parent.empty()) eq["metadata"]["annotations"][kParentQuotaAnnotation] = plan.parent;
  for (const auto& [key, list] : {std::pair{"min", &limits.min}, std::pair{"max", &limits.max}}) {
    if (!list->has_value()) continue;
    JsonTree& out = eq["spec"][key] = JsonTree::Object();
    for (const auto& [resource, amount] : **list)
      out[resource] = AmountText(rng_, resource, amount);
  }
  if (rng_.Chance(10)) eq["status"]["used"]["cpu"] = "1";  // stale status: never read for usage
  return eq;
}

}  // namespace capext::testing
