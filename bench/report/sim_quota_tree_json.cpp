#include "bench/report/sim_quota_tree_json.h"

namespace capext {
namespace {

using namespace report_json;

// The reported resources: (JSON name, which) with "which" as sim_quota_tree.h takes it.
std::vector<std::pair<const char*, const char*>> Reported(const SimulationResult& r) {
  std::vector<std::pair<const char*, const char*>> out = {{"cpu_cores", "cpu"},
                                                          {"memory_gib", "memory"}};
  if (!r.gpu_resource.empty()) out.emplace_back("gpus", "gpu");
  return out;
}

void Definitions(Writer& w) {
  Key(w, "definitions");
  w.StartObject();
  const std::pair<const char*, const char*> defs[] = {
      {"used",
       "the quota's subtree usage: its own namespace's plus its children's used, at the "
       "timeline samples"},
      {"mean", "average over the timeline samples"},
      {"samples_above_min", "timeline samples at which used exceeded the quota's min (borrowing)"},
      {"samples_above_max",
       "timeline samples at which used exceeded the quota's max (0 when the policy enforces the "
       "hierarchy)"},
  };
  for (const auto& [k, v] : defs) {
    w.Key(k);
    w.String(v);
  }
  w.EndObject();
}

void Quota(Writer& w, const SimulationResult& r, const PlanTreeView& tree,
           const QuotaTreeNode& node, bool with_timeline) {
  const TenantPlanView& plan = r.tenants[node.tenant];
  w.StartObject();
  Key(w, "name");
  Str(w, plan.name);
  Key(w, "parent");
  Str(w, node.parent ? r.tenants[tree.nodes[*node.parent].tenant].name : std::string());
  Int(w, "level", node.level);
  Key(w, "children");
  w.StartArray();
  for (std::size_t c : node.children)
    Str(w, r.tenants[tree.nodes[c].tenant].name);
  w.EndArray();
  if (plan.min) {
    Key(w, "min");
    Resources(w, *plan.min);
  }
  if (plan.max) {
    Key(w, "max");
    Resources(w, *plan.max);
  }
  Key(w, "used");
  w.StartObject();
  for (const auto& [name, which] : Reported(r)) {
    const LevelUsage u = UsageOf(r, node, which);
    Key(w, name);
    w.StartObject();
    Num(w, "peak", u.peak);
    Num(w, "mean", u.mean);
    Int(w, "samples_above_min", u.samples_above_min);
    Int(w, "samples_above_max", u.samples_above_max);
    w.EndObject();
  }
  w.EndObject();
  if (with_timeline) {
    Key(w, "timeline");
    w.StartObject();
    for (const auto& [name, which] : Reported(r)) {
      const std::vector<int64_t>& series = UsedSeries(node, which);
      const double scale = ReportScale(r, which);
      Key(w, name);
      w.StartArray();
      for (int64_t v : series)
        w.Double(static_cast<double>(v) / scale);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace

void QuotaTreeJson(Writer& w, const SimulationResult& r, const PlanTreeView& tree,
                   bool with_timeline) {
  Key(w, "hierarchy");
  w.StartObject();
  Definitions(w);
  Int(w, "levels", tree.levels);
  Key(w, "quotas");
  w.StartArray();
  for (const QuotaTreeNode& node : tree.nodes)
    Quota(w, r, tree, node, with_timeline);
  w.EndArray();
  w.EndObject();
}

}  // namespace capext
