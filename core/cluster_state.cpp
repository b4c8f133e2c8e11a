#include "core/cluster_state.h"

#include <algorithm>
#include <limits>

#include "core/dense_nodes.h"
#include "core/group_view.h"

namespace capext {

ClusterState::ClusterState(QuotaSemantics semantics) : store_(semantics), ledger_(semantics) {}

ClusterState::ClusterState(const ClusterState& other) : ClusterState(other, WithoutDenseNodes{}) {
  if (other.dense_nodes() != nullptr) EnableDenseNodes(other.dense_nodes()->dims());
}

ClusterState::ClusterState(const ClusterState& other, WithoutDenseNodes)
    : ClusterState(other.semantics()) {
  // Before the pods, so that no hold is derived from a revoked admission.
  revocations_ = other.revocations_;
  for (const auto& [name, pc] : other.priority_classes())
    UpsertPriorityClass(pc);
  // The DRA objects before the pods that name them.
  SetDeviceClassMappings(other.devices().mappings());
  for (const auto& [name, entry] : other.devices().classes())
    UpsertDeviceClass(entry.device_class);
  for (const auto& [key, claim] : other.devices().claims())
    UpsertResourceClaim(claim);
  for (const auto& [key, tmpl] : other.devices().templates())
    UpsertResourceClaimTemplate(tmpl);
  for (const auto& [name, node] : other.nodes())
    UpsertNode(node);
  for (const auto& [ns, quota] : other.quota_set().quotas())
    UpsertQuota(quota);
  for (const auto& quota : other.quota_set().duplicates())
    UpsertQuota(quota);
  for (const auto& pdb : other.pdbs())
    UpsertPdb(pdb);
  // Each node's pods, bound and reserved, in arrival order (victim order breaks ties by it), then
  // the rest, then the reservations left (on names without a Node, or without a node).
  for (const auto& [name, node] : other.nodes()) {
    for (const NormalizedPod* pod : other.UsageOf(name).pods) {
      UpsertPod(*pod);
      if (const Reservation* r = other.FindReservation(pod->store_key()))
        Reserve(r->uid, r->node, r->reserved_ms, r->expires_ms);
    }
  }
  for (const auto& [key, pod] : other.pods()) {
    if (FindPod(key) == nullptr) UpsertPod(pod);
  }
  for (const auto& [key, r] : other.reservations()) {
    if (FindReservation(key) == nullptr) Reserve(key, r.node, r.reserved_ms, r.expires_ms);
  }
  for (const auto& [key, n] : other.ledger().our_nominations())
    Nominate(key, n.node, n.expires_ms);
  for (const auto& [key, record] : other.groups_) {
    if (record.spec) UpsertPodGroup(*record.spec);
  }
  for (const auto& [key, h] : other.holds()) {
    if (!h.derived) Hold(key, h.held_ms, h.expires_ms);
  }
  // After the pods: a copied pod never ends a copied creation hold.
  for (const auto& [key, hold] : other.creation_holds_)
    PutCreationHold(hold);
  suspended_holds_ = other.suspended_holds_;
  suspended_nominations_ = other.suspended_nominations_;
  for (const auto& [key, record] : other.groups_) {
    auto it = groups_.find(key);
    if (it == groups_.end()) continue;
    if ((record.complete && !it->second.complete) || !record.orphaned.empty()) {
      it->second.complete = it->second.complete || record.complete;
      it->second.orphaned = record.orphaned;
      RefreshGroup(key);
    }
  }
  version_ = other.version_;
}

ClusterState& ClusterState::operator=(const ClusterState& other) {
  if (this != &other) *this = ClusterState(other);
  return *this;
}

// --- objects -------------------------------------------------------------------------------------

void ClusterState::UpsertNode(Node node) {
  ++version_;
  if (journal_) {
    const NodeRecord* before = nodes_.Find(node.name);
    journal_->NodeUpserted(before != nullptr ? before->node : nullptr, node);
  }
  nodes_.Upsert(std::move(node));
}

void ClusterState::DeleteNode(std::string_view name) {
  ++version_;
  if (journal_ && nodes_.Find(name) != nullptr) journal_->Record(ChangeJournal::Kind::kNode, name);
  nodes_.Delete(name);
}

void ClusterState::AddContribution(const NormalizedPod& pod) {
  nodes_.AddPod(pod.node_name, pod);
  ledger_.ChangeUsage(store_.quota_set(), pod.ns, pod.quota_request(), false, +1);
}

void ClusterState::RemoveContribution(const NormalizedPod& pod) {
  nodes_.RemovePod(pod.node_name, pod);
  ledger_.ChangeUsage(store_.quota_set(), pod.ns, pod.quota_request(), false, -1);
}

namespace {

// Scheduling constraints matter only while a pod waits for a node: a bound pod never goes back
// to pending (a re-created pod is a new pod), so they are not kept.
void DropConstraintsOfPlaced(Pod* pod) {
  if (!pod->IsBound() && !pod->IsTerminal()) return;
  pod->node_selector = Labels();
  std::vector<Toleration>().swap(pod->tolerations);
  std::vector<NodeSelectorTerm>().swap(pod->required_affinity);
  pod->scheduler_name.clear();
  pod->reclaim_record.clear();
}

}  // namespace

void ClusterState::UpsertPod(Pod raw) {
  DropConstraintsOfPlaced(&raw);
  UpsertPod(store_.normalizer().Normalize(std::move(raw)));
}

void ClusterState::UpsertPod(NormalizedPod pod) {
  DeviceCatalog& devices = store_.devices();
  const DeviceDemand* demand = pod.device_demand();
  // The watch path of pods without claims: nothing more than the check.
  if (demand == nullptr && (!devices.HasPodRefs() || !devices.HasPodRefs(pod.store_key()))) {
    FilePod(std::move(pod));
    return;
  }
  const std::string key = pod.store_key();
  std::vector<std::string> settle = devices.ClaimsOfPod(key);
  const bool names_claims = demand != nullptr;
  if (names_claims) {
    settle.insert(settle.end(), demand->claims.begin(), demand->claims.end());
    devices.SetPodRefs(key, demand->claims, demand->templates);
  } else {
    devices.SetPodRefs(key, {}, {});
  }
  FilePod(std::move(pod));
  SettleClaims(settle);
  // A pod normalised earlier (a simulator's prototype) may carry the charge of holders that have
  // changed since; settling re-files it only when the holders change now. Charged as of now
  // (docs/devices.md#5-a-shared-claim-is-charged-once); a no-op for a pod normalised just before.
  if (names_claims) RefilePods({key});
}

void ClusterState::FilePod(NormalizedPod pod) {
  ++version_;
  DropConstraintsOfPlaced(&pod);
  const std::string key = pod.store_key();
  // Each lookup below is skipped when its map is empty (the simulator's and most watch events'
  // case): a hash lookup per pod event was a tenth of the simulator's time.
  const bool was_member_on_node = !groups_.empty() && GroupMemberOnNode(key);
  const bool any_reservation = !ledger_.reservations().empty();
  // A reservation turns into ordinary usage once the pod is seen bound (or ends with the pod).
  if (Counts(pod) || pod.IsTerminal()) {
    if (any_reservation) DropReservation(key, /*pending_again=*/false);
    suspended_nominations_.erase(key);  // bound or done: its room is no longer held for it
  }
  // Still reserved on a node: the new version of the pod takes the old one's place among the
  // node's pods, as bound there at the reservation time.
  std::string held_node;
  pod.reserved_ms = 0;
  if (const Reservation* r = any_reservation ? PlacedReservation(key) : nullptr) {
    held_node = r->node;
    pod.reserved_ms = r->reserved_ms;
  }
  if (pod.IsBound() || pod.IsTerminal()) ReleaseNomination(key);
  if (!pod.nominated_node_name.empty() && !pod.IsBound() && !pod.IsTerminal() &&
      held_node.empty()) {
    PutNomination(false, Nomination{key, pod.ns, pod.nominated_node_name, pod.priority,
                                    pod.requests, pod.quota_request(), false, 0});
  } else if (ledger_.HasNominations()) {
    EraseNomination(false, key);
  }
  if (journal_) {
    const NormalizedPod* before = store_.FindPod(key);
    // A reserved pod is one of its node's pods: a change of it is a change on that node.
    if (!held_node.empty() && before != nullptr && !SameForDecisions(*before, pod))
      journal_->Record(ChangeJournal::Kind::kNode, held_node);
    journal_->PodUpserted(before, pod);
  }
  GroupKey old_group;
  int64_t old_admitted_ms = 0;
  // The node usage points at the stored pod (its address is stable: unordered_map nodes).
  const NormalizedPod& stored = store_.PutPod(std::move(pod), [&](const NormalizedPod& old) {
    if (!old.group.empty()) old_group = GroupKeyOf(old);
    old_admitted_ms = old.admitted_ms;
    if (QueuedGated(old)) --queued_gated_pods_;
    if (Counts(old)) {
      RemoveContribution(old);
    } else if (!held_node.empty()) {
      nodes_.RemovePod(held_node, old);
    }
  });
  if (Counts(stored)) {
    AddContribution(stored);
  } else if (!held_node.empty()) {
    nodes_.AddPod(held_node, stored);
  }
  if (QueuedGated(stored)) ++queued_gated_pods_;
  SyncHold(stored);
  // Its derived hold (if any) has just taken over from the creation hold, in the same step.
  if (!creation_holds_.empty() && stored.admitted_ms > 0 && stored.admitted_ms != old_admitted_ms)
    EndCreationHold(stored);
  if (!old_group.empty() || !stored.group.empty()) {
    const GroupKey new_group = GroupKeyOf(stored);
    if (old_group != new_group && !old_group.empty()) LeaveGroup(old_group, key);
    if (!new_group.empty()) {
      JoinGroup(new_group, key);  // rebuilds the view
    }
    if (was_member_on_node && !old_group.empty() && (stored.IsTerminal() || old_group != new_group))
      MemberLeftNode(old_group);
  }
}

void ClusterState::DeletePod(std::string_view key) {
  ++version_;
  const std::string owned(key);  // `key` may point into the pod being erased
  std::vector<std::string> claims;
  if (store_.devices().HasPodRefs(owned)) {
    claims = store_.devices().ClaimsOfPod(owned);
    store_.devices().SetPodRefs(owned, {}, {});
  }
  // As in FilePod, lookups in empty maps are skipped.
  const bool was_member_on_node = !groups_.empty() && GroupMemberOnNode(owned);
  GroupKey group;
  store_.ErasePod(owned, [&](const NormalizedPod& pod) {
    if (!pod.group.empty()) group = GroupKeyOf(pod);
    if (QueuedGated(pod)) --queued_gated_pods_;
    if (ledger_.HasHolds()) DropHold(owned);
    revocations_.erase(owned);
    suspended_holds_.erase(owned);
    suspended_nominations_.erase(owned);
    if (journal_) journal_->PodErased(pod);
    if (Counts(pod)) RemoveContribution(pod);
    if (!ledger_.reservations().empty()) DropReservation(owned, /*pending_again=*/false);
    if (ledger_.HasNominations()) {
      ReleaseNomination(owned);
      EraseNomination(false, owned);
    }
  });
  if (!group.empty()) {
    LeaveGroup(group, owned);
    if (was_member_on_node) MemberLeftNode(group);
  }
  SettleClaims(claims);
}

std::vector<const NormalizedPod*> ClusterState::PendingPods() const {
  std::vector<const NormalizedPod*> out;
  for (const auto& [key, pod] : store_.pods()) {
    if (!pod.IsBound() && !pod.IsTerminal() && !pod.IsGated() &&
        ledger_.FindReservation(key) == nullptr)
      out.push_back(&pod);
  }
  std::sort(out.begin(), out.end(), [](const NormalizedPod* a, const NormalizedPod* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->creation_ms != b->creation_ms) return a->creation_ms < b->creation_ms;
    return a->store_key() < b->store_key();
  });
  return out;
}

