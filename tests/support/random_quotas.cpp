// RandomCluster: ElasticQuotas, flat or as a forest (docs/quota-hierarchy.md). Roots get limits
// around the cluster's size (the sum of mins sometimes binding, sometimes not; lists absent or
// partial; now and then a max below its min, which the API server would admit without our
// webhook). Children name their parent with kParentQuotaAnnotation; their mins take shares of the
// parent's min that sum to at most all of it (exactly all of it in some families), and their
// maxes mostly stay within the parent's, sometimes above it (validation warns; the parent caps the
// child anyway). Parents govern a namespace with pods of their own or group only. One parent of a
// forest is sometimes invalid: missing, the quota itself, a cycle, or the other API group.
#include <algorithm>

#include "core/elastic_quota.h"
#include "tests/support/quantity_text.h"
#include "tests/support/random_cluster.h"

namespace capext::testing {
namespace {

const char* const kGpu = "nvidia.com/gpu";
const char* const kGpuV100 = "nvidia.com/gpu.V100";
const char* const kGroupX = "scheduling.x-k8s.io";
const char* const kGroupSigs = "scheduling.sigs.k8s.io";
// Quotas of a forest at most (the first quota of each level always gets a child, so the drawn
// depth is reached).
constexpr int kMaxForestQuotas = 14;

std::string AmountText(SeededRandom& rng, const std::string& resource, int64_t amount) {
  if (resource == "cpu") return CpuText(rng, amount);
  if (resource == "memory") return MemoryText(rng, amount);
  return std::to_string(amount);
}

// The planned quota whose key is `key`, or nullptr.
PlannedQuota* FindPlan(std::vector<PlannedQuota>* plans, const std::string& key) {
  for (PlannedQuota& p : *plans) {
    if (p.Key() == key) return &p;
  }
  return nullptr;
}

}  // namespace

std::vector<PlannedQuota> RandomCluster::PlanQuotas() {
  std::vector<PlannedQuota> plans;
  const bool forest = options_.max_quota_depth > 1 && rng_.Chance(options_.tree_percent);
  forest_ = forest;
  const int depth = forest ? rng_.Between(2, options_.max_quota_depth) : 1;
  const int roots = rng_.Between(1, forest ? 2 : options_.max_quota_namespaces);
  for (int i = 1; i <= roots; ++i) {
    const std::string ns = "q" + std::to_string(i);
    PlannedQuota root;
    root.ns = ns;
    root.name = rng_.Chance(60) ? ns : "eq-" + ns;
    root.api_group = rng_.Chance(80) ? kGroupX : kGroupSigs;
    root.light = forest && rng_.Chance(50);
    plans.push_back(std::move(root));
  }
  // Children, level by level.
  for (int level = 1; level < depth; ++level) {
    const std::size_t count = plans.size();
    bool first = true;
    for (std::size_t p = 0; p < count; ++p) {
      if (plans[p].depth != level - 1) continue;
      const int room = kMaxForestQuotas - static_cast<int>(plans.size());
      const int children = first ? rng_.Between(1, 3) : std::min(room, rng_.Between(0, 2));
      first = false;
      if (children <= 0) continue;
      plans[p].grouping = rng_.Chance(45);
      // The children's shares of the parent's min: all of it (split exactly), or part of it.
      const bool exact = rng_.Chance(35);
      int left = exact ? 100 : rng_.Between(50, 95);
      for (int k = 1; k <= children; ++k) {
        PlannedQuota child;
        child.ns = plans[p].ns + "-" + std::to_string(k);
        child.name = child.ns;
        child.api_group = plans[p].api_group;
        child.parent = plans[p].Key();
        child.depth = level;
        child.exact_split = exact;
        child.light = rng_.Chance(80) ? plans[p].light : !plans[p].light;
        if (k == children) {
          child.min_percent = exact ? -1 : rng_.Between(0, left);
        } else {
          child.min_percent = rng_.Between(0, left);
          left -= child.min_percent;
        }
        plans.push_back(std::move(child));
      }
    }
  }
  if (forest && rng_.Chance(options_.invalid_parent_percent)) BreakAParent(&plans);
  return plans;
}

void RandomCluster::BreakAParent(std::vector<PlannedQuota>* plans) {
  std::vector<std::size_t> children;
  for (std::size_t i = 0; i < plans->size(); ++i) {
    if (!(*plans)[i].parent.empty()) children.push_back(i);
  }
  PlannedQuota& child = (*plans)[rng_.Pick(children)];
  switch (rng_.Below(4)) {
    case 0:  // a parent that does not exist
      child.parent = rng_.Chance(50) ? child.parent.substr(0, child.parent.find('/')) + "/gone"
                                     : "nowhere/nothing";
      break;
    case 1:  // the quota itself
      child.parent = child.Key();
      break;
    case 2: {  // a cycle: the child's root names the child
      PlannedQuota* root = &child;
      while (!root->parent.empty()) {
        PlannedQuota* up = FindPlan(plans, root->parent);
        if (up == nullptr) break;
        root = up;
      }
      root->parent = child.Key();
      break;
    }
    default:  // the other API group than its parent's (and its own children's)
      child.api_group = child.api_group == kGroupX ? kGroupSigs : kGroupX;
  }
}

QuotaLimits RandomCluster::RootLimits(int depth) {
  // A share of the cluster per quota (smaller for the duplicates drawn at depth 1). A forest's
  // one or two roots share the cluster among many namespaces: their shares are larger, or their
  // deeper quotas' mins would be too small for any pod to be within them.
  const int64_t divisor = int64_t{1} << depth;
  const int percent = forest_ ? rng_.Pick({30, 50, 70, 90}) : rng_.Pick({10, 20, 30, 40, 60});
  auto share = [&](int64_t total) { return std::max<int64_t>(1, total * percent / 100 / divisor); };
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

QuotaLimits RandomCluster::ChildLimits(const PlannedQuota& plan, const QuotaLimits& parent) {
  QuotaLimits limits;
  // Mins: the plan's share of each of the parent's (a parent without a min list has a min of 0
  // in everything: its children name none). In an exact split every child names every resource
  // and the last one gets what its siblings left.
  if (parent.min && (plan.exact_split || rng_.Chance(90))) {
    QuotaLimits::Amounts& left = min_left_.try_emplace(plan.parent, *parent.min).first->second;
    limits.min.emplace();
    for (const auto& [resource, amount] : *parent.min) {
      if (!plan.exact_split && !rng_.Chance(80)) continue;
      int64_t& rest = left[resource];
      const int64_t min =
          plan.min_percent < 0 ? rest : std::min(rest, amount * plan.min_percent / 100);
      rest -= min;
      (*limits.min)[resource] = min;
    }
  }
  // Maxes: mostly within the parent's where it has one (sometimes above it: a warning), anything
  // (unbounded above) where it has none.
  if (rng_.Chance(88)) {
    limits.max.emplace();
    const QuotaLimits root = RootLimits(0);
    const QuotaLimits::Amounts& bounds =
        parent.max ? *parent.max : root.max.value_or(QuotaLimits::Amounts{});
    for (const auto& [resource, amount] : bounds) {
      if (!rng_.Chance(85)) continue;
      int64_t max = amount;
      if (parent.max) {
        max = rng_.Chance(10) ? amount * rng_.Pick({120, 150, 200}) / 100
                              : amount * rng_.Pick({40, 60, 80, 100, 100}) / 100;
      }
      // Mostly not below the child's own min.
      if (limits.min && limits.min->count(resource) != 0 && !rng_.Chance(3))
        max = std::max(max, limits.min->at(resource));
      (*limits.max)[resource] = std::max<int64_t>(max, amount > 0 ? 1 : 0);
    }
  }
  return limits;
}

JsonTree RandomCluster::NewQuota(const PlannedQuota& plan) {
  QuotaLimits limits;
  if (auto parent = limits_.find(plan.parent); !plan.parent.empty() && parent != limits_.end()) {
    limits = ChildLimits(plan, parent->second);
  } else {
    limits = RootLimits(plan.depth);
  }
  limits_[plan.Key()] = limits;

  JsonTree eq = JsonTree::Object();
  eq["apiVersion"] = (plan.api_group.empty() ? kGroupX : plan.api_group) + "/v1alpha1";
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

JsonTree RandomCluster::ChangedQuota(const std::string& ns) {
  PlannedQuota plan;
  plan.ns = plan.name = ns;
  for (const PlannedQuota& p : plans_) {
    if (p.ns == ns) {
      plan = p;
      break;
    }
  }
  if (rng_.Chance(20)) {
    // Moved: under another quota (a cycle now and then), or made a root.
    plan.parent = plans_.empty() || rng_.Chance(40) ? "" : rng_.Pick(plans_).Key();
  }
  // Its share is drawn afresh from the whole of the parent's min (the siblings' sum may go above
  // it: validation would refuse, the runtime must cope).
  min_left_.erase(plan.parent);
  return NewQuota(plan);
}

}  // namespace capext::testing
