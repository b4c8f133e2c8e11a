// GET /quotas and the quota gauges of /metrics: every quota with min, max, used, reserved,
// borrowed (used above min) and lendable (min not used), for the resources it governs; and its
// fair-share weight, share and fairShare (docs/fair-sharing.md#8-where-a-user-sees-it).
#include <fmt/format.h>

#include "core/fair_share.h"
#include "core/fair_share_weight.h"
#include "core/quantity.h"
#include "extender/verbs/extender_service.h"
#include "policies/policies.h"

namespace capext {
namespace {

// The resources a quota shows: the names in its min or max, plus those the quota arithmetic
// compares for every quota (cpu, memory and ephemeral-storage under scheduler-plugins).
std::vector<ResourceName> ShownResources(QuotaSemantics semantics, const ElasticQuota& q) {
  std::vector<ResourceName> names;
  auto add = [&](ResourceName n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  if (q.min)
    for (const auto& e : q.min->entries())
      add(e.first);
  if (q.max)
    for (const auto& e : q.max->entries())
      add(e.first);
  for (ResourceName n : semantics->AlwaysCompared())
    add(n);
  std::sort(names.begin(), names.end());
  return names;
}

void WriteList(JsonWriter& w, const char* key, const std::vector<ResourceName>& names,
               const std::function<std::optional<int64_t>(ResourceName)>& amount) {
  w.Key(key);
  w.StartObject();
  for (const ResourceName n : names) {
    auto a = amount(n);
    if (!a) continue;
    const std::string text = QuantityFromDecisionAmount(n, *a).ToString();
    w.Key(n.str().data(), static_cast<rapidjson::SizeType>(n.str().size()));
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
  }
  w.EndObject();
}

}  // namespace

http::Response ExtenderService::Quotas() const {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  cache_->Read([&](const ClusterState& state) {
    w.StartObject();
    w.Key("quotaSemantics");
    const std::string_view semantics = QuotaSemanticsName(state.semantics());
    w.String(semantics.data(), static_cast<rapidjson::SizeType>(semantics.size()));
    w.Key("quotas");
    w.StartArray();
    const QuotaTree& tree = state.ledger().tree();
    const FairShareModel model(state);
    const std::vector<NodeFairness> fairness = ComputeFairness(state, model);
    // Named references, not a structured binding: the lambdas below use them, and clang before 16
    // cannot capture a structured binding (test.sh's ASan+UBSan build uses clang 14).
    for (const auto& entry : state.quota_set().quotas()) {
      const auto& ns = entry.first;
      const auto& q = entry.second;
      const auto names = ShownResources(state.semantics(), q);
      const int node = tree.QuotaNodeOf(ns);
      // used is the subtree's (its own namespace plus its children's used); without children
      // it is the namespace's.
      const ResourceList& used = state.ledger().NodeUsed(node);
      const ResourceList& own_used = state.Used(ns);
      const ResourceList& reserved = state.ledger().Reserved(ns);
      auto min_of = [&](ResourceName n) { return q.min ? q.min->Get(n) : 0; };
      w.StartObject();
      w.Key("namespace");
      w.String(ns.c_str());
      w.Key("name");
      w.String(q.name.c_str());
      w.Key("parent");
      if (tree.parent(node) < 0) {
        w.Null();
      } else {
        w.String(tree.quota(tree.parent(node)).Key().c_str());
      }
      w.Key("children");
      w.StartArray();
      for (int child : tree.children(node)) {
        if (!tree.is_own(child)) w.String(tree.quota(child).Key().c_str());
      }
      w.EndArray();
      WriteList(w, "min", names, [&](ResourceName n) -> std::optional<int64_t> {
        return q.min ? q.min->Find(n) : std::nullopt;
      });
      WriteList(w, "max", names, [&](ResourceName n) -> std::optional<int64_t> {
        return q.max ? q.max->Find(n) : std::nullopt;
      });
      WriteList(w, "used", names, [&](ResourceName n) { return used.Get(n); });
      WriteList(w, "namespaceUsed", names, [&](ResourceName n) { return own_used.Get(n); });
      WriteList(w, "reserved", names, [&](ResourceName n) { return reserved.Get(n); });
      WriteList(w, "borrowed", names,
                [&](ResourceName n) { return std::max<int64_t>(0, used.Get(n) - min_of(n)); });
      WriteList(w, "lendable", names,
                [&](ResourceName n) { return std::max<int64_t>(0, min_of(n) - used.Get(n)); });
      w.Key("borrowing");
      w.Bool(IsBorrowing(state.semantics(), q, used));
      const NodeFairness& fair = fairness[static_cast<std::size_t>(node)];
      w.Key("weight");
      w.String(FormatWeight(fair.weight_milli).c_str());
      if (!q.weight_problem.empty()) {
        w.Key("weightProblem");
        w.String(q.weight_problem.c_str());
      }
      w.Key("share");
      w.String(fair.share.ToString().c_str());
      WriteList(w, "fairShare", names,
                [&](ResourceName n) -> std::optional<int64_t> { return fair.fair_share.Find(n); });
      w.EndObject();
    }
    w.EndArray();
    w.Key("duplicates");
    w.StartArray();
    for (const auto& d : state.quota_set().duplicates()) {
      const std::string key = d.Key();
      w.String(key.c_str());
    }
    w.EndArray();
    w.EndObject();
    return 0;
  });
  return {200, "application/json", std::string(buffer.GetString(), buffer.GetSize()), {}};
}

std::string ExtenderService::QuotaGauges() const {
  std::string out;
  out += "# HELP capacity_extender_quota_used Usage of each ElasticQuota (bound + reserved).\n";
  out += "# TYPE capacity_extender_quota_used gauge\n";
  std::string min_lines, max_lines, weight_lines, share_lines, fair_lines;
  cache_->Read([&](const ClusterState& state) {
    const QuotaTree& tree = state.ledger().tree();
    const FairShareModel model(state);
    const std::vector<NodeFairness> fairness = ComputeFairness(state, model);
    for (const auto& [ns, q] : state.quota_set().quotas()) {
      // used is the subtree's: sum only the roots (parent="") for cluster totals.
      const int node = tree.QuotaNodeOf(ns);
      const ResourceList& used = state.ledger().NodeUsed(node);
      const std::string parent = tree.parent(node) < 0 ? "" : tree.quota(tree.parent(node)).Key();
      const NodeFairness& fair = fairness[static_cast<std::size_t>(node)];
      weight_lines +=
          fmt::format("capacity_extender_quota_weight{{namespace=\"{}\",parent=\"{}\"}} {}\n", ns,
                      parent, FormatWeight(fair.weight_milli));
      share_lines += fmt::format(
          "capacity_extender_quota_share{{namespace=\"{}\",parent=\"{}\"}} {}\n", ns, parent,
          fair.share.infinite ? std::string("+Inf") : fmt::format("{}", fair.share.value));
      for (const auto& [n, amount] : fair.fair_share.entries()) {
        fair_lines += fmt::format(
            "capacity_extender_quota_fair_share{{namespace=\"{}\",parent=\"{}\",resource=\"{}\"}} "
            "{}\n",
            ns, parent, n, amount);
      }
      for (const ResourceName n : ShownResources(state.semantics(), q)) {
        out += fmt::format(
            "capacity_extender_quota_used{{namespace=\"{}\",parent=\"{}\",resource=\"{}\"}} {}\n",
            ns, parent, n, used.Get(n));
        if (q.min && q.min->Has(n)) {
          min_lines += fmt::format(
              "capacity_extender_quota_min{{namespace=\"{}\",parent=\"{}\",resource=\"{}\"}} {}\n",
              ns, parent, n, q.min->Get(n));
        }
        if (q.max && q.max->Has(n)) {
          max_lines += fmt::format(
              "capacity_extender_quota_max{{namespace=\"{}\",parent=\"{}\",resource=\"{}\"}} {}\n",
              ns, parent, n, q.max->Get(n));
        }
      }
    }
    return 0;
  });
  out +=
      "# HELP capacity_extender_quota_min Guaranteed amount (spec.min), decision units (cpu in "
      "millicores).\n";
  out += "# TYPE capacity_extender_quota_min gauge\n" + min_lines;
  out +=
      "# HELP capacity_extender_quota_max Ceiling (spec.max), decision units (cpu in "
      "millicores).\n";
  out += "# TYPE capacity_extender_quota_max gauge\n" + max_lines;
  out += "# HELP capacity_extender_quota_weight Fair-share weight (docs/fair-sharing.md).\n";
  out += "# TYPE capacity_extender_quota_weight gauge\n" + weight_lines;
  out +=
      "# HELP capacity_extender_quota_share Weighted dominant share of the borrowed capacity "
      "among its siblings.\n";
  out += "# TYPE capacity_extender_quota_share gauge\n" + share_lines;
  out +=
      "# HELP capacity_extender_quota_fair_share Borrowed amount under a split by weight, "
      "decision units.\n";
  out += "# TYPE capacity_extender_quota_fair_share gauge\n" + fair_lines;
  return out;
}

}  // namespace capext
