// ClusterState: nodes, pods, quotas, priority classes and PDBs, with incremental add/update/delete
// of any object, plus the reservations (/bind, capacity-semantics 2) and nominations (reclaim,
// section 4) that hold capacity for pods not yet seen bound. The live cache, the embedded
// snapshot and the simulator all drive it; every decision reads it.
//
// Usage invariants, kept by every mutation:
//  - a pod counts (on its node and in its namespace's usage) iff it is bound and not terminal;
//  - a reservation counts on its node and in its namespace until the pod is seen bound, the
//    reservation is released, or it expires;
//  - nominations never count as usage; decisions add them where the semantics say so.
// Time is passed in (milliseconds); nothing here reads a clock.
// Thread-safety: none. One writer at a time; readers must not overlap a writer.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/name_index.h"
#include "core/node.h"
#include "core/pod.h"
#include "core/pod_name_index.h"
#include "core/priority_class.h"
#include "core/quota_book.h"

namespace capext {

// What is bound (or reserved) on one node.
struct NodeUsage {
  std::vector<const Pod*> pods;  // counted pods, in arrival order (owned by the ClusterState)
  ResourceList requested;        // their requests + reservations on this node
  int32_t pod_count = 0;         // counted pods + reservations
};

// Kept per node so that a node fit can be decided for most nodes without any ResourceList
// lookup (see NodeFitScreen in node_fit.h): the room left for the resources nearly every pod
// requests, and whether anything else on the node needs the full check.
struct NodeFitSummary {
  int64_t free_cpu = 0;  // allocatable - requested, saturating
  int64_t free_memory = 0;
  int64_t free_ephemeral_storage = 0;
  int64_t free_pods = std::numeric_limits<int64_t>::max();  // unlimited without "pods"
  bool static_checks = false;  // spec.unschedulable, or a NoSchedule/NoExecute taint
  int32_t nominations = 0;     // nominations naming the node (an upper bound: ours + status)
};

// Everything the state knows under one node name: the Node (nullptr while only pods,
// reservations or nominations name it), its usage and its fit summary (first: what /filter reads
// for most nodes is on one cache line).
struct NodeRecord {
  NodeFitSummary fit;
  const Node* node = nullptr;
  NodeUsage usage;
  std::string name;
};

// A view of one node: valid while the ClusterState is not modified (no copy of the Node: this is
// built for every candidate node of every /filter call).
struct NodeInfo {
  const Node& node;
  const NodeUsage* usage = nullptr;  // never null for a NodeInfo handed out by ClusterState
};

struct Reservation {
  std::string uid;
  std::string ns;
  std::string node;
  ResourceList node_request;
  ResourceList quota_request;
  int64_t expires_ms = 0;
};

// Capacity held for a pending pod on a node. `ours` = made by our reclaim controller (with a
// TTL); otherwise it mirrors the pod's status.nominatedNodeName (kube-scheduler's preemption).
struct Nomination {
  std::string uid;
  std::string ns;
  std::string node;
  int32_t priority = 0;
  ResourceList node_request;
  ResourceList quota_request;
  bool ours = false;
  int64_t expires_ms = 0;
};

// Transparent hashing for maps keyed by std::string, so lookups by string_view allocate nothing.
struct StringKeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return HashName(s); }
};

class ClusterState {
 public:
  // Pods by uid ("namespace/name" for a pod without one).
  using PodMap = std::unordered_map<std::string, Pod, StringKeyHash, std::equal_to<>>;

  explicit ClusterState(QuotaSemantics semantics = QuotaSemantics::kCapacityExtender);
  // Copies re-point the node records at the copy's own nodes and pods.
  ClusterState(const ClusterState& other);
  ClusterState& operator=(const ClusterState& other);
  ClusterState(ClusterState&&) = default;
  ClusterState& operator=(ClusterState&&) = default;

  QuotaSemantics semantics() const { return book_.semantics(); }

  // --- objects -----------------------------------------------------------------------------
  void UpsertNode(Node node);
  void DeleteNode(std::string_view name);
  // A pod without a uid is keyed by "namespace/name". Bound and terminal pods are kept without
  // their scheduling constraints (node_selector, tolerations, required_affinity, scheduler_name):
  // no decision reads them once a pod has a node.
  void UpsertPod(Pod pod);
  void DeletePod(std::string_view uid);
  // Returns false when another quota already governs the namespace (the new one is ignored).
  bool UpsertQuota(const ElasticQuota& quota);
  void DeleteQuota(std::string_view ns, std::string_view name);
  void UpsertPriorityClass(const PriorityClass& pc);
  void DeletePriorityClass(std::string_view name);
  void UpsertPdb(const PodDisruptionBudget& pdb);
  void DeletePdb(std::string_view ns, std::string_view name);

