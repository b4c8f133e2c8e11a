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
// Quotas are drawn as a forest (QuotaPlan): with quota_depth > 1 children name their parent
// through kParentQuotaAnnotation and their mins fit in the parent's min (capacity-semantics 5).
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
  int max_quota_namespaces = 4;  // root quotas
  int max_free_namespaces = 2;   // namespaces without a quota
  int max_pods_per_namespace = 9;
  // Levels of quotas: 1 = every quota is a root; d > 1 adds children down to depth d.
  int quota_depth = 1;
  // Percent of clusters that use the scheduler-plugins semantics.
  int scheduler_plugins_percent = 50;
};

// One quota of the forest, before it becomes an object.
struct QuotaPlan {
  std::string ns;
  std::string name;
  std::string parent;  // "<namespace>/<name>", empty for a root
  int depth = 0;       // 0 = root
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
  JsonTree NewQuota(const QuotaPlan& plan);

  SeededRandom& rng() { return rng_; }
  const std::vector<std::string>& node_names() const { return node_names_; }
  const std::vector<std::string>& quota_namespaces() const { return quota_namespaces_; }
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
  std::vector<QuotaPlan> PlanQuotas();
  QuotaLimits RootLimits(int depth);
  // REQUIRES: `siblings` >= 1 children share `parent`.
  QuotaLimits ChildLimits(const QuotaLimits& parent, int siblings);
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
  std::vector<int64_t> node_cpu_;   // allocatable cpu (milli), by node
  std::vector<int64_t> node_used_;  // the generator's rough cpu accounting, by node
  int64_t total_cpu_ = 0;
  int64_t total_memory_ = 0;
  int64_t total_gpu_ = 0;
  std::vector<std::string> quota_namespaces_;
  std::map<std::string, QuotaLimits> limits_;  // by "<namespace>/<name>"
  std::map<std::string, int> children_;        // by parent key: how many children it has
  std::vector<std::string> free_namespaces_;
  std::vector<std::string> class_names_;  // the classes pods may name (some never created)
  std::string accelerator_annotation_;
  QuotaSemantics semantics_ = QuotaSemantics::kCapacityExtender;
  int64_t now_ms_ = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
  int counter_ = 0;
  int64_t last_cpu_ = 0;  // the cpu request of the pod FillContainers drew last
};

}  // namespace capext::testing