bool ClusterState::UpsertQuota(const ElasticQuota& quota) {
  ++version_;
  const bool differs = journal_ && ChangeJournal::QuotaSpecDiffers(QuotaFor(quota.ns), quota);
  const bool used = store_.quota_set().Upsert(quota);
  if (used) ledger_.RebuildQuotas(store_.quota_set());
  if (used && differs) journal_->Record(ChangeJournal::Kind::kQuota, quota.ns);
  return used;
}

void ClusterState::DeleteQuota(std::string_view ns, std::string_view name) {
  ++version_;
  if (!store_.quota_set().Delete(ns, name)) return;
  ledger_.RebuildQuotas(store_.quota_set());
  if (journal_) journal_->Record(ChangeJournal::Kind::kQuota, ns);
}

void ClusterState::UpsertPriorityClass(const PriorityClass& pc) {
  ++version_;
  if (journal_) {
    auto it = store_.priority_classes().find(pc.name);
    journal_->PriorityClassUpserted(it == store_.priority_classes().end() ? nullptr : &it->second,
                                    pc);
  }
  store_.UpsertPriorityClass(pc);
  ResolvePriorities();
}

void ClusterState::DeletePriorityClass(std::string_view name) {
  ++version_;
  if (!store_.DeletePriorityClass(name)) return;
  if (journal_) journal_->Record(ChangeJournal::Kind::kPriorityClass, name);
  ResolvePriorities();
}

