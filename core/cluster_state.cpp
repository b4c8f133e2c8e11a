#include "core/cluster_state.h"

#include <algorithm>

#include "core/dense_nodes.h"

namespace capext {

ClusterState::ClusterState(QuotaSemantics semantics) : store_(semantics), ledger_(semantics) {}

ClusterState::ClusterState(const ClusterState& other) : ClusterState(other.semantics()) {
  for (const auto& [name, pc] : other.priority_classes())
    UpsertPriorityClass(pc);
  for (const auto& [name, node] : other.nodes())
    UpsertNode(node);
  for (const auto& [ns, quota] : other.quota_set().quotas())
    UpsertQuota(quota);
  for (const auto& quota : other.quota_set().duplicates())
    UpsertQuota(quota);
  for (const auto& pdb : other.pdbs())
    UpsertPdb(pdb);
  // Bound pods node by node in arrival order (victim order breaks ties by it), then the rest.
  for (const auto& [name, node] : other.nodes()) {
    for (const NormalizedPod* pod : other.UsageOf(name).pods)
      UpsertPod(*pod);
  }
  for (const auto& [key, pod] : other.pods()) {
    if (FindPod(key) == nullptr) UpsertPod(pod);
  }
  for (const auto& [key, r] : other.reservations())
    Reserve(key, r.node, r.expires_ms);
  for (const auto& [key, n] : other.ledger().our_nominations())
    Nominate(key, n.node, n.expires_ms);
  if (other.dense_nodes() != nullptr) EnableDenseNodes(other.dense_nodes()->dims());
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
  nodes_.AddPod(pod);
  ledger_.ChangeUsage(store_.quota_set(), pod.ns, pod.quota_request(), false, +1);
}

void ClusterState::RemoveContribution(const NormalizedPod& pod) {
  nodes_.RemovePod(pod);
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
  std::string().swap(pod->scheduler_name);
  std::string().swap(pod->reclaim_record);
}

}  // namespace

void ClusterState::UpsertPod(Pod raw) {
  DropConstraintsOfPlaced(&raw);
  UpsertPod(store_.normalizer().Normalize(std::move(raw)));
}

void ClusterState::UpsertPod(NormalizedPod pod) {
  ++version_;
  DropConstraintsOfPlaced(&pod);
  const std::string key = pod.store_key();
  // A reservation turns into ordinary usage once the pod is seen bound (or ends with the pod).
  if (Counts(pod) || pod.IsTerminal()) ReleaseReservation(key);
  if (pod.IsBound() || pod.IsTerminal()) ReleaseNomination(key);
  if (!pod.nominated_node_name.empty() && !pod.IsBound() && !pod.IsTerminal()) {
    PutNomination(false, Nomination{key, pod.ns, pod.nominated_node_name, pod.priority,
                                    pod.requests, pod.quota_request(), false, 0});
  } else if (ledger_.HasNominations()) {
    EraseNomination(false, key);
  }
  if (journal_) journal_->PodUpserted(store_.FindPod(key), pod);
  // The node usage points at the stored pod (its address is stable: unordered_map nodes).
  const NormalizedPod& stored = store_.PutPod(std::move(pod), [&](const NormalizedPod& old) {
    if (Counts(old)) RemoveContribution(old);
  });
  if (Counts(stored)) AddContribution(stored);
}

void ClusterState::DeletePod(std::string_view key) {
  ++version_;
  const std::string owned(key);  // `key` may point into the pod being erased
  store_.ErasePod(owned, [&](const NormalizedPod& pod) {
    if (journal_) journal_->PodErased(pod);
    if (Counts(pod)) RemoveContribution(pod);
    ReleaseReservation(owned);
    ReleaseNomination(owned);
    EraseNomination(false, owned);
  });
}

std::vector<const NormalizedPod*> ClusterState::PendingPods() const {
  std::vector<const NormalizedPod*> out;
  for (const auto& [key, pod] : store_.pods()) {
    if (!pod.IsBound() && !pod.IsTerminal() && ledger_.FindReservation(key) == nullptr)
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
    counted_changed = counted_changed || Counts(pod);
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

void ClusterState::Reserve(std::string_view key, std::string_view node, int64_t expires_ms) {
  const NormalizedPod* pod = store_.FindPod(key);
  if (pod == nullptr) return;
  ++version_;
  // The bind's reservation now holds the room our reclaim nominated for the pod: counting both
  // would charge the pod twice until the watch shows it bound.
  ReleaseNomination(key);
  if (const Reservation* existing = ledger_.FindReservation(key)) {
    if (existing->node == node) {
      ledger_.RenewReservation(key, expires_ms);
      return;
    }
    ReleaseReservation(key);
  }
  Reservation r{pod->store_key(),     pod->ns,   std::string(node), pod->requests,
                pod->quota_request(), expires_ms};
  nodes_.ChangeHold(r.node, r.node_request, +1);
  if (journal_) journal_->ReservationChanged(r.uid, r.ns, r.node);
  ledger_.AddReservation(store_.quota_set(), std::move(r));
}

void ClusterState::ReleaseReservation(std::string_view key) {
  Reservation removed;
  if (!ledger_.RemoveReservation(store_.quota_set(), key, &removed)) return;
  ++version_;
  nodes_.ChangeHold(removed.node, removed.node_request, -1);
  if (journal_) journal_->ReservationChanged(removed.uid, removed.ns, removed.node);
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
  std::vector<std::string> expired = ledger_.Expired(now_ms);
  for (const auto& key : expired) {
    if (const Reservation* r = ledger_.FindReservation(key); r && r->expires_ms <= now_ms)
      ReleaseReservation(key);
    if (const Nomination* n = ledger_.FindOurNomination(key); n && n->expires_ms <= now_ms)
      ReleaseNomination(key);
  }
  return expired;
}

}  // namespace capext
