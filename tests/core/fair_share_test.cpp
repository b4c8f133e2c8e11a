// Fair sharing by weight (docs/fair-sharing.md): the weight annotation, share and fairShare with
// the page's worked numbers, the admission order with its barrier, the reclaim predicate, and the
// property that reclaim between borrowers cannot cycle.
#include "core/fair_share.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/admission_queue.h"
#include "core/fair_share_weight.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace fair_share_test {
namespace {

using testing::CpuList;
using testing::Gated;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;

ElasticQuota Weighted(ElasticQuota q, int64_t weight_milli) {
  q.weight_milli = weight_milli;
  return q;
}

// The quotas of docs/fair-sharing.md#4-fairshare: L min 30 (idle), A..D min 1, weights 1:1:2:4,
// maxes of 40; nodes with 34 cpu.
void AddWorkedQuotas(ClusterState* state) {
  state->UpsertNode(MakeNode("n1", 34000));
  state->UpsertQuota(MakeQuota("l", CpuList(30000), CpuList(40000)));
  state->UpsertQuota(Weighted(MakeQuota("a", CpuList(1000), CpuList(40000)), 1000));
  state->UpsertQuota(Weighted(MakeQuota("b", CpuList(1000), CpuList(40000)), 1000));
  state->UpsertQuota(Weighted(MakeQuota("c", CpuList(1000), CpuList(40000)), 2000));
  state->UpsertQuota(Weighted(MakeQuota("d", CpuList(1000), CpuList(40000)), 4000));
}

void AddBound(ClusterState* state, const std::string& ns, int pods, int64_t started = 0) {
  for (int i = 0; i < pods; ++i) {
    state->UpsertPod(MakePod(ns, ns + "-run-" + std::to_string(i))
                         .Cpu(1000)
                         .BoundTo("n1")
                         .Started(started)
                         .Created(started));
  }
}

void AddGated(ClusterState* state, const std::string& ns, int pods, int64_t created) {
  for (int i = 0; i < pods; ++i) {
    state->UpsertPod(
        Gated(MakePod(ns, ns + "-wait-" + std::to_string(i)).Cpu(1000).Created(created + i)));
  }
}

void AddPending(ClusterState* state, const std::string& ns, int pods) {
  for (int i = 0; i < pods; ++i)
    state->UpsertPod(MakePod(ns, ns + "-pending-" + std::to_string(i)).Cpu(1000).Created(1));
}

const NodeFairness& Of(const ClusterState& state, const std::vector<NodeFairness>& all,
                       const std::string& ns) {
  return all[static_cast<std::size_t>(state.ledger().tree().LeafOf(ns))];
}

TEST_CASE("the weight annotation: decimals to 1000 with 3 places; anything else with the reason",
          "[fair]") {
  int64_t w = -1;
  CHECK(ParseFairShareWeight("1", &w).ok());
  CHECK(w == 1000);
  CHECK(ParseFairShareWeight("2.5", &w).ok());
  CHECK(w == 2500);
  CHECK(ParseFairShareWeight("0.125", &w).ok());
  CHECK(w == 125);
  CHECK(ParseFairShareWeight("0", &w).ok());
  CHECK(w == 0);
  CHECK(ParseFairShareWeight("1000", &w).ok());
  CHECK(w == 1'000'000);
  for (const char* bad : {"", "abc", "-1", "+1", "1e3", "1.", ".5", "0.0001", "1000.001", "10000",
                          " 1", "1 ", "1,5"}) {
    INFO(bad);
    const Status s = ParseFairShareWeight(bad, &w);
    CHECK_FALSE(s.ok());
  }
  CHECK(ParseFairShareWeight("abc", &w).message() ==
        "annotation scheduling.capacity-extender.io/fair-share-weight \"abc\" is not a weight: a "
        "decimal from 0 to 1000 with at most 3 decimals");
  CHECK(FormatWeight(1000) == "1");
  CHECK(FormatWeight(2500) == "2.5");
  CHECK(FormatWeight(125) == "0.125");
  CHECK(FormatWeight(0) == "0");
}

TEST_CASE("water-filling 1:1:2:4: capped by demand, the rest split by weight", "[fair]") {
  double lambda = 0;
  // docs/fair-sharing.md#4-fairshare: B capped at 2, then 28 over weights 7.
  auto out = WaterFill(30, {1000, 1000, 2000, 4000}, {30, 2, 30, 30}, &lambda);
  CHECK(out[0] == Approx(4));
  CHECK(out[1] == Approx(2));
  CHECK(out[2] == Approx(8));
  CHECK(out[3] == Approx(16));
  CHECK(lambda == Approx(4));
  out = WaterFill(30, {1000, 1000, 2000, 4000}, {30, 30, 30, 30}, &lambda);
  CHECK(out[0] == Approx(3.75));
  CHECK(out[1] == Approx(3.75));
  CHECK(out[2] == Approx(7.5));
  CHECK(out[3] == Approx(15));
  // Weight 0 gets only what the others do not want.
  out = WaterFill(10, {1000, 0, 0}, {4, 10, 1}, &lambda);
  CHECK(out[0] == Approx(4));
  CHECK(out[1] == Approx(5));
  CHECK(out[2] == Approx(1));
  out = WaterFill(10, {1000, 0}, {20, 20}, &lambda);
  CHECK(out[0] == Approx(10));
  CHECK(out[1] == Approx(0));
}

TEST_CASE("share and fairShare: the worked numbers of docs/fair-sharing.md", "[fair]") {
  ClusterState state;
  AddWorkedQuotas(&state);
  // D arrived first: borrows 26; C borrows 4; A and B sit at their min.
  AddBound(&state, "a", 1);
  AddBound(&state, "b", 1);
  AddBound(&state, "c", 5);
  AddBound(&state, "d", 27);
  AddPending(&state, "a", 10);
  AddPending(&state, "b", 2);
  AddPending(&state, "c", 10);
  AddPending(&state, "d", 10);
  const FairShareModel model(state);
  const auto all = ComputeFairness(state, model);
  const NodeFairness& a = Of(state, all, "a");
  const NodeFairness& b = Of(state, all, "b");
  const NodeFairness& c = Of(state, all, "c");
  const NodeFairness& d = Of(state, all, "d");
  CHECK(a.pool.Get("cpu") == 34000);  // own min included: every sibling the same denominator
  CHECK(d.borrowed.Get("cpu") == 26000);
  CHECK(d.share.value == Approx(26.0 / 136));
  CHECK(c.share.value == Approx(4.0 / 68));
  CHECK(a.share.value == 0);
  CHECK(d.dominant == "cpu");
  CHECK(b.demand.Get("cpu") == 2000);
  CHECK(a.demand.Get("cpu") == 10000);
  CHECK(a.fair_share.Get("cpu") == 4000);
  CHECK(b.fair_share.Get("cpu") == 2000);
  CHECK(c.fair_share.Get("cpu") == 8000);
  CHECK(d.fair_share.Get("cpu") == 16000);
  CHECK(a.fair_value.value == Approx(4.0 / 34));
  CHECK(b.fair_value.value == Approx(2.0 / 34));
  CHECK(d.fair_value.value == Approx(16.0 / 136));
  CHECK(a.BelowFairShare());
  CHECK_FALSE(d.BelowFairShare());
  CHECK(a.share.ToString() == "0.000");
  CHECK(d.share.ToString() == "0.191");
}

TEST_CASE("weight 0 is infinite once borrowing, after every positive weight", "[fair]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 10000));
  state.UpsertQuota(MakeQuota("l", CpuList(10000), std::nullopt));
  state.UpsertQuota(Weighted(MakeQuota("z", CpuList(0), std::nullopt), 0));
  state.UpsertQuota(MakeQuota("p", CpuList(0), std::nullopt));
  AddBound(&state, "z", 1);
  AddBound(&state, "p", 9);
  const FairShareModel model(state);
  const auto all = ComputeFairness(state, model);
  const ShareKey z = Of(state, all, "z").share;
  const ShareKey p = Of(state, all, "p").share;
  CHECK(z.infinite);
  CHECK(z.ToString() == "inf");
  CHECK(p < z);
}

TEST_CASE("a tree: siblings share their parent's pool; a zero pool takes the level above's",
          "[fair]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 40000));
  ElasticQuota org = MakeQuota("org", CpuList(20000), std::nullopt);
  ElasticQuota t1 = MakeQuota("t1", CpuList(4000), std::nullopt);
  t1.parent = "org/org";
  ElasticQuota t2 = Weighted(MakeQuota("t2", CpuList(4000), std::nullopt), 3000);
  t2.parent = "org/org";
  ElasticQuota other = MakeQuota("other", CpuList(20000), std::nullopt);
  ElasticQuota g = MakeQuota("g", std::nullopt, std::nullopt);  // a grouping quota with no min
  ElasticQuota g1 = MakeQuota("g1", std::nullopt, std::nullopt);
  g1.parent = "g/g";
  for (const auto& q : {org, t1, t2, other, g, g1})
    state.UpsertQuota(q);
  AddBound(&state, "t1", 6);
  AddBound(&state, "t2", 10);
  const FairShareModel model(state);
  const int n1 = state.ledger().tree().LeafOf("t1");
  const int n2 = state.ledger().tree().LeafOf("t2");
  CHECK(model.pool(n1).Get("cpu") == 20000);  // org's children: t1, t2 and org's own (12)
  CHECK(model.ShareOf(n1, state.ledger().NodeUsed(n1)).value == Approx(2.0 / 20));
  CHECK(model.ShareOf(n2, state.ledger().NodeUsed(n2)).value == Approx(6.0 / 20 / 3));
  const int root = state.ledger().tree().QuotaNodeOf("org");
  CHECK(model.pool(root).Get("cpu") == 40000);  // the roots' mins
  // g's children have no min at all: their level takes the roots' pool.
  CHECK(model.pool(state.ledger().tree().LeafOf("g1")).Get("cpu") == 40000);
}

std::map<std::string, int> AdmittedPerNamespace(const AdmissionRound& round,
                                                const ClusterState& state) {
  std::map<std::string, int> out;
  for (const auto& unit : round.admit)
    for (const auto& key : unit.pods)
      ++out[state.FindPod(key)->ns];
  return out;
}

TEST_CASE("gate mode, weights 1:1:2:4: the order alone splits 30 idle cpu 4, 2, 8, 16",
          "[fair][admission]") {
  ClusterState state;
  AddWorkedQuotas(&state);
  for (const char* ns : {"a", "b", "c", "d"})
    AddBound(&state, ns, 1);
  // D's pods are the oldest: first come, first served would give D everything.
  AddGated(&state, "d", 30, 100);
  AddGated(&state, "a", 30, 200);
  AddGated(&state, "b", 2, 300);
  AddGated(&state, "c", 30, 400);
  const AdmissionRound fcfs = PlanAdmissions(state, {}, 1000);
  CHECK(AdmittedPerNamespace(fcfs, state) == std::map<std::string, int>{{"d", 30}});

  AdmissionOptions fair;
  fair.fair_sharing = true;
  const AdmissionRound round = PlanAdmissions(state, fair, 1000);
  CHECK(AdmittedPerNamespace(round, state) ==
        std::map<std::string, int>{{"a", 4}, {"b", 2}, {"c", 8}, {"d", 16}});
  // D's next unit is the barrier: blocked by the sum of all mins.
  const AdmissionWait& d = round.waiting.at(StoreKeyOf(MakePod("d", "d-wait-16")));
  CHECK(d.reason == AdmissionWaitReason::kQuotaExceeded);
  CHECK(d.message.find("sum of all mins") != std::string::npos);
  const AdmissionWait& c = round.waiting.at(StoreKeyOf(MakePod("c", "c-wait-8")));
  CHECK(c.reason == AdmissionWaitReason::kFairShare);
  CHECK(c.message == "waiting for fair share: c/c's share 0.132 > d/d's 0.125");
  CHECK(round.waiting.at(StoreKeyOf(MakePod("a", "a-wait-4"))).message ==
        "waiting for fair share: a/a's share 0.147 > d/d's 0.125");
  CHECK(round.waiting.at(StoreKeyOf(MakePod("d", "d-wait-17"))).message ==
        "waiting for fair share: d/d's share 0.125 >= d/d's 0.125");
}

TEST_CASE("gate mode: units within min are never held back by fairness", "[fair][admission]") {
  ClusterState state;
  AddWorkedQuotas(&state);
  AddGated(&state, "d", 40, 100);
  AddGated(&state, "l", 3, 500);  // the lender's own pods, created last
  AdmissionOptions fair;
  fair.fair_sharing = true;
  const AdmissionRound round = PlanAdmissions(state, fair, 1000);
  // L's 3 (within its min) and D's first (within D's min 1) go first, in creation order; D
  // borrows what is left after them: 34 - 3 - 1.
  CHECK(AdmittedPerNamespace(round, state) == std::map<std::string, int>{{"d", 31}, {"l", 3}});
  REQUIRE(round.admit.size() == 34);
  CHECK(round.admit[0].pods.front() == StoreKeyOf(MakePod("d", "d-wait-0")));
  CHECK(round.admit[3].pods.front() == StoreKeyOf(MakePod("l", "l-wait-2")));
  CHECK(round.admit[4].pods.front() == StoreKeyOf(MakePod("d", "d-wait-1")));
}

TEST_CASE("gate mode: a large unit of the lowest share is the barrier; smaller ones wait",
          "[fair][admission]") {
  ClusterState state;
  AddWorkedQuotas(&state);
  AddBound(&state, "a", 3);
  AddBound(&state, "b", 3);
  AddBound(&state, "c", 10);
  AddBound(&state, "d", 17);  // 33 of 34 used
  state.UpsertPod(Gated(MakePod("a", "a-big").Cpu(2000).Created(900)));
  AddGated(&state, "c", 2, 100);
  AdmissionOptions fair;
  fair.fair_sharing = true;
  const AdmissionRound round = PlanAdmissions(state, fair, 1000);
  CHECK(round.admit.empty());
  CHECK(round.waiting.at(StoreKeyOf(MakePod("c", "c-wait-0"))).message ==
        "waiting for fair share: c/c's share 0.147 > a/a's 0.118");
  // Without fairness the 1-cpu unit of C takes the free cpu.
  CHECK(AdmittedPerNamespace(PlanAdmissions(state, {}, 1000), state) ==
        std::map<std::string, int>{{"c", 1}});
}

// docs/fair-sharing.md#10-on-the-alibaba-trace's state at t = 940,320 s (fair): the sum of all
// mins is 512 cpu / 52 GPUs; be uses 56 cpu of its min 80 and its 8 GPUs, ls 336 cpu of its 300
// and 25 GPUs of its 30, guaranteed 18 cpu of 32 and 2 GPUs of 4, burstable its min 100 cpu and
// 9 GPUs of 10: 510 cpu used. A be pod (7 cpu, 1 GPU) borrows a GPU, not cpu.
TEST_CASE("DRF on the Alibaba state: a GPU borrower below its cpu min goes before a cpu borrower",
          "[fair][admission]") {
  ClusterState state;
  Node node = MakeNode("n1", 2'000'000);
  node.allocatable.Set("nvidia.com/gpu", 100);
  state.UpsertNode(node);
  auto quota = [&](const std::string& ns, int64_t cpu, int64_t gpu) {
    state.UpsertQuota(
        MakeQuota(ns, ResourceList{{"cpu", cpu * 1000}, {"nvidia.com/gpu", gpu}},
                  ResourceList{{"cpu", 4 * cpu * 1000}, {"nvidia.com/gpu", 2 * gpu}}));
  };
  quota("ls", 300, 30);
  quota("guaranteed", 32, 4);
  quota("burstable", 100, 10);
  quota("be", 80, 8);
  auto run = [&](const std::string& ns, const std::string& name, int64_t cpu, int64_t gpu) {
    state.UpsertPod(MakePod(ns, name)
                        .Cpu(cpu * 1000)
                        .Request("nvidia.com/gpu", gpu)
                        .BoundTo("n1")
                        .Started(0)
                        .Created(0));
  };
  run("ls", "ls-run", 336, 25);
  run("guaranteed", "g-run", 18, 2);
  run("burstable", "b-run", 100, 9);
  run("be", "be-run", 56, 8);
  state.UpsertPod(
      Gated(MakePod("be", "be-wait").Cpu(7000).Request("nvidia.com/gpu", 1).Created(5)));
  state.UpsertPod(Gated(MakePod("ls", "ls-wait").Cpu(1000).Created(1)));
  const FairShareModel model(state);
  const auto all = ComputeFairness(state, model);
  const NodeFairness& be = Of(state, all, "be");
  const NodeFairness& ls = Of(state, all, "ls");
  CHECK(ls.pool.Get("cpu") == 512000);
  CHECK(ls.pool.Get("nvidia.com/gpu") == 52);
  CHECK(ls.share.value == Approx(36.0 / 512));  // cpu dominates: 36 of 512
  CHECK(ls.dominant == "cpu");
  CHECK(be.share.value == 0);  // within its min in both
  const int be_leaf = state.ledger().tree().LeafOf("be");
  const ResourceList be_unit{{"cpu", 7000}, {"nvidia.com/gpu", 1}};
  CHECK(model.ShareWith(state, be_leaf, be_unit).value == Approx(1.0 / 52));  // the GPU
  CHECK(model.DominantResource(be_leaf, ResourceList{{"cpu", 63000}, {"nvidia.com/gpu", 9}}) ==
        "nvidia.com/gpu");
  // Gate mode: be's unit has the lowest share after, but the cpu sum of mins is full (510 + 7 >
  // 512): it is the barrier, and ls's 1-cpu unit, which would fit, waits behind it.
  AdmissionOptions fair;
  fair.fair_sharing = true;
  const AdmissionRound round = PlanAdmissions(state, fair, 1000);
  CHECK(round.admit.empty());
  CHECK(round.waiting.at(StoreKeyOf(MakePod("ls", "ls-wait"))).message ==
        "waiting for fair share: ls/ls's share 0.072 > be/be's 0.019");
  // First come, first served takes the 1 cpu left for ls.
  CHECK(AdmittedPerNamespace(PlanAdmissions(state, {}, 1000), state) ==
        std::map<std::string, int>{{"ls", 1}});
}

TEST_CASE("reclaim between borrowers: the worked example's first move, and the refusals",
          "[fair][reclaim]") {
  ClusterState state;
  AddWorkedQuotas(&state);
  AddBound(&state, "a", 1);
  AddBound(&state, "b", 1);
  AddBound(&state, "c", 5);
  AddBound(&state, "d", 27, /*started=*/0);
  AddPending(&state, "a", 10);
  AddPending(&state, "b", 2);
  AddPending(&state, "c", 10);
  AddPending(&state, "d", 10);
  const FairShareModel model(state);
  const auto all = ComputeFairness(state, model);
  const QuotaTree& tree = state.ledger().tree();
  FairReclaimCase move{tree.LeafOf("a"), tree.LeafOf("d"), CpuList(1000), CpuList(1000), 0,
                       600'000,          300'000};
  FairReclaimVerdict v = FairReclaimAllowed(state, model, Of(state, all, "a"), move);
  CHECK(v.allowed);
  CHECK(v.taker_after.value == Approx(1.0 / 34));
  CHECK(v.giver_after.value == Approx(25.0 / 136));
  // D may not take from C: D is above its fair share.
  FairReclaimCase back{tree.LeafOf("d"), tree.LeafOf("c"), CpuList(1000), CpuList(1000), 0,
                       600'000,          300'000};
  v = FairReclaimAllowed(state, model, Of(state, all, "d"), back);
  CHECK_FALSE(v.allowed);
  CHECK(v.why == "d/d's share 0.191 is not below its fair share 0.118");
  // A just-started victim is protected by the minimum run time.
  move.victim_started_ms = 500'000;
  v = FairReclaimAllowed(state, model, Of(state, all, "a"), move);
  CHECK_FALSE(v.allowed);
  CHECK(v.why == "the victim has run 100s, under the minimum run time of 300s");
  // Taking too much at once: A after 13/34 = 0.382 > D after 13/136 = 0.096.
  FairReclaimCase greedy{tree.LeafOf("a"), tree.LeafOf("d"), CpuList(13000), CpuList(13000), 0,
                         600'000,          300'000};
  v = FairReclaimAllowed(state, model, Of(state, all, "a"), greedy);
  CHECK_FALSE(v.allowed);
  CHECK(v.why == "a/a's share after 0.382 > d/d's share after 0.096");
}

// The share of every quota, largest first: the potential every allowed move lowers.
std::vector<ShareKey> SortedShares(const ClusterState& state, const FairShareModel& model,
                                   const std::vector<std::string>& names) {
  std::vector<ShareKey> out;
  for (const auto& ns : names) {
    const int node = state.ledger().tree().LeafOf(ns);
    out.push_back(model.ShareOf(node, state.ledger().NodeUsed(node)));
  }
  std::sort(out.begin(), out.end(), [](const ShareKey& a, const ShareKey& b) { return b < a; });
  return out;
}

bool LexLess(const std::vector<ShareKey>& a, const std::vector<ShareKey>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] < b[i]) return true;
    if (b[i] < a[i]) return false;
  }
  return false;
}

