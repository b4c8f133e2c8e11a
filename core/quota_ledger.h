// QuotaLedger: the accounting of
// docs/capacity-semantics.md#6-accounting-used-reservations-nominations — what each namespace uses,
// what each node of the quota tree uses (its subtree's usage: docs/quota-hierarchy.md), the
// cluster-wide sums over the root quotas that the aggregated-min check reads, and the capacity held
// for pods not yet seen bound: reservations (made only by /bind, until the watch shows the pod
// bound, or released, or expired) and nominations (ours, made by the reclaim controller with a TTL;
// or mirroring a pending pod's status.nominatedNodeName).
//   used(ns) = requests (as the quota counts them) of the namespace's bound, non-terminal pods
//              + its reservations + its holds (quota held without a node for admitted pods:
//              docs/workloads.md#2-holds-quota-without-a-node).
// Usage is tracked for every namespace, with or without a quota, so that a quota created later
// is right at once. Nominations never count as usage; decisions add them where the semantics
// say so.
// ClusterState is the only writer: it keeps the ledger in step with pods and quotas, and the
// node table in step with reservations and nominations.
// Thread-safety: none; ClusterState serialises writers and readers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/name_index.h"
#include "core/quota_semantics.h"
#include "core/quota_set.h"
#include "core/quota_tree.h"
#include "core/resource_list.h"

namespace capext {

// Capacity held for a pod by /bind while its binding is in flight. A reservation with a node is,
// for every decision, the pod bound to that node
// (docs/capacity-semantics.md#6-accounting-used-reservations-nominations, "A reserved pod is a
// bound pod"): ClusterState files the pod among the node's pods. Here it is the quota part: its
// quota request counts as reserved usage of its namespace. A hold without a node (a later issue)
// is a QuotaHold (below), not a Reservation.
struct Reservation {
  std::string uid;  // the pod's store key
  std::string ns;
  std::string node;  // where /bind places the pod; empty: a hold without a node
  ResourceList quota_request;
  int64_t reserved_ms = 0;  // when it was made: the reserved pod's start for victim order
  int64_t expires_ms = 0;
};

// Quota held for an admitted pod that has no node yet
// (docs/workloads.md#2-holds-quota-without-a-node): counts in used of its namespace's leaf, every
// ancestor and the cluster-wide sums, never on a node, never a victim. `derived`: from the pod's
// admitted-at annotation (gate mode; lasts while the pod is admitted), else explicit (filter mode,
// in-flight gate removals; ends at `expires_ms`).
struct QuotaHold {
  std::string uid;  // the pod's store key
  std::string ns;
  ResourceList quota_request;
  int64_t held_ms = 0;  // when the pod was admitted: its start among admitted members
  int64_t expires_ms = 0;
  bool derived = false;
};

using HoldMap = std::unordered_map<std::string, QuotaHold, StringKeyHash, std::equal_to<>>;

// Capacity held for a pending pod on a node. `ours` = made by our reclaim controller (with a
// TTL); otherwise it mirrors the pod's status.nominatedNodeName (kube-scheduler's preemption).
struct Nomination {
  std::string uid;  // the pod's store key
  std::string ns;
  std::string node;
  int32_t priority = 0;
  ResourceList node_request;
  ResourceList quota_request;
  bool ours = false;
  int64_t expires_ms = 0;
};

using ReservationMap = std::unordered_map<std::string, Reservation, StringKeyHash, std::equal_to<>>;

class QuotaLedger {
 public:
  explicit QuotaLedger(QuotaSemantics semantics) : semantics_(semantics) {}

  QuotaSemantics semantics() const { return semantics_; }

