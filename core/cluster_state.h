// ClusterState: what every decision reads. It pairs the object store (pods, quotas, priority
// classes, PDBs), the node table (nodes and what is on them) and the quota ledger (usage,
// reservations, nominations), and is the only writer of all three. The live cache, the embedded
// snapshot and the simulator all drive it.
//
// Invariants, kept by every change:
//  - every stored pod is normalised (ObjectStore holds NormalizedPods; raw pods enter through
//    UpsertPod, which normalises them);
//  - a pod counts (on its node and in its namespace's usage) iff it is bound and not terminal;
//  - a reservation counts in its namespace until the pod is seen bound, the reservation is
//    released, or it expires; one with a node is, for every decision, the pod bound to that node
//    (docs/capacity-semantics.md#6-accounting-used-reservations-nominations, "A reserved pod is a
//    bound pod"): the pod is among the node's pods (NodeUsage::pods, the dense mirror) with
//    Pod::reserved_ms set to the reservation time, and its status.nominatedNodeName holds no room
//    meanwhile;
//  - a nomination never counts as usage; it is counted per node (NodeFitSummary::nominations)
//    so that decisions know where to add it;
//  - a pending pod's status.nominatedNodeName is mirrored as a (non-ours) nomination while it
//    holds no reservation on a node;
//  - a pod's quota request includes the devices of its ResourceClaims (docs/devices.md): every
//    stored pod is normalised against the current claims, templates, classes and claim holders,
//    so a change of any of them re-files the pods it concerns; a claim held by several pods
//    (bound, or reserved) is in exactly one holder's request, its carrier's.
//  - a hold (quota only, no node: docs/workloads.md#2-holds-quota-without-a-node) counts in its
//  namespace's used
//    while the pod is pending, ungated and holds no reservation: a pod is held, reserved or
//    counted as bound, never two of them. A pending, ungated pod with an admitted-at annotation
//    has a derived hold (so holds survive a restart) unless its admission is revoked with that
//    annotation's value (RevokeAdmission); others are made by Hold;
//  - a creation hold (HoldAtCreation) counts in its namespace's used like a hold, for a pod not
//    stored yet; the first stored pod of that namespace with that admitted-at ends it, so the
//    pod's request is never counted twice nor left out;
//  - every pod naming a group is a member of that group's view (GroupView), rebuilt whenever a
//    member, a hold, a reservation or the group's PodGroupSpec changes.
// Time is passed in (milliseconds); nothing here reads a clock.
// Thread-safety: none. One writer at a time; readers must not overlap a writer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/change_journal.h"
#include "core/node_table.h"
#include "core/object_store.h"
#include "core/pod_group.h"
#include "core/quota_ledger.h"

namespace capext {

class ClusterState {
 public:
  using PodMap = ObjectStore::PodMap;

  explicit ClusterState(QuotaSemantics semantics = QuotaSemantics::kCapacityExtender);
  // A copy replays the objects, reservations and nominations into a new state.
  ClusterState(const ClusterState& other);
  // The same copy without the dense mirror of the nodes (EnableDenseNodes): for what-ifs that
  // never search over every node (the admission queue's round), where rebuilding the mirror was a
  // fifth of the copy. dense_nodes() is then nullptr; everything else is as in the copy.
  struct WithoutDenseNodes {};
  ClusterState(const ClusterState& other, WithoutDenseNodes);
  ClusterState& operator=(const ClusterState& other);
  ClusterState(ClusterState&&) = default;
  ClusterState& operator=(ClusterState&&) = default;

  QuotaSemantics semantics() const { return ledger_.semantics(); }

  // The normalised form of a pod that is not (or not yet) stored, e.g. one decoded from a
  // request: what decisions about it take. A stored pod is found with FindPod.
  NormalizedPod Normalize(Pod raw) const { return store_.normalizer().Normalize(std::move(raw)); }