TEST_CASE("property: reclaim between borrowers never cycles; no pair takes back and forth",
          "[fair][reclaim][property]") {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    ClusterState state;
    state.UpsertNode(MakeNode("n1", 1'000'000));
    const int quotas = pick(2, 5);
    std::vector<std::string> names;
    state.UpsertQuota(MakeQuota("lender", CpuList(pick(10, 40) * 1000), std::nullopt));
    names.push_back("lender");
    for (int q = 0; q < quotas; ++q) {
      const std::string ns = "q" + std::to_string(q);
      names.push_back(ns);
      state.UpsertQuota(
          Weighted(MakeQuota(ns, CpuList(pick(0, 4) * 1000), std::nullopt), pick(0, 4) * 500));
      const int running = pick(0, 8);
      for (int i = 0; i < running; ++i)
        state.UpsertPod(MakePod(ns, "run-" + std::to_string(i))
                            .Cpu(pick(1, 3) * 1000)
                            .BoundTo("n1")
                            .Started(0));
      const int waiting = pick(0, 5);
      for (int i = 0; i < waiting; ++i)
        state.UpsertPod(MakePod(ns, "wait-" + std::to_string(i)).Cpu(pick(1, 3) * 1000));
    }
    const FairShareModel model(state);
    std::pair<std::string, std::string> last;  // the previous move's (taker, giver)
    std::vector<ShareKey> potential = SortedShares(state, model, names);
    int moves = 0;
    for (;; ++moves) {
      REQUIRE(moves < 2000);
      const auto fairness = ComputeFairness(state, model);
      const QuotaTree& tree = state.ledger().tree();
      const NormalizedPod* taker = nullptr;
      const NormalizedPod* giver = nullptr;
      for (const auto& [key, pod] : state.pods()) {
        if (pod.IsBound()) continue;
        for (const auto& [vkey, victim] : state.pods()) {
          if (!victim.IsBound() || victim.ns == pod.ns) continue;
          FairReclaimCase c{tree.LeafOf(pod.ns),
                            tree.LeafOf(victim.ns),
                            pod.quota_request(),
                            victim.quota_request(),
                            0,
                            1'000'000,
                            0};
          if (FairReclaimAllowed(state, model, fairness[static_cast<std::size_t>(c.taker)], c)
                  .allowed) {
            taker = &pod;
            giver = &victim;
            break;
          }
        }
        if (taker != nullptr) break;
      }
      if (taker == nullptr) break;
      // Never straight back: the giver of the last move does not take from its taker now.
      CHECK_FALSE((taker->ns == last.second && giver->ns == last.first));
      last = {taker->ns, giver->ns};
      // Apply: the victim is evicted (its controller re-creates it, pending); the pod runs.
      const Pod evicted =
          MakePod(giver->ns, giver->name + "-r").Cpu(giver->quota_request().Get("cpu"));
      const Pod runs =
          MakePod(taker->ns, taker->name).Cpu(taker->quota_request().Get("cpu")).BoundTo("n1");
      const std::string victim_key = giver->store_key();
      state.DeletePod(victim_key);
      state.UpsertPod(evicted);
      state.UpsertPod(runs);
      const std::vector<ShareKey> next = SortedShares(state, model, names);
      REQUIRE(LexLess(next, potential));  // strictly lower: no state repeats
      potential = next;
    }
  }
}

}  // namespace
}  // namespace fair_share_test
}  // namespace capext
