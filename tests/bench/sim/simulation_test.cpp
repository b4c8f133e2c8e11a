// The discrete-event simulation on small hand-made clusters: borrowing and reclaim, static and
// none policies, eviction accounting with and without resubmission, script steps, and equality
// with a naive reference that retries every pending pod at every event.
#include "bench/sim/simulation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "bench/report/sim_summary.h"
#include "bench/sim/synthetic_workload.h"
#include "core/node_score.h"
#include "core/placement.h"
#include "policies/policies.h"

namespace capext {
namespace simulation_test {
namespace {

Node CpuNode(const std::string& name, int64_t cpu_milli) {
  Node n;
  n.name = name;
  n.allocatable.Set("cpu", cpu_milli);
  n.allocatable.Set("memory", int64_t{64} << 30);
  n.allocatable.Set("pods", 110);
  return n;
}

WorkloadPod PodOf(const std::string& name, const std::string& tenant, int64_t arrival_s,
                  int64_t duration_s, int64_t cpu_milli, int32_t priority = 0) {
  WorkloadPod p;
  p.name = name;
  p.tenant = tenant;
  p.arrival_ms = arrival_s * 1000;
  p.duration_ms = duration_s * 1000;
  p.priority = priority;
  p.requests.Set("cpu", cpu_milli);
  return p;
}

struct Events {
  std::vector<std::string> log;  // "t event pod node"
  std::function<void(const char*, const std::string&, const std::string&, int64_t)> Observer() {
    return [this](const char* e, const std::string& pod, const std::string& node, int64_t t) {
      log.push_back(std::to_string(t / 1000) + " " + e + " " + pod +
                    (node.empty() ? "" : " " + node));
    };
  }
  bool Has(const std::string& line) const {
    return std::find(log.begin(), log.end(), line) != log.end();
  }
};

// Two 4-cpu nodes; tenants a and b, each min 4 cpu / max 8 cpu. a fills the cluster at t=0
// (borrowing b's unused min); b asks for 2 cpu at t=10.
SimulationInput BorrowAndReclaimInput() {
  SimulationInput in;
  in.nodes = {CpuNode("n1", 4000), CpuNode("n2", 4000)};
  for (const char* t : {"a", "b"}) {
    in.plan.tenants[t] =
        TenantQuota{ResourceList{{"cpu", 4000}}, ResourceList{{"cpu", 8000}}, std::nullopt};
  }
  in.workload.source = "test";
  for (int i = 0; i < 4; ++i)
    in.workload.pods.push_back(PodOf("a-" + std::to_string(i), "a", 0, 100, 2000));
  in.workload.pods.push_back(PodOf("b-0", "b", 10, 50, 2000));
  return in;
}

SimulationResult Run(const SimulationInput& in, const std::string& policy, Events* events = nullptr,
                     bool resubmit = false) {
  SimulationOptions o;
  o.policy = policy;
  o.resubmit_evicted = resubmit;
  o.sample_interval_ms = 10'000;
  if (events != nullptr) o.observer = events->Observer();
  SimulationResult r;
  REQUIRE(RunSimulation(in, o, &r).ok());
  return r;
}

const TenantSummary& Tenant(const std::vector<TenantSummary>& s, const std::string& name) {
  for (const auto& t : s) {
    if (t.name == name) return t;
  }
  FAIL("no tenant " << name);
  return s.back();
}
// The answer points into `s`: a temporary summary would dangle before the first CHECK.
const TenantSummary& Tenant(std::vector<TenantSummary>&& s, const std::string& name) = delete;

TEST_CASE("a tenant within its min reclaims from a borrower", "[sim][engine]") {
  Events events;
  const SimulationResult r = Run(BorrowAndReclaimInput(), "capacity", &events);
  INFO(fmt::format("{}", fmt::join(events.log, "\n")));
  // Least important first among a's pods: equal priority, so the latest started; all started
  // at 0, so the reprieve order decides. Whichever it is, exactly one a pod goes.
  int evicted = 0;
  for (const auto& l : events.log)
    evicted += l.starts_with("10 evict a-") ? 1 : 0;
  CHECK(evicted == 1);
  CHECK((events.Has("10 bind b-0 n1") || events.Has("10 bind b-0 n2")));
  const auto s = Summarize(r);
  CHECK(Tenant(s, "a").evictions_suffered == 1);
  CHECK(Tenant(s, "a").evicted_pods == 1);
  CHECK(Tenant(s, "b").evictions_caused == 1);
  CHECK(Tenant(s, "a").run == 4);
  CHECK(Tenant(s, "a").completed == 3);  // the evicted pod is not resubmitted
  CHECK(Tenant(s, "b").wait.max_s == 0);
  // a used 8 cpu for 10 s, then 6 cpu (3 pods) until they ended at 100: 4*10 + 2*90 = 220
  // cpu-seconds above its min of 4.
  CHECK(Tenant(s, "a").borrowed_core_hours == Approx(220.0 / 3600.0));
  CHECK(r.end_ms == 100'000);
}

TEST_CASE("an evicted pod is resubmitted only when asked", "[sim][engine]") {
  Events events;
  const SimulationResult r = Run(BorrowAndReclaimInput(), "capacity", &events, /*resubmit=*/true);
  const auto s = Summarize(r);
  CHECK(Tenant(s, "a").resubmitted == 1);
  CHECK(Tenant(s, "a").run == 4);
  CHECK(Tenant(s, "a").completed == 4);  // the resubmitted pod ran again once room was back
  CHECK(r.end_ms > 100'000);
  for (const auto& t : s)
    CHECK(t.run + t.pending + t.rejected == t.submitted);
}

TEST_CASE("static quotas never borrow", "[sim][engine]") {
  Events events;
  const SimulationResult r = Run(BorrowAndReclaimInput(), "static", &events);
  const auto s = Summarize(r);
  CHECK(Tenant(s, "a").borrowed_core_hours == 0);
  CHECK(r.evictions == 0);
  // a holds only its min (one pod per node): room for b at once, on the first of two equal nodes.
  CHECK(events.Has("10 bind b-0 n1"));
  CHECK(Tenant(s, "a").wait.max_s == 100);  // a's 3rd and 4th pods waited for the first two
}

TEST_CASE("no quotas: first come, first served, no preemption at equal priority", "[sim][engine]") {
  Events events;
  const SimulationResult r = Run(BorrowAndReclaimInput(), "none", &events);
  const auto s = Summarize(r);
  CHECK(r.evictions == 0);
  CHECK(Tenant(s, "b").wait.max_s == 90);  // until a's pods complete at 100
  CHECK(Tenant(s, "b").rejected_by_quota == 0);
  CHECK(Tenant(s, "b").below_guarantee_with_pending_s == 90);  // plan min 4, used 0, pending
}

TEST_CASE("a higher-priority pod preempts a lower one without quotas", "[sim][engine]") {
  SimulationInput in;
  in.nodes = {CpuNode("n1", 4000)};
  in.workload.pods = {PodOf("low", "x", 0, 100, 4000, 0), PodOf("high", "x", 5, 10, 4000, 100)};
  Events events;
  const SimulationResult r = Run(in, "none", &events);
  CHECK(events.Has("5 evict low n1"));
  CHECK(events.Has("5 bind high n1"));
  CHECK(r.evictions == 1);
}

Pod ScriptPodOf(const std::string& name, int64_t t_s, int64_t cpu_milli, int32_t priority = 0,
                const std::string& node = "") {
  Pod p;
  p.ns = "x";
  p.name = name;
  p.uid = "u-" + name;
  p.creation_ms = t_s * 1000;
  p.spec_priority = p.priority = priority;
  p.requests.Set("cpu", cpu_milli);
  p.node_name = node;
  if (!node.empty()) p.phase = PodPhase::kRunning;
  return p;
}

TEST_CASE("script steps: created, deleted and preempted pods settle after each step",
          "[sim][engine][script]") {
  SimulationInput in;
  in.nodes = {CpuNode("n1", 4000)};
  auto step = [&](int64_t t_s, std::vector<Pod> create, std::vector<std::string> remove = {}) {
    in.script.push_back(ScriptStep{t_s * 1000, std::move(create), std::move(remove), {}});
  };
  step(0, {ScriptPodOf("bg", 0, 4000, 0, "n1")});  // 0: joins bound, fills n1
  step(10, {ScriptPodOf("w", 10, 2000)});          // 1: waits
  step(20, {}, {"x/bg"});                          // 2: n1 freed: w binds
  step(30, {ScriptPodOf("hi", 30, 4000, 100)});    // 3: preempts w, binds at once
  step(40, {ScriptPodOf("late", 40, 1000)});       // 4: waits (n1 full)
  step(50, {}, {"x/late"});                        // 5: leaves queue and cluster
  SimulationOptions o;
  o.cluster_quotas = QuotaSemantics::kCapacityExtender;
  o.sampling = NodeSampling::kAll;
  o.reclaim_at_once = true;
  o.reclaim_interval_ms = 0;
  Events events;
  o.observer = events.Observer();
  std::vector<std::string> seen;  // per step: "pod:node" of every pod in the cluster
  o.after_step = [&](std::size_t i, const ClusterState& state) {
    std::set<std::string> pods;
    for (const auto& [uid, pod] : state.pods())
      pods.insert(pod.name + ":" + (pod.node_name.empty() ? "-" : pod.node_name));
    seen.push_back(fmt::format("{} {}", i, fmt::join(pods, " ")));
  };
  SimulationResult r;
  REQUIRE(RunSimulation(in, o, &r).ok());
  CHECK(seen == std::vector<std::string>{"0 bg:n1", "1 bg:n1 w:-", "2 w:n1", "3 hi:n1",
                                         "4 hi:n1 late:-", "5 hi:n1"});
  CHECK(events.Has("20 delete u-bg n1"));
  CHECK(events.Has("20 bind u-w n1"));
  CHECK(events.Has("30 evict u-w n1"));
  CHECK(events.Has("30 bind u-hi n1"));
  CHECK(r.evictions == 1);
  CHECK(r.binds == 2);

  // A pod created twice is refused with its key.
  in.script.push_back(ScriptStep{60'000, {ScriptPodOf("w", 60, 1000)}, {}, {}});
  const Status twice = RunSimulation(in, o, &r);
  CHECK(!twice.ok());
  CHECK(twice.message().find("u-w is created twice") != std::string::npos);
}

TEST_CASE("an unknown policy is refused with the known names, never run as the default",
          "[sim][engine]") {
  const SimulationInput in = BorrowAndReclaimInput();
  for (const std::string policy : {"no-such-policy", "capacity+no-such-rule", ""}) {
    INFO(policy);
    SimulationOptions o;
    o.policy = policy;
    SimulationResult r;
    const Status s = RunSimulation(in, o, &r);
    CHECK(s.code() == StatusCode::kInvalid);
    CHECK(r.binds == 0);
    if (policy.find('+') == std::string::npos) {
      for (const std::string& known : SimProfilePolicies().Names())
        CHECK(s.message().find(known) != std::string::npos);
    } else {
      CHECK(s.message().find("unknown admission rule \"no-such-rule\"") != std::string::npos);
    }
  }
}

TEST_CASE("pods that can never run are rejected, by quota or by nodes", "[sim][engine]") {
  SimulationInput in = BorrowAndReclaimInput();
  in.workload.pods.push_back(PodOf("a-huge", "a", 1, 10, 9000));  // above a's max of 8
  in.workload.pods.push_back(PodOf("c-huge", "c", 1, 10, 5000));  // no quota; above every node
  SortByArrival(&in.workload.pods);
  const auto s = Summarize(Run(in, "capacity"));
  CHECK(Tenant(s, "a").rejected_by_quota == 1);
  CHECK(Tenant(s, "c").rejected_by_nodes == 1);
  const auto none = Summarize(Run(in, "none"));
  CHECK(Tenant(none, "a").rejected_by_quota == 0);
  CHECK(Tenant(none, "a").rejected_by_nodes == 1);  // 9 cpu fits no 4-cpu node either
}

// The reference: every pending pod retried at every event time, in kube-scheduler's queue order
// (ClusterState::PendingPods), by the core's filter over every node and its choice of node, until
// a pass binds nothing. No reclaim: the cases below have nothing to reclaim.
std::vector<std::string> ReferenceLog(const SimulationInput& in, const std::string& policy) {
  SimProfile setup;
  REQUIRE(ResolveSimProfile(policy, &setup).ok());
  ClusterState state(setup.semantics);
  for (const auto& n : in.nodes)
    state.UpsertNode(n);
  if (setup.quotas) {
    for (const auto& [t, q] : in.plan.tenants)
      state.UpsertQuota(ElasticQuotaFor(t, q, setup.max_equals_min));
  }
  std::map<std::string, const WorkloadPod*> by_name;
  for (const auto& p : in.workload.pods)
    by_name[p.name] = &p;
  std::map<int64_t, std::set<std::string>> completions;
  std::vector<std::string> log;
  int64_t now = 0;
  auto run_until_quiet = [&] {
    for (bool bound = true; bound;) {
      bound = false;
      std::vector<std::string> uids;
      for (const NormalizedPod* pod : state.PendingPods())
        uids.push_back(pod->store_key());
      for (const auto& uid : uids) {
        NormalizedPod pod = *state.FindPod(uid);
        const Feasibility feasibility = FindFeasibleNodes(state, pod);
        if (feasibility.feasible.empty()) continue;
        pod.node_name = PickNode(NodeScoring::kLeastAllocated, state, pod, feasibility.feasible);
        pod.phase = PodPhase::kRunning;
        pod.start_ms = now;
        log.push_back(fmt::format("{} bind {} {}", now / 1000, pod.name, pod.node_name));
        completions[now + by_name[pod.name]->duration_ms].insert(pod.uid);
        state.UpsertPod(std::move(pod));
        bound = true;
      }
    }
  };
  std::size_t next = 0;
  while (true) {
    int64_t t = INT64_MAX;
    if (next < in.workload.pods.size()) t = in.workload.pods[next].arrival_ms;
    if (!completions.empty()) t = std::min(t, completions.begin()->first);
    if (t == INT64_MAX) break;
    now = t;
    if (!completions.empty() && completions.begin()->first == t) {
      for (const auto& uid : completions.begin()->second)
        state.DeletePod(uid);
      completions.erase(completions.begin());
    }
    for (; next < in.workload.pods.size() && in.workload.pods[next].arrival_ms == t; ++next) {
      const WorkloadPod& w = in.workload.pods[next];
      Pod p;
      p.uid = p.name = w.name;
      p.ns = w.tenant;
      p.spec_priority = p.priority = w.priority.value_or(0);
      p.creation_ms = w.arrival_ms;
      p.requests = w.requests;
      state.UpsertPod(p);
    }
    run_until_quiet();
  }
  std::sort(log.begin(), log.end());
  return log;
}

std::vector<std::string> EngineLog(const SimulationInput& in, const std::string& policy) {
  SimulationOptions o;
  o.policy = policy;
  o.sampling = NodeSampling::kAll;
  std::vector<std::string> log;
  o.observer = [&](const char* e, const std::string& pod, const std::string& node, int64_t t) {
    if (std::string(e) == "bind") log.push_back(fmt::format("{} bind {} {}", t / 1000, pod, node));
  };
  SimulationResult r;
  REQUIRE(RunSimulation(in, o, &r).ok());
  std::sort(log.begin(), log.end());
  return log;
}

TEST_CASE(
    "the engine binds exactly as a naive loop over every pending pod, retrying only what can "
    "fit",
    "[sim][engine]") {
  // Small clusters under heavy contention, equal priorities (so no preemption: the two differ
  // only in when they retry, which must not change any decision).
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    SyntheticOptions o;
    o.seed = seed;
    o.pods = 600;
    o.tenants = 3;
    o.load = 1.6;
    o.mean_duration_s = 60;
    o.demand_period_s = 300;
    SimulationInput in;
    in.nodes = GenerateSyntheticNodes(10);
    int64_t cpu = 0;
    for (const auto& n : in.nodes)
      cpu += n.allocatable.Get("cpu");
    in.workload = GenerateSyntheticWorkload(o, cpu);
    for (auto& p : in.workload.pods)
      p.priority = 0;
    in.plan = SyntheticQuotaPlan({"tenant-0", "tenant-1", "tenant-2"}, in.nodes);
    for (std::string policy : {"none", "static"}) {
      INFO("seed " << seed << " policy " << policy);
      const auto reference = ReferenceLog(in, policy);
      const auto engine = EngineLog(in, policy);
      CHECK(reference.size() == engine.size());
      CHECK(reference == engine);
    }
  }
}

TEST_CASE("stopping 1.2 early gives the same reclaims as running it on every pool node",
          "[sim][engine]") {
  for (uint64_t seed : {11u, 12u, 13u}) {
    SyntheticOptions o;
    o.seed = seed;
    o.pods = 3000;
    o.tenants = 4;
    o.load = 1.3;
    o.mean_duration_s = 200;
    o.demand_period_s = 800;
    SimulationInput in;
    in.nodes = GenerateSyntheticNodes(40);
    int64_t cpu = 0;
    for (const auto& n : in.nodes)
      cpu += n.allocatable.Get("cpu");
    in.workload = GenerateSyntheticWorkload(o, cpu);
    in.plan = SyntheticQuotaPlan({"tenant-0", "tenant-1", "tenant-2", "tenant-3"}, in.nodes);
    for (std::string policy : {"capacity", "none"}) {
      for (NodeSampling sampling : {NodeSampling::kKubeScheduler, NodeSampling::kAll}) {
        std::vector<std::string> logs[2];
        int64_t evictions = 0;
        for (int exhaustive = 0; exhaustive < 2; ++exhaustive) {
          SimulationOptions opts;
          opts.policy = policy;
          opts.sampling = sampling;
          opts.exhaustive_reclaim = exhaustive == 1;
          opts.observer = [&](const char* e, const std::string& pod, const std::string& node,
                              int64_t t) {
            logs[exhaustive].push_back(fmt::format("{} {} {} {}", t, e, pod, node));
          };
          SimulationResult r;
          REQUIRE(RunSimulation(in, opts, &r).ok());
          evictions = r.evictions;
        }
        INFO("seed " << seed << " policy " << policy);
        CHECK(evictions > 0);
        CHECK(logs[0] == logs[1]);
      }
    }
  }
}

}  // namespace
}  // namespace simulation_test
}  // namespace capext

namespace capext {
namespace simulation_test {
namespace {

// Two 4-cpu nodes; tenants a and b {min 3, max 6}: the sum of mins, 6 cpu, leaves room for six
// 1-cpu pods. Each tenant starts a 4-pod gang at t=0 (a's first by name), running 100 s.
SimulationInput TwoGangsInput() {
  SimulationInput in;
  in.nodes = {CpuNode("n1", 4000), CpuNode("n2", 4000)};
  for (const char* t : {"a", "b"}) {
    in.plan.tenants[t] =
        TenantQuota{ResourceList{{"cpu", 3000}}, ResourceList{{"cpu", 6000}}, std::nullopt};
  }
  in.workload.source = "test";
  for (const char* t : {"a", "b"}) {
    for (int i = 0; i < 4; ++i) {
      WorkloadPod p = PodOf(fmt::format("{}-{}", t, i), t, 0, 100, 1000);
      p.group = std::string("job-") + t;
      p.min_member = 4;
      in.workload.pods.push_back(p);
    }
  }
  SortByArrival(&in.workload.pods);
  return in;
}

SimulationResult RunAdmission(const SimulationInput& in, SimAdmission admission, Events* events) {
  SimulationOptions o;
  o.admission = admission;
  o.sample_interval_ms = 10'000;
  o.observer = events->Observer();
  SimulationResult r;
  REQUIRE(RunSimulation(in, o, &r).ok());
  return r;
}

TEST_CASE("per-pod admission leaves a gang partially running; gang admission never does",
          "[sim][engine][groups]") {
  const SimulationInput in = TwoGangsInput();
  Events per_pod_events, gang_events;
  const SimulationResult per_pod = RunAdmission(in, SimAdmission::kPod, &per_pod_events);
  const SimulationResult gang = RunAdmission(in, SimAdmission::kGang, &gang_events);
  INFO("per pod:\n"
       << fmt::format("{}", fmt::join(per_pod_events.log, "\n")) << "\ngang:\n"
       << fmt::format("{}", fmt::join(gang_events.log, "\n")));
  const TenantSummary pp = Summarize(per_pod).back();
  const TenantSummary g = Summarize(gang).back();
  CHECK(per_pod.policy == "capacity");
  CHECK(gang.policy == "capacity+gang");
  CHECK(per_pod.group_count == 2);
  // Per pod: a's 4 pods, then b's pods one by one at t=0 while the quota lets them (and reclaim
  // takes one of a's for b's guarantee): some of b's run at t=0 without b being able to work.
  CHECK(pp.groups.submitted == 2);
  CHECK(pp.groups.ever_partial >= 1);
  CHECK(pp.groups.partial_core_hours >= 200.0 / 3600.0);
  CHECK(per_pod_events.Has("0 bind b-0 n1") != per_pod_events.Has("0 bind b-0 n2"));
  // Gang: a is admitted whole at 0; b stays gated (4 + 4 > 6) until a ends, then starts whole.
  CHECK(g.groups.started == 2);
  CHECK(g.groups.ever_partial == 0);
  CHECK(g.groups.partial_core_hours == 0);
  CHECK(g.groups.time_to_start.max_s == 100);
  for (const auto& line : gang_events.log)
    CHECK_FALSE((line.starts_with("0 bind b-")));
  CHECK(gang.admitted_by_queue == 8);
  for (const auto& t : Summarize(gang))
    CHECK(t.run + t.pending + t.rejected == t.submitted);
}

}  // namespace
}  // namespace simulation_test
}  // namespace capext

namespace capext {
namespace simulation_test {
namespace {

// Two 2-cpu nodes, full of tenant a's borrowed pods (a {min 0, max 4}); b {min 4, max 4} starts
// a 2-pod gang of 2-cpu pods at t=10. Gate mode's reclaim plan evicts a-0 and a-1 and nominates
// b-0 on one node, b-1 on the other; then the gang is admitted and both bind at once. b-0's scan
// finds only its own node (b-1's nomination holds the other against it): the bucket's wake list
// must still keep that node for b-1 (pending_queue.h), or b-1 waits for its nomination to expire
// while b-0 runs alone.
TEST_CASE("a gang's members bind on the nodes their plan nominated, together",
          "[sim][engine][groups]") {
  SimulationInput in;
  in.nodes = {CpuNode("n1", 2000), CpuNode("n2", 2000)};
  in.plan.tenants["a"] =
      TenantQuota{ResourceList{{"cpu", 0}}, ResourceList{{"cpu", 4000}}, std::nullopt};
  in.plan.tenants["b"] =
      TenantQuota{ResourceList{{"cpu", 4000}}, ResourceList{{"cpu", 4000}}, std::nullopt};
  in.workload.source = "test";
  in.workload.pods = {PodOf("a-0", "a", 0, 1000, 2000), PodOf("a-1", "a", 0, 1000, 2000)};
  for (int i = 0; i < 2; ++i) {
    WorkloadPod p = PodOf(fmt::format("b-{}", i), "b", 10, 100, 2000);
    p.group = "job-b";
    p.min_member = 2;
    in.workload.pods.push_back(p);
  }
  SortByArrival(&in.workload.pods);
  Events events;
  const SimulationResult r = RunAdmission(in, SimAdmission::kGang, &events);
  INFO(fmt::format("{}", fmt::join(events.log, "\n")));
  CHECK(events.Has("10 evict a-0 n1"));
  CHECK(events.Has("10 evict a-1 n2"));
  CHECK(events.Has("10 bind b-0 n1"));
  CHECK(events.Has("10 bind b-1 n2"));
  CHECK(r.gang_plans == 1);
  const std::vector<TenantSummary> summary = Summarize(r);
  const TenantSummary& b = Tenant(summary, "b");
  CHECK(b.groups.started == 1);
  CHECK(b.groups.ever_partial == 0);
  CHECK(b.groups.partial_core_hours == 0);
}

}  // namespace
}  // namespace simulation_test
}  // namespace capext

namespace capext {
namespace simulation_test {
namespace {

// docs/workloads.md#6-measuring-groups-in-the-simulator, item 3, in small: an elastic job
// (minMember 3, five 1-cpu pods of tenant a {min 0, max 10}) borrows: its core j-0..j-2 runs on the
// only node (3 cpu); its surplus j-3, j-4 wait (the sum of all mins is 5: b's 3 and c's 2, both
// idle). At t=10 b, within its min, starts a 3-cpu pod h: the reclaim takes a's core whole, and h
// binds. When h ends at t=60, j-3 and j-4 do not bind as 2 of 3 (partially running until they
// end): members of a gang that lost its core pass /filter only with a whole gang. (Here j-3 and
// j-4 were never admitted, the node being full: the revocation of admitted members is
// tests/core/admission_revocation_test.cpp's and, on the API-server double,
// tests/extender/admission/admission_revocation_test.cpp's.)
TEST_CASE("a gang whose core a reclaim took: its other members never run apart",
          "[sim][engine][groups]") {
  SimulationInput in;
  in.nodes = {CpuNode("n1", 3000)};
  in.plan.tenants["a"] =
      TenantQuota{ResourceList{{"cpu", 0}}, ResourceList{{"cpu", 10000}}, std::nullopt};
  in.plan.tenants["b"] =
      TenantQuota{ResourceList{{"cpu", 3000}}, ResourceList{{"cpu", 3000}}, std::nullopt};
  in.plan.tenants["c"] =
      TenantQuota{ResourceList{{"cpu", 2000}}, ResourceList{{"cpu", 2000}}, std::nullopt};
  in.workload.source = "test";
  for (int i = 0; i < 5; ++i) {
    WorkloadPod p = PodOf(fmt::format("j-{}", i), "a", 0, 1000, 1000);
    p.group = "job-j";
    p.min_member = 3;
    in.workload.pods.push_back(p);
  }
  in.workload.pods.push_back(PodOf("h", "b", 10, 50, 3000));
  SortByArrival(&in.workload.pods);
  Events events;
  const SimulationResult r = RunAdmission(in, SimAdmission::kGang, &events);
  INFO(fmt::format("{}", fmt::join(events.log, "\n")));
  for (int i = 0; i < 3; ++i)
    CHECK(events.Has(fmt::format("0 bind j-{} n1", i)));
  CHECK(events.Has("10 evict j-0 n1"));
  CHECK(events.Has("10 bind h n1"));
  for (const auto& line : events.log)
    CHECK_FALSE(line.starts_with("60 bind j-"));
  const std::vector<TenantSummary> summary = Summarize(r);
  const TenantSummary& a = Tenant(summary, "a");
  CHECK(a.groups.started == 1);
  CHECK(a.groups.ever_partial == 0);
  CHECK(a.groups.partial_core_hours == 0);
}

}  // namespace
}  // namespace simulation_test
}  // namespace capext