void ClusterState::ResolvePriorities() {
  bool counted_changed = false;
  store_.RefreshPriorities([&](const NormalizedPod& pod) {
    for (bool ours : {true, false}) {
      auto& map = ledger_.nominations(ours);
      if (auto it = map.find(pod.store_key()); it != map.end()) it->second.priority = pod.priority;
    }
    counted_changed =
        counted_changed || Counts(pod) || PlacedReservation(pod.store_key()) != nullptr;
  });
  // The dense mirror files the pods on each node by priority.
  if (counted_changed) nodes_.PrioritiesChanged();
}

void ClusterState::UpsertPdb(const PodDisruptionBudget& pdb) {
  ++version_;
  if (journal_) journal_->Record(ChangeJournal::Kind::kPdb, pdb.ns);
  store_.UpsertPdb(pdb);
}

void ClusterState::DeletePdb(std::string_view ns, std::string_view name) {
  ++version_;
  if (journal_) journal_->Record(ChangeJournal::Kind::kPdb, ns);
  store_.DeletePdb(ns, name);
}

// --- reservations and nominations ----------------------------------------------------------------

void ClusterState::Reserve(std::string_view key, std::string_view node, int64_t reserved_ms,
                           int64_t expires_ms) {
  const NormalizedPod* pod = store_.FindPod(key);
  if (pod == nullptr || pod->IsBound() || pod->IsTerminal()) return;
  ++version_;
  // The bind's reservation now holds the room our reclaim nominated for the pod: counting both
  // would charge the pod twice until the watch shows it bound. Kept aside, for a bind that fails.
  if (const Nomination* ours = ledger_.FindOurNomination(key)) {
    suspended_nominations_[pod->store_key()] = {ours->node, ours->expires_ms};
  }
  ReleaseNomination(key);
  if (const Reservation* existing = ledger_.FindReservation(key)) {
    if (existing->node == node) {
      ledger_.RenewReservation(key, expires_ms);
      return;
    }
    DropReservation(key, /*pending_again=*/false);
  }
  Reservation r{pod->store_key(),     pod->ns,     std::string(node),
                pod->quota_request(), reserved_ms, expires_ms};
  // The reservation takes the hold's place (never both); an explicit hold comes back if the
  // bind fails, a derived one is derived again.
  if (const QuotaHold* h = ledger_.FindHold(key); h != nullptr && !r.node.empty()) {
    if (!h->derived) suspended_holds_[r.uid] = {h->held_ms, h->expires_ms};
    DropHold(r.uid);
  }
  if (!r.node.empty()) {
    // The pod bound there, started now (docs/capacity-semantics.md#4-victims-on-one-node, "Order";
    // docs/capacity-semantics.md#6-accounting-used-reservations-nominations): among the node's
    // pods, and its status.nominatedNodeName holds no room (a bound pod's does not).
    EraseNomination(false, r.uid);
    store_.SetReservedMs(r.uid, reserved_ms);
    nodes_.AddPod(r.node, *pod);
  }
  if (journal_) journal_->ReservationChanged(r.uid, r.ns, r.node);
  const std::string owned = r.uid;
  ledger_.AddReservation(store_.quota_set(), std::move(r));
  SettleClaims(store_.devices().ClaimsOfPod(owned));
  RefreshGroupOfKey(owned);
}