  // --- objects -------------------------------------------------------------------------------
  void UpsertNode(Node node);
  void DeleteNode(std::string_view name);
  // Normalises and stores the pod. Bound and terminal pods are kept without their scheduling
  // constraints (node_selector, tolerations, required_affinity, scheduler_name): no decision
  // reads them once a pod has a node.
  void UpsertPod(Pod pod);
  // The same for a pod normalised by this state (Normalize, or a stored pod's copy) and not
  // changed since but for its placement (node, phase, start): skips normalising it again.
  void UpsertPod(NormalizedPod pod);
  void DeletePod(std::string_view key);
  // Returns false when another quota already governs the namespace (the new one is ignored).
  bool UpsertQuota(const ElasticQuota& quota);
  void DeleteQuota(std::string_view ns, std::string_view name);
  void UpsertPriorityClass(const PriorityClass& pc);
  void DeletePriorityClass(std::string_view name);
  void UpsertPdb(const PodDisruptionBudget& pdb);
  void DeletePdb(std::string_view ns, std::string_view name);
  // DRA objects (docs/devices.md); each change re-files the pods whose demand it changes.
  void SetDeviceClassMappings(std::vector<DeviceClassMapping> mappings);
  void UpsertDeviceClass(DeviceClass device_class);
  void DeleteDeviceClass(std::string_view name);
  void UpsertResourceClaim(ResourceClaim claim);
  void DeleteResourceClaim(std::string_view ns, std::string_view name);
  void UpsertResourceClaimTemplate(ResourceClaimTemplate tmpl);
  void DeleteResourceClaimTemplate(std::string_view ns, std::string_view name);
  const DeviceCatalog& devices() const { return store_.devices(); }

  // --- reservations and nominations ----------------------------------------------------------
  // /bind is placing the pod on `node` (at `reserved_ms`): until the pod is seen bound, released
  // or `expires_ms` passes, it is the pod bound there, started at `reserved_ms`, for every
  // decision, and its request counts in its quota. Also releases our nomination of the pod: the
  // reservation now holds its room. Nothing for a pod unknown, bound or terminal (its own
  // accounting holds it). Idempotent for the same key and node (the expiry is renewed; the
  // reservation time stays).
  void Reserve(std::string_view key, std::string_view node, int64_t reserved_ms,
               int64_t expires_ms);
  // The pod is pending again (a failed or expired bind): off the node, out of the usage; our
  // nomination the reservation replaced holds its room again, with its own expiry (Expire drops
  // it if that has passed; docs/capacity-semantics.md#8-the-reclaim-controller), and its
  // status.nominatedNodeName, if any, holds room again.
  void ReleaseReservation(std::string_view key);
  const Reservation* FindReservation(std::string_view key) const {
    return ledger_.FindReservation(key);
  }
  const ReservationMap& reservations() const { return ledger_.reservations(); }
  // Records our own nomination of a pending pod to `node`. REQUIRES: the pod is known.
  void Nominate(std::string_view key, std::string_view node, int64_t expires_ms);
  void ReleaseNomination(std::string_view key);
  // Every nomination in force, in the order of ForEachNomination (copies).
  std::vector<Nomination> Nominations() const;
  template <typename F>
  void ForEachNomination(F&& f) const {
    ledger_.ForEachNomination(std::forward<F>(f));
  }
  bool HasNominations() const { return ledger_.HasNominations(); }
  const Nomination* FindOurNomination(std::string_view key) const {
    return ledger_.FindOurNomination(key);
  }
  // Drops reservations, explicit holds and our nominations whose expiry is <= now_ms; returns
  // their keys. Also ends the revocation records whose expiry is <= now_ms (not returned): a pod
  // still carrying the revoked admitted-at holds again, and is again a member of a gang that
  // lost its core while that gang is starting. And the creation holds whose expiry is <= now_ms
  // (not returned: they have no key).
  std::vector<std::string> Expire(int64_t now_ms);

