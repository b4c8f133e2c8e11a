#include "bench/report/sim_report_json.h"

#include "bench/report/fairness_summary.h"
#include "bench/report/report_json_writer.h"
#include "bench/report/sim_quota_tree.h"
#include "bench/report/sim_quota_tree_json.h"
#include "bench/report/sim_summary.h"

namespace capext {
namespace {

using namespace report_json;

// The report's `groups` members (only for workloads with pod groups: others keep their report
// byte for byte).
void Groups(Writer& w, const GroupSummary& g) {
  Key(w, "groups");
  w.StartObject();
  Int(w, "submitted", g.submitted);
  Int(w, "started", g.started);
  Int(w, "ever_partially_running", g.ever_partial);
  Int(w, "partially_running_at_end", g.partial_at_end);
  Num(w, "partially_running_core_hours", g.partial_core_hours);
  Num(w, "partially_running_gpu_hours", g.partial_gpu_hours);
  Key(w, "time_to_start_seconds");
  w.StartObject();
  Int(w, "count", g.time_to_start.count);
  Num(w, "mean", g.time_to_start.mean_s);
  Num(w, "p50", g.time_to_start.p50_s);
  Num(w, "p95", g.time_to_start.p95_s);
  Num(w, "max", g.time_to_start.max_s);
  w.EndObject();
  Int(w, "member_evictions", g.member_evictions);
  Num(w, "evictions_per_start", g.evictions_per_start);
  w.EndObject();
}

void Definitions(Writer& w, bool groups) {
  Key(w, "definitions");
  w.StartObject();
  const std::pair<const char*, const char*> defs[] = {
      {"run", "pods that started at least once (including those later evicted)"},
      {"pending", "pods that never started and were still waiting at the end"},
      {"rejected",
       "pods that could never start: request above the quota's max (by_quota) or "
       "above every node's allocatable (by_nodes)"},
      {"wait_seconds",
       "first start minus arrival, over pods that started (nearest-rank quantiles)"},
      {"evictions",
       "suffered: this tenant's pods evicted; caused: evictions made for this tenant's pods"},
      {"below_guarantee_with_pending_seconds",
       "time with pending pods while used < min in a resource those pods request (plan's min)"},
      {"borrowed_core_hours", "integral of max(0, used cpu - min cpu) over time (plan's min)"},
      {"utilisation", "requested / allocatable over all nodes, sampled at timeline points"},
  };
  for (const auto& [k, v] : defs) {
    w.Key(k);
    w.String(v);
  }
  if (groups) {
    w.Key("groups");
    w.String(
        "pod groups with minMember >= 2: started = reached minMember running members once; "
        "partially running = 1 <= running members < minMember while the run is not finishing "
        "(finishing: a member has completed since minMember ran at once), and the core/GPU-hours "
        "those members hold meanwhile; time to start = started - arrival; evictions per start = "
        "member evictions / groups started");
  }
  w.EndObject();
}

void Tenant(Writer& w, const TenantSummary& s, const TenantPlanView* plan, bool groups) {
  w.StartObject();
  Key(w, "name");
  Str(w, s.name);
  if (plan != nullptr) {
    Key(w, "quota");
    w.StartObject();
    Key(w, "in_plan");
    w.Bool(plan->in_plan);
    Key(w, "enforced");
    w.Bool(plan->enforced);
    if (plan->min) {
      Key(w, "min");
      Resources(w, *plan->min);
    }
    if (plan->max) {
      Key(w, "max");
      Resources(w, *plan->max);
    }
    if (plan->priority) Int(w, "priority", *plan->priority);
    if (!plan->parent.empty()) {
      Key(w, "parent");
      Str(w, plan->parent);
    }
    w.EndObject();
  }
  Key(w, "pods");
  w.StartObject();
  Int(w, "submitted", s.submitted);
  Int(w, "run", s.run);
  Int(w, "pending", s.pending);
  Int(w, "rejected", s.rejected);
  Int(w, "rejected_by_quota", s.rejected_by_quota);
  Int(w, "rejected_by_nodes", s.rejected_by_nodes);
  Int(w, "completed", s.completed);
  Int(w, "running_at_end", s.running_at_end);
  Int(w, "evicted", s.evicted_pods);
  Int(w, "resubmitted", s.resubmitted);
  Int(w, "requeued_at_end", s.requeued_at_end);
  w.EndObject();
  Key(w, "wait_seconds");
  w.StartObject();
  Int(w, "count", s.wait.count);
  Num(w, "mean", s.wait.mean_s);
  Num(w, "p50", s.wait.p50_s);
  Num(w, "p95", s.wait.p95_s);
  Num(w, "p99", s.wait.p99_s);
  Num(w, "max", s.wait.max_s);
  w.EndObject();
  Key(w, "evictions");
  w.StartObject();
  Int(w, "suffered", s.evictions_suffered);
  Int(w, "caused", s.evictions_caused);
  w.EndObject();
  Num(w, "below_guarantee_with_pending_seconds", s.below_guarantee_with_pending_s);
  Num(w, "borrowed_core_hours", s.borrowed_core_hours);
  Num(w, "used_core_hours", s.used_core_hours);
  Num(w, "used_gpu_hours", s.used_gpu_hours);
  if (groups) Groups(w, s.groups);
  w.EndObject();
}

double Fraction(int64_t used, int64_t total) {
  return total > 0 ? static_cast<double>(used) / static_cast<double>(total) : 0.0;
}

void Cluster(Writer& w, const SimulationResult& r, bool with_timeline) {
  Key(w, "cluster");
  w.StartObject();
  Int(w, "nodes", r.nodes);
  Key(w, "allocatable");
  w.StartObject();
  Num(w, "cpu_cores", static_cast<double>(r.allocatable_cpu) / 1000.0);
  Num(w, "memory_gib", static_cast<double>(r.allocatable_memory) / (1024.0 * 1024 * 1024));
  Num(w, "gpus", static_cast<double>(r.allocatable_gpu) / static_cast<double>(r.gpu_scale));
  Key(w, "gpu_resource");
  Str(w, r.gpu_resource);
  w.EndObject();
  Key(w, "utilisation");
  w.StartObject();
  const double span = static_cast<double>(std::max<int64_t>(1, r.end_ms));
  auto dim_of = [&](const std::string& name) {
    for (std::size_t d = 0; d < r.dims.size(); ++d) {
      if (r.dims[d] == name) return static_cast<int>(d);
    }
    return -1;
  };
  const std::pair<const char*, std::pair<int, int64_t>> dims[] = {
      {"cpu", {dim_of("cpu"), r.allocatable_cpu}},
      {"memory", {dim_of("memory"), r.allocatable_memory}},
      {"gpu", {r.gpu_resource.empty() ? -1 : dim_of(r.gpu_resource), r.allocatable_gpu}}};
  for (const char* which : {"mean", "peak"}) {
    Key(w, which);
    w.StartObject();
    for (const auto& [name, dim] : dims) {
      const auto [d, total] = dim;
      if (d < 0 || total <= 0) continue;
      const double v = std::string(which) == "mean"
                           ? static_cast<double>(r.metrics.cluster_used_ms()[d]) / span /
                                 static_cast<double>(total)
                           : Fraction(r.metrics.cluster_peak()[d], total);
      Num(w, name, v);
    }
    w.EndObject();
  }
  if (with_timeline) {
    Key(w, "timeline");
    w.StartObject();
    Num(w, "interval_seconds", static_cast<double>(r.metrics.sample_interval_ms()) / 1000.0);
    Key(w, "t_seconds");
    w.StartArray();
    for (const auto& p : r.metrics.timeline())
      w.Double(static_cast<double>(p.t_ms) / 1000.0);
    w.EndArray();
    const std::pair<const char*, int64_t TimelinePoint::*> series[] = {
        {"cpu", &TimelinePoint::cluster_cpu},
        {"memory", &TimelinePoint::cluster_memory},
        {"gpu", &TimelinePoint::cluster_gpu}};
    for (std::size_t i = 0; i < 3; ++i) {
      const int64_t total = dims[i].second.second;
      if (dims[i].second.first < 0 || total <= 0) continue;
      Key(w, series[i].first);
      w.StartArray();
      for (const auto& p : r.metrics.timeline())
        w.Double(Fraction(p.*(series[i].second), total));
      w.EndArray();
    }
    w.EndObject();  // timeline
  }
  w.EndObject();  // utilisation
  w.EndObject();  // cluster
}

void Engine(Writer& w, const SimulationResult& r) {
  Key(w, "engine");
  w.StartObject();
  Int(w, "decisions", r.decisions);
  Int(w, "binds", r.binds);
  Int(w, "failed_attempts", r.failed_attempts);
  Int(w, "reclaim_attempts", r.reclaim_attempts);
  Int(w, "reclaim_nodes_examined", r.reclaim_nodes_examined);
  Int(w, "reclaim_candidates", r.reclaim_candidates);
  Int(w, "reclaims", r.reclaims);
  Int(w, "evictions", r.evictions);
  Int(w, "fair_evictions", r.fair_evictions);
  Num(w, "end_seconds", static_cast<double>(r.end_ms) / 1000.0);
  w.EndObject();
}

void Timing(Writer& w, const SimulationResult& r) {
  Key(w, "timing");
  w.StartObject();
  Num(w, "engine_wall_seconds", r.engine_seconds);
  Num(w, "engine_cpu_seconds", r.engine_cpu_seconds);
  Num(w, "decisions_per_second",
      r.engine_seconds > 0 ? static_cast<double>(r.decisions) / r.engine_seconds : 0);
  w.EndObject();
}

void Invariants(Writer& w, const std::vector<TenantSummary>& summary) {
  bool ok = true;
  for (const auto& s : summary)
    ok = ok && s.run + s.pending + s.rejected == s.submitted;
  Key(w, "invariants");
  w.StartObject();
  Key(w, "run_plus_pending_plus_rejected_equals_submitted");
  w.Bool(ok);
  w.EndObject();
}

// docs/fair-sharing.md: how the borrowed cpu was shared (fairness_summary.h); only when weights or
// the fair policy are in play.
void Fairness(Writer& w, const SimulationResult& r, bool full) {
  const FairnessSummary f = SummarizeFairness(r);
  if (!f.applies) return;
  Key(w, "fairness");
  w.StartObject();
  Num(w, "jain_index_weighted_borrowed_cpu", f.jain_mean);
  Int(w, "jain_points", f.points);
  Key(w, "tenants");
  w.StartArray();
  for (const auto& t : f.tenants) {
    w.StartObject();
    Key(w, "name");
    Str(w, t.name);
    Num(w, "weight", static_cast<double>(t.weight_milli) / 1000.0);
    Num(w, "borrowed_share_mean", t.borrowed_share_mean);
    Num(w, "weight_proportion", t.weight_proportion);
    if (full) {
      Key(w, "borrowed_share_over_time");
      w.StartArray();
      for (double v : t.borrowed_share)
        w.Double(v);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void Body(Writer& w, const SimulationResult& r, const ReportContext& c, bool full) {
  Key(w, "policy");
  Str(w, r.policy);
  const std::vector<TenantSummary> summary = Summarize(r);
  Cluster(w, r, full);
  Engine(w, r);
  if (c.include_timing) Timing(w, r);
  Key(w, "totals");
  Tenant(w, summary.back(), nullptr, r.group_count > 0);
  Key(w, "tenants");
  w.StartArray();
  for (std::size_t i = 0; i + 1 < summary.size(); ++i)
    Tenant(w, summary[i], &r.tenants[i], r.group_count > 0);
  w.EndArray();
  // Only for a plan with parents: flat plans keep their report byte for byte.
  if (const PlanTreeView tree = BuildQuotaTree(r); !tree.empty()) QuotaTreeJson(w, r, tree, full);
  Fairness(w, r, full);
  Invariants(w, summary);
}

void Header(Writer& w, const char* schema, const ReportContext& c,
            const std::vector<std::string>& notes, bool groups) {
  Key(w, "schema");
  w.String(schema);
  Key(w, "workload");
  w.StartObject();
  Key(w, "source");
  Str(w, c.workload_source);
  Int(w, "pods", c.workload_pods);
  Key(w, "notes");
  w.StartArray();
  for (const auto& n : notes)
    Str(w, n);
  w.EndArray();
  w.EndObject();
  Key(w, "options");
  w.StartObject();
  for (const auto& [k, v] : c.options) {
    Str(w, k);
    Str(w, v);
  }
  w.EndObject();
  Definitions(w, groups);
}

std::string Finish(rapidjson::StringBuffer& buffer) {
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace

std::string ReportJson(const SimulationResult& r, const ReportContext& c) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 2);
  w.SetMaxDecimalPlaces(4);
  w.StartObject();
  Header(w, "capacity-sim/report/v1", c, r.notes, r.group_count > 0);
  Body(w, r, c, true);
  w.EndObject();
  return Finish(buffer);
}

std::string CompareJson(const std::vector<SimulationResult>& results, const ReportContext& c) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 2);
  w.SetMaxDecimalPlaces(4);
  w.StartObject();
  bool groups = false;
  for (const auto& r : results)
    groups = groups || r.group_count > 0;
  Header(w, "capacity-sim/compare/v1", c,
         results.empty() ? std::vector<std::string>() : results[0].notes, groups);
  Key(w, "policies");
  w.StartArray();
  for (const auto& r : results)
    Str(w, r.policy);
  w.EndArray();
  Key(w, "results");
  w.StartArray();
  for (const auto& r : results) {
    w.StartObject();
    Body(w, r, c, false);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Finish(buffer);
}

std::string PerfJson(const std::vector<SimulationResult>& results, double total_wall_seconds) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 2);
  w.SetMaxDecimalPlaces(6);
  w.StartObject();
  Num(w, "total_wall_seconds", total_wall_seconds);
  Key(w, "runs");
  w.StartArray();
  for (const auto& r : results) {
    w.StartObject();
    Key(w, "policy");
    Str(w, r.policy);
    Int(w, "nodes", r.nodes);
    Int(w, "decisions", r.decisions);
    Num(w, "engine_wall_seconds", r.engine_seconds);
    Num(w, "engine_cpu_seconds", r.engine_cpu_seconds);
    Num(w, "decisions_per_second",
        r.engine_seconds > 0 ? static_cast<double>(r.decisions) / r.engine_seconds : 0);
    Num(w, "decisions_per_cpu_second",
        r.engine_cpu_seconds > 0 ? static_cast<double>(r.decisions) / r.engine_cpu_seconds : 0);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Finish(buffer);
}

}  // namespace capext