void ClusterState::ReleaseReservation(std::string_view key) {
  const std::string owned(key);
  DropReservation(owned, /*pending_again=*/true);
  SettleClaims(store_.devices().ClaimsOfPod(owned));
}

const Reservation* ClusterState::PlacedReservation(std::string_view key) const {
  const Reservation* r = ledger_.FindReservation(key);
  return r != nullptr && !r->node.empty() ? r : nullptr;
}

void ClusterState::DropReservation(std::string_view key, bool pending_again) {
  Reservation removed;
  if (!ledger_.RemoveReservation(store_.quota_set(), key, &removed)) return;
  ++version_;
  if (!removed.node.empty()) {
    if (const NormalizedPod* pod = store_.FindPod(removed.uid)) {
      nodes_.RemovePod(removed.node, *pod);
      store_.SetReservedMs(removed.uid, 0);
      if (pending_again && !pod->nominated_node_name.empty() && !pod->IsBound() &&
          !pod->IsTerminal()) {
        PutNomination(false,
                      Nomination{removed.uid, pod->ns, pod->nominated_node_name, pod->priority,
                                 pod->requests, pod->quota_request(), false, 0});
      }
    }
  }
  if (journal_) journal_->ReservationChanged(removed.uid, removed.ns, removed.node);
  if (const NormalizedPod* pod = store_.FindPod(removed.uid)) {
    if (pending_again) {
      auto s = suspended_holds_.find(removed.uid);
      if (s != suspended_holds_.end()) {
        const auto [held_ms, expires_ms] = s->second;
        suspended_holds_.erase(s);
        Hold(removed.uid, held_ms, expires_ms);
      }
      SyncHold(*pod);
      auto n = suspended_nominations_.find(removed.uid);
      if (n != suspended_nominations_.end()) {
        const auto [node, expires_ms] = n->second;
        suspended_nominations_.erase(n);
        if (!pod->IsBound() && !pod->IsTerminal()) Nominate(removed.uid, node, expires_ms);
      }
    } else {
      suspended_holds_.erase(removed.uid);
    }
    RefreshGroupOfKey(removed.uid);
  }
}

