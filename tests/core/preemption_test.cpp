// Preemption across nodes: EligibleToPreempt (PodEligibleToPreemptOthers), the candidate
// choice one tie-breaker at a time, and FindPreemption over a state.
#include "core/preemption.h"

#include <catch2/catch.hpp>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/reasons.h"
#include "tests/support/builders.h"

namespace capext {
namespace preemption_test {
namespace {

using testing::CpuList;
using testing::KeysOf;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::UidOf;

// --- ChooseCandidate
// ------------------------------------------------------------------------------

// Pods that live as long as the test needs the pointers.
class VictimPool {
 public:
  const NormalizedPod* Add(int32_t priority, int64_t start_ms) {
    Pod pod =
        MakePod("ns", "v" + std::to_string(pods_.size())).Priority(priority).Started(start_ms);
    pods_.push_back(std::make_unique<NormalizedPod>(testing::Normalized(std::move(pod))));
    return pods_.back().get();
  }

 private:
  std::vector<std::unique_ptr<NormalizedPod>> pods_;
};

NodeVictims Candidate(std::string node, std::vector<const NormalizedPod*> victims,
                      int32_t pdb = 0) {
  NodeVictims c;
  c.node = std::move(node);
  c.candidate = true;
  c.victims = std::move(victims);
  c.pdb_violations = pdb;
  return c;
}

std::string Chosen(const std::vector<NodeVictims>& candidates) {
  return candidates[ChooseCandidate(candidates)].node;
}

constexpr int32_t kLowest = std::numeric_limits<int32_t>::min();

TEST_CASE("1.3: fewest PDB violations first", "[preemption]") {
  VictimPool pool;
  // n2 is worse on every later criterion but violates no PDB.
  std::vector<NodeVictims> candidates = {
      Candidate("n1", {pool.Add(0, 100)}, 1),
      Candidate("n2", {pool.Add(100, 1), pool.Add(100, 1)}, 0),
  };
  CHECK(Chosen(candidates) == "n2");
}

TEST_CASE("1.3: then the lowest priority of the most important victim", "[preemption]") {
  VictimPool pool;
  std::vector<NodeVictims> candidates = {
      Candidate("n1", {pool.Add(10, 100)}),
      Candidate("n2", {pool.Add(5, 1), pool.Add(5, 1), pool.Add(5, 1)}),
  };
  CHECK(Chosen(candidates) == "n2");
}

TEST_CASE("1.3: then the smallest sum of (priority + 2^31)", "[preemption]") {
  VictimPool pool;
  std::vector<NodeVictims> candidates = {
      Candidate("n1", {pool.Add(10, 100), pool.Add(5, 100)}),
      Candidate("n2", {pool.Add(10, 1), pool.Add(1, 1)}),
  };
  CHECK(Chosen(candidates) == "n2");
}

TEST_CASE("1.3: then the fewest victims", "[preemption]") {
  VictimPool pool;
  // A victim of the lowest possible priority adds 0 to the sum: the sums tie, the counts do not.
  std::vector<NodeVictims> candidates = {
      Candidate("n1", {pool.Add(10, 100), pool.Add(kLowest, 100)}),
      Candidate("n2", {pool.Add(10, 1)}),
  };
  CHECK(Chosen(candidates) == "n2");
}

TEST_CASE("1.3: then the latest earliest start among the highest-priority victims",
          "[preemption]") {
  VictimPool pool;
  SECTION("earliest, not latest, start of the node's victims") {
    std::vector<NodeVictims> candidates = {
        Candidate("n1", {pool.Add(10, 100), pool.Add(10, 400)}),
        Candidate("n2", {pool.Add(10, 150), pool.Add(10, 300)}),
    };
    CHECK(Chosen(candidates) == "n2");
  }
  SECTION("only the highest-priority victims' starts count") {
    std::vector<NodeVictims> candidates = {
        Candidate("n1", {pool.Add(10, 100), pool.Add(5, 900)}),
        Candidate("n2", {pool.Add(10, 200), pool.Add(5, 50)}),
    };
    CHECK(Chosen(candidates) == "n2");
  }
}

TEST_CASE("1.3: finally the first node name, whatever the input order", "[preemption]") {
  VictimPool pool;
  std::vector<NodeVictims> candidates = {
      Candidate("n3", {pool.Add(10, 100)}),
      Candidate("n1", {pool.Add(10, 100)}),
      Candidate("n2", {pool.Add(10, 100)}),
  };
  CHECK(Chosen(candidates) == "n1");
  CHECK(ChooseCandidate({Candidate("only", {pool.Add(1, 1)})}) == 0);
}

// --- EligibleToPreempt
// -------------------------------------------------------------------------------

bool Eligible(const ClusterState& state, const Pod& pod, std::string* reason) {
  const NormalizedPod normalized = state.Normalize(pod);
  PreemptorContext ctx = MakePreemptorContext(state, normalized);
  const Status eligible = EligibleToPreempt(state, ctx);
  *reason = eligible.message();
  return eligible.ok();
}

TEST_CASE("preemptionPolicy Never never preempts", "[preemption]") {
  ClusterState state;
  std::string reason;
  CHECK_FALSE(Eligible(state, MakePod("ns", "p").PreemptionNever(), &reason));
  CHECK(reason == reasons::kPreemptionPolicyNever);
  CHECK(Eligible(state, MakePod("ns", "p"), &reason));
}

struct TerminatingCase {
  std::string description;
  Pod preemptor;
  Pod terminating;
  bool eligible;
};

TEST_CASE("a terminating victim on the nominated node blocks another preemption", "[preemption]") {
  const std::vector<TerminatingCase> cases = {
      {"same quota namespace, lower priority",
       MakePod("eq1", "p").Cpu(8000).Priority(10).NominatedTo("n1"),
       MakePod("eq1", "t").Cpu(1000).Priority(5).Terminating().BoundTo("n1"), false},
      {"same quota namespace, equal priority",
       MakePod("eq1", "p").Cpu(8000).Priority(10).NominatedTo("n1"),
       MakePod("eq1", "t").Cpu(1000).Priority(10).Terminating().BoundTo("n1"), true},
      {"other borrowing quota, preemptor within min",
       MakePod("eq1", "p").Cpu(1000).Priority(0).NominatedTo("n1"),
       MakePod("eq2", "t").Cpu(3000).Priority(100).Terminating().BoundTo("n1"), false},
      {"other borrowing quota, preemptor over min",
       MakePod("eq1", "p").Cpu(8000).Priority(0).NominatedTo("n1"),
       MakePod("eq2", "t").Cpu(3000).Priority(0).Terminating().BoundTo("n1"), true},
      {"other quota within its min", MakePod("eq1", "p").Cpu(1000).Priority(0).NominatedTo("n1"),
       MakePod("eq2", "t").Cpu(1000).Priority(0).Terminating().BoundTo("n1"), true},
      {"quota preemptor, terminating pod without quota",
       MakePod("eq1", "p").Cpu(1000).Priority(10).NominatedTo("n1"),
       MakePod("free", "t").Cpu(1000).Priority(0).Terminating().BoundTo("n1"), true},
      {"preemptor without quota, terminating lower-priority pod without quota",
       MakePod("free", "p").Cpu(1000).Priority(10).NominatedTo("n1"),
       MakePod("free2", "t").Cpu(1000).Priority(0).Terminating().BoundTo("n1"), false},
      {"preemptor without quota, terminating higher-priority pod without quota",
       MakePod("free", "p").Cpu(1000).Priority(10).NominatedTo("n1"),
       MakePod("free2", "t").Cpu(1000).Priority(20).Terminating().BoundTo("n1"), true},
      {"preemptor without quota, terminating quota pod",
       MakePod("free", "p").Cpu(1000).Priority(10).NominatedTo("n1"),
       MakePod("eq1", "t").Cpu(1000).Priority(0).Terminating().BoundTo("n1"), true},
      {"the would-be victim is not terminating",
       MakePod("eq1", "p").Cpu(8000).Priority(10).NominatedTo("n1"),
       MakePod("eq1", "t").Cpu(1000).Priority(5).BoundTo("n1"), true},
      {"the terminating victim is on another node",
       MakePod("eq1", "p").Cpu(8000).Priority(10).NominatedTo("n1"),
       MakePod("eq1", "t").Cpu(1000).Priority(5).Terminating().BoundTo("n2"), true},
      {"no nominated node", MakePod("eq1", "p").Cpu(8000).Priority(10),
       MakePod("eq1", "t").Cpu(1000).Priority(5).Terminating().BoundTo("n1"), true},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    ClusterState state;
    state.UpsertNode(MakeNode("n1", 16000));
    state.UpsertNode(MakeNode("n2", 16000));
    state.UpsertQuota(MakeQuota("eq1", CpuList(4000), std::nullopt));
    state.UpsertQuota(MakeQuota("eq2", CpuList(2000), std::nullopt));
    state.UpsertPod(c.terminating);
    state.UpsertPod(c.preemptor);
    std::string reason;
    CHECK(Eligible(state, *state.FindPod(UidOf(c.preemptor)), &reason) == c.eligible);
    if (!c.eligible) CHECK(reason == reasons::kTerminatingVictimOnNominatedNode);
  }
}

TEST_CASE("our own nomination counts as the nominated node", "[preemption]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 16000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(4000), std::nullopt));
  state.UpsertPod(MakePod("eq1", "t").Cpu(1000).Priority(5).Terminating().BoundTo("n1"));
  Pod p = MakePod("eq1", "p").Cpu(8000).Priority(10);
  state.UpsertPod(p);
  std::string reason;
  CHECK(Eligible(state, *state.FindPod(UidOf(p)), &reason));
  state.Nominate(UidOf(p), "n1", 1000);
  CHECK_FALSE(Eligible(state, *state.FindPod(UidOf(p)), &reason));
}

// --- FindPreemption ------------------------------------------------------------------------------

TEST_CASE("FindPreemption runs 1.2 on every node and chooses with 1.3", "[preemption]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertNode(MakeNode("n2", 4000));
  state.UpsertNode(MakeNode("small", 1000));
  state.UpsertPod(MakePod("free", "n1-mid").Cpu(4000).Priority(5).BoundTo("n1"));
  state.UpsertPod(MakePod("free", "n2-low").Cpu(4000).Priority(1).BoundTo("n2"));
  state.UpsertPod(MakePod("free", "small-low").Cpu(1000).Priority(0).BoundTo("small"));
  Pod p = MakePod("free", "p").Cpu(2000).Priority(10);

  PreemptionPlan plan = FindPreemption(state, state.Normalize(p), PriorityThenStartTimeOrder());
  REQUIRE(plan.found());
  CHECK(plan.chosen.node == "n2");
  CHECK(KeysOf(plan.chosen.victims) == std::vector<std::string>{"free/n2-low"});
  // "small" can never hold the pod: it is skipped, not a candidate.
  REQUIRE(plan.candidates.size() == 2);
  CHECK(plan.candidates[0].node == "n1");
  CHECK(plan.candidates[1].node == "n2");

  SECTION("restricted to named nodes") {
    PreemptionPlan only_n1 =
        FindPreemption(state, state.Normalize(p), PriorityThenStartTimeOrder(), {"n1", "missing"});
    REQUIRE(only_n1.found());
    CHECK(only_n1.chosen.node == "n1");
  }
  SECTION("preemptionPolicy Never finds nothing") {
    PreemptionPlan never = FindPreemption(
        state, state.Normalize(MakePod("free", "p").Cpu(2000).Priority(10).PreemptionNever()),
        PriorityThenStartTimeOrder());
    CHECK_FALSE(never.found());
    CHECK(never.outcome == PreemptionPlan::Outcome::kNotEligible);
    CHECK(never.why.message() == reasons::kPreemptionPolicyNever);
  }
  SECTION("no candidate") {
    PreemptionPlan none =
        FindPreemption(state, state.Normalize(MakePod("free", "p").Cpu(2000).Priority(0)),
                       PriorityThenStartTimeOrder());
    CHECK_FALSE(none.found());
    CHECK(none.candidates.empty());
    CHECK_FALSE(none.why.message().empty());
    CHECK(none.outcome == PreemptionPlan::Outcome::kNoCandidate);
  }
}

}  // namespace
}  // namespace preemption_test
}  // namespace capext
