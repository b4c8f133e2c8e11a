// RandomCluster: a seeded generator of clusters (ClusterCase) and of pods to ask about, for the
// differential and equivalence tests of the decision engine. Deterministic per seed (and per
// sequence of calls). It draws, on purpose, what makes decisions differ:
//  - nodes with NoSchedule / NoExecute / PreferNoSchedule taints (some tolerated by pods),
//    zone/rank/pool labels, some unschedulable, varied allocatable (cpu, memory, sometimes
//    nvidia.com/gpu and ephemeral-storage), a few with a small (or no) `pods` allocatable;
//  - PriorityClasses (a global default now and then, preemptionPolicy Never classes, classes
//    pods name that do not exist);
//  - ElasticQuotas in both API groups, with min/max on cpu, memory, pods, GPUs (per model when the
//    accelerator annotation is on), lists absent or partial, sums of mins around the cluster's
//    size, some max below min; namespaces without a quota; a duplicate quota now and then;
//  - pods bound (some overcommitting their node), pending (with selectors, affinity,
//    tolerations), nominated (status.nominatedNodeName, also to a node that is gone), reserved
//    (held room), nominated by our reclaim (held room), terminal, terminating, with
//    spec.priority / priorityClassName / the global default, preemptionPolicy Never, labels PDBs
//    select, init containers (ordinary and sidecar) and overhead, start times with ties;
//  - PodDisruptionBudgets with matchLabels or matchExpressions, disruptedPods.
// Quotas are flat, or (tree_percent of the clusters) a forest of depth 2 to max_quota_depth
// (docs/quota-hierarchy.md): children name their parent through kParentQuotaAnnotation; parents
// govern a namespace with pods of their own or are pure grouping quotas (no pods); the children's
// mins sum to at most the parent's min (sometimes exactly); a child's max is mostly within its
// parent's, sometimes above it (a warning, the parent caps it); now and then one parent is
// invalid (missing, itself, a cycle, the other API group: a root at runtime).
// Thread-safety: one thread per object.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/cluster_case.h"
#include "tests/support/seeded_random.h"

namespace capext::testing {

struct RandomClusterOptions {
  int min_nodes = 1;
  int max_nodes = 8;
  int max_quota_namespaces = 4;  // root quotas of a flat cluster (a forest has 1-2 roots)
  int max_free_namespaces = 2;   // namespaces without a quota
  int max_pods_per_namespace = 9;
  // The deepest quota tree: 1 = every quota is a root; d > 1 = a forest of depth 2..d in
  // `tree_percent` percent of the clusters (the others flat).
  int max_quota_depth = 4;
  int tree_percent = 50;
  // Percent of forests with one invalid parent (missing, itself, a cycle, the other API group),
  // which the runtime treats as a root and validation reports as an error.
  int invalid_parent_percent = 12;
  // Percent of clusters that use the scheduler-plugins semantics.
  int scheduler_plugins_percent = 50;
};

// One quota of the forest, before it becomes an object.
struct PlannedQuota {
  std::string ns;
  std::string name;
  std::string api_group;  // scheduling.x-k8s.io or scheduling.sigs.k8s.io (a tree shares one)
  std::string parent;     // "<namespace>/<name>", empty for a root (may name an invalid parent)
  int depth = 0;          // levels below its root as planned (0 = root)
  bool grouping = false;  // a parent governing an otherwise empty namespace (no pods)
  // A forest's subtrees are loaded unevenly, so that some borrow while others are within their
  // mins: a light quota's namespace gets few pods (a child mostly inherits its parent's load).
  bool light = false;
  // Of a child: the percent of its parent's min it gets (the siblings' sum to at most 100), or
  // -1: what its earlier siblings left. In an exact split every child names every resource of
  // the parent's min and the shares sum to all of it.
  int min_percent = 0;
  bool exact_split = false;
  std::string Key() const { return ns + "/" + name; }
};

// The amounts of a quota's spec.min and spec.max (nullopt: the list is absent), by resource.
struct QuotaLimits {
  using Amounts = std::map<std::string, int64_t>;
  std::optional<Amounts> min;
  std::optional<Amounts> max;
};

// The pod lifecycles the generator draws.
enum class PodLifecycle {
  kRunning,        // bound, phase Running, started
  kBoundPending,   // bound, phase Pending (not started yet): counts
  kTerminal,       // bound, Succeeded or Failed: never counts
  kTerminating,    // bound, deletionTimestamp set: still counts
  kPending,        // no node
  kNominated,      // no node, status.nominatedNodeName
  kReserved,       // no node, a /bind reservation (held room)
  kOurNomination,  // no node, our reclaim's nomination (held room)
};

class RandomCluster {
 public:
  explicit RandomCluster(uint64_t seed, RandomClusterOptions options = {});

