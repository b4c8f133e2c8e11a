// Every admission rule declares the changes that can alter its verdict
// (docs/architecture.md#declared-changes-and-wake-rules), and the reclaim loop wakes a pending pod
// only on those. On generated states (both quota arithmetics, flat and tree quotas) and random
// changes of them, a change that none of a rule's declared kinds covers must leave the rule's
// verdict for every asked pod as it was: otherwise a pod the rule refused would sleep through the
// change that admits it. The built-in rules and the test rule of tests/plugins/ are checked, and
// so is every node scorer of the registry: the scores of every node for the pod.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/admission_rule.h"
#include "core/node_score.h"
#include "core/quota_admission.h"
#include "extender/reclaim/quota_tree_reach.h"
#include "policies/admission_rules.h"
#include "policies/node_scorers.h"
#include "tests/support/random_changes.h"

namespace capext {
namespace declared_changes_test {
namespace {

using testing::RandomChanges;
using testing::RandomCluster;

class StateUsage final : public AdmissionUsage {
 public:
  explicit StateUsage(const ClusterState& state) : state_(state) {}
  const ResourceList& UsedOf(int node) const override { return state_.ledger().NodeUsed(node); }
  const AggregateTotals& Totals() const override { return state_.totals(); }

 private:
  const ClusterState& state_;
};

std::string Verdict(const ClusterState& state, const NormalizedPod& pod,
                    const AdmissionRule& rule) {
  const AdmissionPath path = MakeAdmissionPath(state, pod);
  if (path.quota == nullptr) return "no quota";
  const std::string key = pod.Key();
  const Status s = rule.Check(state.semantics(), path, StateUsage(state),
                              Demand{pod.quota_request(), 1, key, {}});
  return std::string(StatusCodeName(s.code())) + " " + s.message();
}

// Every node's score for `pod` under `scorer`, by name.
std::map<std::string, int> Scores(const ClusterState& state, const NormalizedPod& pod,
                                  const NodeScorer& scorer) {
  std::map<std::string, int> out;
  for (const auto& [name, node] : state.nodes()) {
    if (const auto info = state.FindNode(name))
      out[name] = ScoreNode(NodeScoring(&scorer), pod, *info);
  }
  return out;
}

// "name=score ..." for the nodes of `scores` that `other` has too: a node added or removed
// changes the set of nodes, not a score.
std::string Common(const std::map<std::string, int>& scores,
                   const std::map<std::string, int>& other) {
  std::string out;
  for (const auto& [name, score] : scores) {
    if (other.contains(name)) out += name + "=" + std::to_string(score) + " ";
  }
  return out;
}

// The declared kinds `changes` touches for a pod of `ns`, judged on the state before and after.
DeclaredChanges Touched(const std::set<std::string>& tree,
                        const std::set<std::string>& quota_before, const ClusterState& after,
                        const std::string& ns, const ChangeJournal::Changes& changes) {
  DeclaredChanges out = 0;
  if (!changes.nodes.empty()) out |= kChangesOnAnyNode | kChangesOnOneNode;
  if (!changes.pdbs.empty()) out |= kChangesToPdbs;
  // A quota added, removed or changed may reshape the trees: it counts as both quota kinds.
  if (!changes.quotas.empty()) out |= kChangesInTree | kChangesInAnyQuota;
  const std::set<std::string> tree_after = NamespacesOfTheirTrees(after, {ns});
  for (const auto* list : {&changes.usage, &changes.nominations}) {
    for (const auto& changed : *list) {
      if (tree.contains(changed) || tree_after.contains(changed)) out |= kChangesInTree;
      if (quota_before.contains(changed) || after.QuotaFor(changed) != nullptr)
        out |= kChangesInAnyQuota;
    }
  }
  return out;
}

// What a run of CheckDeclaredChanges saw: asks across an undeclared change (each must not
// have moved) and asks whose answer moved on a declared change.
struct DeclaredChangesRun {
  int64_t undeclared = 0, moved_on_declared = 0;
};

// On `seeds` generated clusters (`adjust` may change each case before it is built), 30 random
// changes each: for a pod asked before and after each change, every plugin's answer
// (`observe(state, pod, plugin)`) must stay `same` across a change that touches none of the
// kinds the plugin declares. A change of the pod itself or of a PriorityClass wakes every pod and
// is left out; so are pods without a quota when `quota_pods_only`.
template <class Plugin, class Observe, class Same>
DeclaredChangesRun CheckDeclaredChanges(const std::vector<const Plugin*>& plugins, uint64_t seeds,
                                        bool quota_pods_only,
                                        const std::function<void(testing::ClusterCase&)>& adjust,
                                        Observe observe, Same same) {
  DeclaredChangesRun run;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    RandomCluster gen(seed);
    testing::ClusterCase c = gen.Generate();
    if (adjust) adjust(c);
    ClusterState state;
    testing::BuildDenseState(gen, c, &state);
    state.EnableChangeJournal();
    RandomChanges changes(&gen, c.decode_options());
    for (int step = 0; step < 30; ++step) {
      const NormalizedPod pod = testing::QuestionFor(gen, state, c.decode_options());
      if (quota_pods_only && state.QuotaFor(pod.ns) == nullptr) {
        changes.Apply(&state);
        continue;
      }
      std::vector<decltype(observe(state, pod, *plugins[0]))> before;
      for (const Plugin* plugin : plugins)
        before.push_back(observe(state, pod, *plugin));
      const std::set<std::string> tree = NamespacesOfTheirTrees(state, {pod.ns});
      std::set<std::string> quota_before;
      for (const auto& [key, quota] : state.quota_set().quotas()) {
        if (state.QuotaFor(quota.ns) != nullptr) quota_before.insert(quota.ns);
      }
      const uint64_t since = state.change_journal()->last_sequence();
      const std::string what = changes.Apply(&state);
      const ChangeJournal::Changes seen = state.change_journal()->Since(since);
      const bool own =
          std::find(seen.pods.begin(), seen.pods.end(), pod.store_key()) != seen.pods.end();
      if (seen.overflowed || own || !seen.priority_classes.empty()) continue;
      const DeclaredChanges touched = Touched(tree, quota_before, state, pod.ns, seen);
      for (std::size_t i = 0; i < plugins.size(); ++i) {
        const auto after = observe(state, pod, *plugins[i]);
        if ((plugins[i]->Declared() & touched) != 0) {
          run.moved_on_declared += same(before[i], after) ? 0 : 1;
          continue;
        }
        INFO("seed " << seed << " step " << step << " plugin " << plugins[i]->name() << " pod "
                     << pod.Key() << " after [" << what << "]");
        CHECK(same(before[i], after));
        ++run.undeclared;
      }
    }
  }
  return run;
}

TEST_CASE("an admission rule's verdict moves only on a change it declares", "[plugins][wake]") {
  const AdmissionRule* test_rule = AdmissionRulePolicies().Find("test-at-most-2-pods")->make();
  const std::vector<const AdmissionRule*> rules = {&QuotaMaxRule(), &SumOfMinsRule(), test_rule};
  static const AdmissionRules extra = {test_rule};
  const DeclaredChangesRun run = CheckDeclaredChanges(
      rules, 60, /*quota_pods_only=*/true,
      [](testing::ClusterCase& c) { c.semantics = c.semantics.WithExtraRules(&extra); }, Verdict,
      [](const std::string& a, const std::string& b) { return a == b; });
  // The generator reaches both kinds of case.
  CHECK(run.undeclared > 500);
  CHECK(run.moved_on_declared > 20);
}

TEST_CASE("a node scorer's scores move only on a change it declares", "[plugins][wake]") {
  std::vector<const NodeScorer*> scorers;
  for (const auto& e : NodeScoringPolicies().entries())
    scorers.push_back(e.make());
  const DeclaredChangesRun run = CheckDeclaredChanges(
      scorers, 30, /*quota_pods_only=*/false, {}, Scores,
      [](const std::map<std::string, int>& a, const std::map<std::string, int>& b) {
        return Common(a, b) == Common(b, a);
      });
  // The generator reaches both kinds of case.
  CHECK(run.undeclared > 200);
  CHECK(run.moved_on_declared > 20);
}

}  // namespace
}  // namespace declared_changes_test
}  // namespace capext