  // --- holds (quota only, no node: docs/workloads.md#2-holds-quota-without-a-node) ----------
  // Holds the pod's quota request in its namespace (leaf, ancestors, totals), admitted at
  // `held_ms`, until `expires_ms`, the pod binds (its reservation takes the hold's place), is
  // deleted or terminal, or ReleaseHold. Nothing for a pod unknown, bound, terminal, gated or
  // reserved on a node. Idempotent by key: a second call renews the expiry and keeps held_ms.
  void Hold(std::string_view key, int64_t held_ms, int64_t expires_ms);
  // Ends the pod's hold (derived or not; a derived one comes back with the pod's next update if
  // it still carries the admitted-at annotation and is still pending and ungated).
  void ReleaseHold(std::string_view key);
  const QuotaHold* FindHold(std::string_view key) const { return ledger_.FindHold(key); }
  const HoldMap& holds() const { return ledger_.holds(); }

  // --- creation holds (docs/workloads.md#2-holds-quota-without-a-node; gate mode's admission
  // at creation: docs/workloads-live.md#admission-at-creation) ---------------------------------
  // The quota held for a pod admitted before it exists: no uid and maybe no name yet, so it is
  // known by its namespace and its admitted-at time.
  struct CreationHold {
    std::string ns;
    int64_t admitted_ms = 0;
    ResourceList quota_request;
    int64_t expires_ms = 0;
  };
  using CreationHoldMap = std::multimap<std::pair<std::string, int64_t>, CreationHold>;
  // Holds `pod`'s quota request (a pod normalised by this state, not stored) in its namespace
  // (leaf, ancestors, totals), as admitted at `admitted_ms`, until a pod of that namespace
  // carrying that admitted-at is first stored (its derived hold takes over in the same step) or
  // `expires_ms` passes (Expire). Not idempotent: each call is one more admission.
  void HoldAtCreation(const NormalizedPod& pod, int64_t admitted_ms, int64_t expires_ms);
  // Every creation hold, by namespace and admitted-at time.
  const CreationHoldMap& creation_holds() const { return creation_holds_; }
  // The admission queue's size: stored pods that are pending (not bound, not terminal) and carry
  // our gate as their only gate, held (a gate removal in flight) or not.
  std::size_t queued_gated_pods() const { return queued_gated_pods_; }

  // --- revoked admissions (docs/workloads.md#2-holds-quota-without-a-node, "A revoked
  // admission") ---------------------------------------------------------------------------------
  // What a revocation record keeps: the admitted-at it revokes and until when.
  struct AdmissionRevocation {
    int64_t admitted_ms = 0;
    int64_t expires_ms = 0;  // kNoExpiry: made when the pod's gang lost its core
  };
  static constexpr int64_t kNoExpiry = INT64_MAX;
  // Revokes the pod's admission through the gate: ends its derived hold, and no hold is derived
  // from the same admitted-at until the record ends (the pod seen without the annotation or with
  // another admitted-at, bound, terminal or deleted, or `expires_ms` passes: Expire). A gang that
  // loses its core does this itself for its members admitted through the gate, without expiry
  // (they are then GroupView::orphaned until the record ends). Nothing for a pod unknown, bound,
  // terminal, gated or without admitted-at. Idempotent by key: a second call sets the expiry, but
  // never shortens a record without expiry.
  void RevokeAdmission(std::string_view key, int64_t expires_ms);
  // The pod's revocation record, or nullptr.
  const AdmissionRevocation* FindRevocation(std::string_view key) const {
    auto it = revocations_.find(key);
    return it == revocations_.end() ? nullptr : &it->second;
  }