  // --- usage ---------------------------------------------------------------------------------
  enum class Part { kBound, kReserved, kHeld };
  // Adds (sign +1) or removes (-1) `quota_request` to the namespace's bound, reserved or held
  // usage.
  void ChangeUsage(const QuotaSet& quotas, std::string_view ns, const ResourceList& quota_request,
                   Part part, int sign);
  void ChangeUsage(const QuotaSet& quotas, std::string_view ns, const ResourceList& quota_request,
                   bool reserved, int sign) {
    ChangeUsage(quotas, ns, quota_request, reserved ? Part::kReserved : Part::kBound, sign);
  }
  // bound + reserved + held; an empty list for a namespace never seen.
  const ResourceList& Used(std::string_view ns) const;
  const ResourceList& Bound(std::string_view ns) const;
  const ResourceList& Reserved(std::string_view ns) const;
  const ResourceList& Held(std::string_view ns) const;
  // The quota tree, and what each of its nodes uses (the subtree's usage; an own node: its
  // namespace's), kept up to date incrementally along the path of every change.
  const QuotaTree& tree() const { return tree_; }
  const ResourceList& NodeUsed(int node) const { return node_used_[node]; }
  // IsBorrowing(semantics(), tree().quota(node), NodeUsed(node)), kept with the usage: the
  // reclaim search asks it of every quota at every attempt, and usage changes far less often.
  bool NodeBorrowing(int node) const {
    return node_borrowing_[static_cast<std::size_t>(node)] != 0;
  }
  // Cluster-wide sums over the root quotas (the sum-of-mins check), kept up to date incrementally.
  const AggregateTotals& totals() const { return totals_; }
  // Rebuilds the tree, the subtree usage and the sums after the set of quotas changed.
  void RebuildQuotas(const QuotaSet& quotas);

  // --- reservations --------------------------------------------------------------------------
  const Reservation* FindReservation(std::string_view uid) const;
  const ReservationMap& reservations() const { return reservations_; }
  // REQUIRES: no reservation for r.uid. Counts r.quota_request as reserved usage of r.ns.
  void AddReservation(const QuotaSet& quotas, Reservation r);
  // Removes the reservation (and its usage) and returns it; false when there was none.
  bool RemoveReservation(const QuotaSet& quotas, std::string_view uid, Reservation* removed);
  // Extends a reservation's expiry.
  void RenewReservation(std::string_view uid, int64_t expires_ms);

  // --- holds ---------------------------------------------------------------------------------
  const QuotaHold* FindHold(std::string_view uid) const;
  const HoldMap& holds() const { return holds_; }
  bool HasHolds() const { return !holds_.empty(); }
  // Adds h, or replaces the hold of h.uid (its usage follows). Counts h.quota_request as held.
  void PutHold(const QuotaSet& quotas, QuotaHold h);
  // Removes the hold (and its usage) and returns it; false when there was none.
  bool RemoveHold(const QuotaSet& quotas, std::string_view uid, QuotaHold* removed);

  // --- nominations ---------------------------------------------------------------------------
  using NominationMap = std::map<std::string, Nomination, std::less<>>;
  const NominationMap& our_nominations() const { return ours_; }
  const NominationMap& status_nominations() const { return status_; }
  NominationMap& nominations(bool ours) { return ours ? ours_ : status_; }
  const Nomination* FindOurNomination(std::string_view uid) const;
  // Calls f(const Nomination&) for every nomination in force: ours, then pending pods'
  // status.nominatedNodeName (ours wins for a pod that has both), each by uid.
  template <typename F>
  void ForEachNomination(F&& f) const {
    for (const auto& [uid, n] : ours_)
      f(n);
    for (const auto& [uid, n] : status_) {
      if (ours_.count(uid) == 0) f(n);
    }
  }
  bool HasNominations() const { return !ours_.empty() || !status_.empty(); }

  // The store keys of reservations, explicit holds and our nominations whose expiry is <= now_ms,
  // sorted, without duplicates.
  std::vector<std::string> Expired(int64_t now_ms) const;

 private:
  struct Usage {
    ResourceList bound;
    ResourceList reserved;
    ResourceList held;
    ResourceList used;  // bound + reserved + held
  };

  // Sets node_borrowing_[node] from the node's usage.
  void RefreshBorrowing(int node);

  QuotaSemantics semantics_;
  std::map<std::string, Usage, std::less<>> usage_;  // by namespace
  QuotaTree tree_;
  std::vector<ResourceList> node_used_;  // by tree node
  std::vector<uint8_t> node_borrowing_;  // by tree node (NodeBorrowing)
  AggregateTotals totals_;
  ReservationMap reservations_;  // by uid
  HoldMap holds_;                // by uid
  NominationMap ours_;           // by uid
  NominationMap status_;         // by uid
};

}  // namespace capext