  // --- reservations and nominations ----------------------------------------------------------
  // Holds the pod's request on `node` and in its quota until the pod is seen bound, released or
  // `expires_ms` passes. REQUIRES: the pod is known. Idempotent for the same uid and node.
  void Reserve(std::string_view uid, std::string_view node, int64_t expires_ms);
  void ReleaseReservation(std::string_view uid);
  const Reservation* FindReservation(std::string_view uid) const;
  const std::unordered_map<std::string, Reservation>& reservations() const { return reservations_; }

  // Records our own nomination of a pending pod to `node`. REQUIRES: the pod is known.
  void Nominate(std::string_view uid, std::string_view node, int64_t expires_ms);
  void ReleaseNomination(std::string_view uid);
  // Every nomination in force: ours, then pending pods' status.nominatedNodeName (ours wins for
  // a pod that has both), ordered by uid.
  std::vector<Nomination> Nominations() const;
  // Calls f(const Nomination&) for each nomination in the order of Nominations(), without
  // copying. Cheap when there are none.
  template <typename F>
  void ForEachNomination(F&& f) const {
    for (const auto& [uid, n] : our_nominations_)
      f(n);
    for (const auto& [uid, n] : status_nominations_) {
      if (our_nominations_.count(uid) == 0) f(n);
    }
  }
  bool HasNominations() const { return !our_nominations_.empty() || !status_nominations_.empty(); }
  const Nomination* FindOurNomination(std::string_view uid) const;

  // Drops reservations and our nominations whose expiry is <= now_ms; returns their uids.
  std::vector<std::string> Expire(int64_t now_ms);

  // --- queries -------------------------------------------------------------------------------
  const Pod* FindPod(std::string_view uid) const;
  const Pod* FindPodByName(std::string_view ns, std::string_view name) const;
  std::optional<NodeInfo> FindNode(std::string_view name) const;
  // The record of `name` (a hash lookup, no allocation), or nullptr when nothing names it.
  const NodeRecord* FindNodeRecord(std::string_view name) const;
  const std::map<std::string, Node, std::less<>>& nodes() const { return nodes_; }
  const NodeUsage& UsageOf(std::string_view node) const;
  const PodMap& pods() const { return pods_; }
  const QuotaBook& quotas() const { return book_; }
  const std::map<std::string, PriorityClass, std::less<>>& priority_classes() const {
    return priority_classes_;
  }
  const std::vector<PodDisruptionBudget>& pdbs() const { return pdbs_; }

  // Counted pods of `node`, in arrival order.
  std::vector<const Pod*> PodsOnNode(std::string_view node) const;
  // Pods that are not bound, not terminal and not reserved, in scheduling order (priority
  // descending, then creation time, then uid).
  std::vector<const Pod*> PendingPods() const;

  // The request of `pod` as its quota counts it (QuotaRequestOf under this state's semantics).
  ResourceList QuotaRequest(const Pod& pod) const { return QuotaRequestOf(semantics(), pod); }

  // Increases on every change; lets callers cache derived data.
  uint64_t version() const { return version_; }

 private:
  bool Counts(const Pod& pod) const { return pod.IsBound() && !pod.IsTerminal(); }
  void AddContribution(const Pod& pod);
  void RemoveContribution(const Pod& pod);
  void ResolvePriority(Pod* pod) const;
  void ResolveAllPriorities();
  std::string KeyOf(const Pod& pod) const;
  // Drops `pod` from the by-name index when it is the pod found under its name.
  void ForgetName(const Pod& pod);

  // Node records: found or created by name; dropped once nothing names them any more.
  NodeRecord* FindRecord(std::string_view name);
  NodeRecord& RecordFor(std::string_view name);
  // REQUIRES: `record` is in use (found by FindRecord or made by RecordFor).
  void MaybeDropRecord(NodeRecord& record);
  void RefreshFit(NodeRecord& record);
  // Every change of the nomination maps goes through these (they keep the per-node counts).
  using NominationMap = std::map<std::string, Nomination, std::less<>>;
  void PutNomination(NominationMap& map, Nomination nomination);
  void EraseNomination(NominationMap& map, std::string_view uid);

  QuotaBook book_;
  std::map<std::string, Node, std::less<>> nodes_;
  // One record per node name (nodes, and names only pods or nominations mention), found through
  // a flat hash index; freed slots are reused. References into records_ are valid until the next
  // change of the state (as every view handed out).
  std::vector<NodeRecord> records_;
  std::vector<uint32_t> free_records_;
  NameIndex record_index_;
  PodMap pods_;
  // The pods by namespace and name (the latest upserted one when two share a name).
  PodNameIndex pods_by_name_;
  std::map<std::string, PriorityClass, std::less<>> priority_classes_;
  std::vector<PodDisruptionBudget> pdbs_;
  std::unordered_map<std::string, Reservation> reservations_;  // by uid
  NominationMap our_nominations_;                              // by uid
  // Pending pods' status.nominatedNodeName, kept in step with the pods.
  NominationMap status_nominations_;  // by uid
  uint64_t version_ = 0;
};

}  // namespace capext