void ClusterState::Nominate(std::string_view key, std::string_view node, int64_t expires_ms) {
  const NormalizedPod* pod = store_.FindPod(key);
  if (pod == nullptr) return;
  ++version_;
  PutNomination(true, Nomination{pod->store_key(), pod->ns, std::string(node), pod->priority,
                                 pod->requests, pod->quota_request(), true, expires_ms});
}

void ClusterState::ReleaseNomination(std::string_view key) {
  if (ledger_.FindOurNomination(key) == nullptr) return;
  ++version_;
  EraseNomination(true, key);
}

void ClusterState::PutNomination(bool ours, Nomination nomination) {
  auto& map = ledger_.nominations(ours);
  auto it = map.find(nomination.uid);
  if (it != map.end()) {
    if (it->second.node == nomination.node) {
      if (journal_ && (it->second.priority != nomination.priority ||
                       it->second.node_request != nomination.node_request ||
                       it->second.quota_request != nomination.quota_request)) {
        journal_->NominationChanged(nomination.uid, nomination.ns, nomination.node);
      }
      it->second = std::move(nomination);
      return;
    }
    EraseNomination(ours, nomination.uid);
  }
  nodes_.ChangeNominations(nomination.node, +1);
  if (journal_) journal_->NominationChanged(nomination.uid, nomination.ns, nomination.node);
  std::string key = nomination.uid;
  map.emplace(std::move(key), std::move(nomination));
}

void ClusterState::EraseNomination(bool ours, std::string_view key) {
  auto& map = ledger_.nominations(ours);
  auto it = map.find(key);
  if (it == map.end()) return;
  nodes_.ChangeNominations(it->second.node, -1);
  if (journal_) journal_->NominationChanged(it->second.uid, it->second.ns, it->second.node);
  map.erase(it);
}

std::vector<Nomination> ClusterState::Nominations() const {
  std::vector<Nomination> out;
  ForEachNomination([&](const Nomination& n) { out.push_back(n); });
  return out;
}

std::vector<std::string> ClusterState::Expire(int64_t now_ms) {
  if (!revocations_.empty()) ExpireRevocations(now_ms);
  if (!creation_holds_.empty()) ExpireCreationHolds(now_ms);
  std::vector<std::string> expired = ledger_.Expired(now_ms);
  for (const auto& key : expired) {
    if (const Reservation* r = ledger_.FindReservation(key); r && r->expires_ms <= now_ms)
      ReleaseReservation(key);
    if (const Nomination* n = ledger_.FindOurNomination(key); n && n->expires_ms <= now_ms)
      ReleaseNomination(key);
    if (const QuotaHold* h = ledger_.FindHold(key); h && !h->derived && h->expires_ms <= now_ms)
      ReleaseHold(key);
  }
  return expired;
}

}  // namespace capext