  // A new cluster (the generator remembers its vocabulary: nodes, namespaces, classes).
  ClusterCase Generate();

  // A pod to ask about, as kube-scheduler sends it: a new pod (mostly), or one of `c`'s pending
  // pods that holds no reservation, exactly as the case has it.
  JsonTree Question(const ClusterCase& c);
  // A new pod of `ns` (any namespace) in `lifecycle`; bound lifecycles go to `node`.
  JsonTree NewPod(const std::string& ns, PodLifecycle lifecycle, const std::string& node);
  // A node object named `name`.
  JsonTree NewNode(const std::string& name);
  // An ElasticQuota object for `plan`: a root's mins are drawn around the cluster's size, a
  // child's within its parent's (drawn earlier by this generator: plans come parents first).
  JsonTree NewQuota(const PlannedQuota& plan);
  // A new version of the quota of `ns` (a quota namespace of the last cluster): new limits, and
  // now and then another parent (or none), as a user edits a quota.
  JsonTree ChangedQuota(const std::string& ns);

  SeededRandom& rng() { return rng_; }
  const std::vector<std::string>& node_names() const { return node_names_; }
  // Namespaces with a quota and pods (grouping quotas' namespaces are not among them).
  const std::vector<std::string>& quota_namespaces() const { return quota_namespaces_; }
  // The last cluster's quotas as planned, parents before children.
  const std::vector<PlannedQuota>& quota_plans() const { return plans_; }
  const std::vector<std::string>& free_namespaces() const { return free_namespaces_; }
  const std::vector<std::string>& class_names() const { return class_names_; }
  const std::string& accelerator_annotation() const { return accelerator_annotation_; }
  // A namespace of the cluster (quota or free).
  std::string AnyNamespace();
  // A fresh pod name and uid suffix.
  std::string FreshName(const std::string& prefix);
  // A fresh creation/start time (ties with the previous one now and then).
  int64_t NextTimeMs();

 private:
  std::vector<PlannedQuota> PlanQuotas();
  // Makes one parent of a forest invalid (REQUIRES: some quota has a parent).
  void BreakAParent(std::vector<PlannedQuota>* plans);
  QuotaLimits RootLimits(int depth);
  QuotaLimits ChildLimits(const PlannedQuota& plan, const QuotaLimits& parent);
  std::vector<JsonTree> PriorityClasses();
  JsonTree NewPdb(const ClusterCase& c, const std::string& ns);
  void AddPods(ClusterCase* c, const std::string& ns);
  PodLifecycle DrawLifecycle();
  // Requests, containers and init containers, overhead.
  void FillContainers(JsonTree* spec, int size_class);
  // nodeSelector, affinity, tolerations (pending pods and questions).
  void FillConstraints(JsonTree* spec);
  void FillPriority(JsonTree* spec);
  // Which node a bound pod goes to (by the generator's own rough accounting), or "" when none.
  std::string PlaceBound(int64_t cpu_milli);

  SeededRandom rng_;
  RandomClusterOptions options_;
  std::vector<std::string> node_names_;
  std::vector<int64_t> node_cpu_;               // allocatable cpu (milli), by node
  std::vector<int64_t> node_used_;              // the generator's rough cpu accounting, by node
  std::map<std::string, int64_t> ns_cpu_used_;  // ... and by namespace
  int64_t total_cpu_ = 0;
  int64_t total_memory_ = 0;
  int64_t total_gpu_ = 0;
  std::vector<std::string> quota_namespaces_;
  std::vector<PlannedQuota> plans_;
  std::map<std::string, QuotaLimits> limits_;  // by "<namespace>/<name>"
  // By parent key: what is left of its min for the children drawn after (exact splits).
  std::map<std::string, QuotaLimits::Amounts> min_left_;
  std::vector<std::string> free_namespaces_;
  std::vector<std::string> class_names_;  // the classes pods may name (some never created)
  std::string accelerator_annotation_;
  QuotaSemantics semantics_ = QuotaSemantics::kCapacityExtender;
  bool forest_ = false;                 // the last cluster's quotas form trees
  int64_t now_ms_ = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
  int counter_ = 0;
  int64_t last_cpu_ = 0;  // the cpu request of the pod FillContainers drew last
};

}  // namespace capext::testing