  // --- groups (docs/workloads.md#1-groups) ------------------------------------------------------
  // Stores what the group's PodGroup object says; its minMember takes effect at once.
  void UpsertPodGroup(const PodGroupSpec& spec);
  void DeletePodGroup(const GroupKey& key);
  // The group's view, or nullptr when nothing names the key (no member, no object).
  const GroupView* FindGroup(const GroupKey& key) const;
  // The view of the pod's group, or nullptr when the pod names none.
  const GroupView* GroupOf(const Pod& pod) const;
  // Calls f(const GroupView&) for every group, by key.
  template <typename F>
  void ForEachGroup(F&& f) const {
    for (const auto& [key, record] : groups_)
      f(record.view);
  }
  bool HasGroups() const { return !groups_.empty(); }

  // --- queries -------------------------------------------------------------------------------
  const NormalizedPod* FindPod(std::string_view key) const { return store_.FindPod(key); }
  const NormalizedPod* FindPodByName(std::string_view ns, std::string_view name) const {
    return store_.FindPodByName(ns, name);
  }
  const PodMap& pods() const { return store_.pods(); }
  // Pods that are not bound, not terminal, not gated and not reserved on a node, in scheduling
  // order (priority descending, then creation time, then store key). Held pods are pending.
  std::vector<const NormalizedPod*> PendingPods() const;

  const std::map<std::string, Node, std::less<>>& nodes() const { return nodes_.nodes(); }
  std::optional<NodeInfo> FindNode(std::string_view name) const { return nodes_.FindNode(name); }
  // The record of `name` (a hash lookup, no allocation), or nullptr when nothing names it.
  const NodeRecord* FindNodeRecord(std::string_view name) const { return nodes_.Find(name); }
  const NodeUsage& UsageOf(std::string_view node) const { return nodes_.UsageOf(node); }

  const ElasticQuota* QuotaFor(std::string_view ns) const {
    return store_.quota_set().QuotaFor(ns);
  }
  const QuotaSet& quota_set() const { return store_.quota_set(); }
  const QuotaLedger& ledger() const { return ledger_; }
  // bound + reserved + held usage of the namespace.
  const ResourceList& Used(std::string_view ns) const { return ledger_.Used(ns); }
  const AggregateTotals& totals() const { return ledger_.totals(); }
  const std::map<std::string, PriorityClass, std::less<>>& priority_classes() const {
    return store_.priority_classes();
  }
  const std::vector<PodDisruptionBudget>& pdbs() const { return store_.pdbs(); }

  // Keeps a column-per-resource mirror of the nodes (DenseNodes) for searches over every node;
  // `dims` are the resources to track (cpu and memory always are).
  void EnableDenseNodes(std::vector<ResourceName> dims) { nodes_.EnableDense(std::move(dims)); }
  // The mirror, or nullptr when not enabled.
  const DenseNodes* dense_nodes() const { return nodes_.dense(); }

  // Increases on every change; lets callers cache derived data.
  uint64_t version() const { return version_; }

  // Records every change from now on in a ChangeJournal of `capacity` entries (change_journal.h),
  // replacing any journal kept so far. A copy starts without one (and a state assigned a copy
  // loses its own): readers treat a missing journal as "re-derive everything".
  void EnableChangeJournal(std::size_t capacity = ChangeJournal::kDefaultCapacity) {
    journal_ = std::make_unique<ChangeJournal>(capacity);
  }
  // The journal, or nullptr when not enabled.
  const ChangeJournal* change_journal() const { return journal_.get(); }

 private:
  static bool Counts(const Pod& pod) { return pod.IsBound() && !pod.IsTerminal(); }
  // The reservation placing the pod on a node, or nullptr (none, or a hold without a node).
  const Reservation* PlacedReservation(std::string_view key) const;
  // Ends the pod's reservation; `pending_again`: the pod stays pending (a failed or expired bind,
  // not a binding seen or a deletion), so its status nomination is restored.
  void DropReservation(std::string_view key, bool pending_again);
  // Stores a normalised pod and keeps the accounting in step (UpsertPod without the claim
  // holders, which its callers settle).
  void FilePod(NormalizedPod pod);
  // A pod holds its claims while it counts, holds a reservation or holds quota without a node
  // (docs/devices.md#5-a-shared-claim-is-charged-once).
  bool HoldsClaims(const NormalizedPod& pod) const {
    return Counts(pod) || ledger_.FindReservation(pod.store_key()) != nullptr ||
           ledger_.FindHold(pod.store_key()) != nullptr;
  }
  // Recomputes the holders of each claim and re-files the pods whose request that changes.
  void SettleClaims(const std::vector<std::string>& claims);
  // Normalises the stored pods again and re-files those whose request changed.
  void RefilePods(const std::vector<std::string>& keys);
  void AddContribution(const NormalizedPod& pod);
  void RemoveContribution(const NormalizedPod& pod);
  void PutNomination(bool ours, Nomination nomination);
  // Re-resolves every pod's priority after a PriorityClass change, keeping nominations and the
  // dense mirror in step.
  void ResolvePriorities();
  void EraseNomination(bool ours, std::string_view key);
  // Derives or drops the pod's hold from its state (the admitted-at annotation; see the
  // invariants), after the pod changed.
  void SyncHold(const NormalizedPod& pod);
  void DropHold(std::string_view key);
  // Ends the revocation records whose expiry is <= now_ms (Expire).
  void ExpireRevocations(int64_t now_ms);
  // A pod was stored that carries admitted-at and did not before (new, or another value): ends
  // one creation hold of its namespace with that time, preferring one with its quota request.
  void EndCreationHold(const NormalizedPod& pod);
  // Ends the creation holds whose expiry is <= now_ms (Expire).
  void ExpireCreationHolds(int64_t now_ms);
  void PutCreationHold(CreationHold hold);
  // Takes the hold's request out of its namespace's used; returns the next hold.
  CreationHoldMap::iterator EraseCreationHold(CreationHoldMap::iterator it);
  // Whether the pod is one of queued_gated_pods().
  static bool QueuedGated(const Pod& pod) {
    return pod.quota_gated && !pod.other_gates && !pod.IsBound() && !pod.IsTerminal();
  }
  // Membership bookkeeping, then the view's rebuild.
  void JoinGroup(const GroupKey& group, const std::string& key);
  void LeaveGroup(const GroupKey& group, const std::string& key);
  void RefreshGroup(const GroupKey& group);
  void RefreshGroupOfKey(std::string_view key);
  // A member on a node (bound or reserved) of `group` left it: if the gang is now below its
  // minMember it has lost its core (docs/workloads.md#2-holds-quota-without-a-node).
  void MemberLeftNode(const GroupKey& group);
  // Whether the pod stored under `key` is a group member on a node (bound or reserved).
  bool GroupMemberOnNode(std::string_view key) const;

  struct GroupRecord {
    std::optional<PodGroupSpec> spec;
    std::set<std::string, std::less<>> members;  // store keys
    bool complete = false;
    // Members admitted through the gate (derived holds) when the gang lost its core.
    std::set<std::string, std::less<>> orphaned;
    GroupView view;
  };

  ObjectStore store_;
  NodeTable nodes_;
  QuotaLedger ledger_;
  uint64_t version_ = 0;
  std::unique_ptr<ChangeJournal> journal_;  // null unless enabled
  std::map<GroupKey, GroupRecord> groups_;
  // A held pod's reservation on a node took the place of its explicit hold: the hold's times,
  // restored if the bind fails (a derived hold is re-derived instead).
  std::map<std::string, std::pair<int64_t, int64_t>, std::less<>> suspended_holds_;
  // Revoked admissions, by store key (RevokeAdmission).
  std::map<std::string, AdmissionRevocation, std::less<>> revocations_;
  CreationHoldMap creation_holds_;
  std::size_t queued_gated_pods_ = 0;
  // Likewise our nomination of a pod whose /bind reserved the room: its node and expiry,
  // restored if the bind fails, forgotten when the pod binds or goes.
  std::map<std::string, std::pair<std::string, int64_t>, std::less<>> suspended_nominations_;
};

}  // namespace capext
