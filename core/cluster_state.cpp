#include "core/cluster_state.h"

#include <algorithm>

namespace capext {
namespace {
const NodeUsage kNoUsage;
}  // namespace

ClusterState::ClusterState(QuotaSemantics semantics) : book_(semantics) {}

ClusterState::ClusterState(const ClusterState& other)
    : book_(other.book_),
      nodes_(other.nodes_),
      records_(other.records_),
      free_records_(other.free_records_),
      record_index_(other.record_index_),
      pods_(other.pods_),
      priority_classes_(other.priority_classes_),
      pdbs_(other.pdbs_),
      reservations_(other.reservations_),
      our_nominations_(other.our_nominations_),
      status_nominations_(other.status_nominations_),
      version_(other.version_) {
  for (NodeRecord& record : records_) {
    if (record.node != nullptr) record.node = &nodes_.find(record.name)->second;
    for (const Pod*& pod : record.usage.pods)
      pod = &pods_.find(KeyOf(*pod))->second;
  }
  for (const auto& [key, pod] : other.pods_) {
    if (other.pods_by_name_.Find(pod.ns, pod.name) == &pod) {
      pods_by_name_.Put(&pods_.find(key)->second);
    }
  }
}

ClusterState& ClusterState::operator=(const ClusterState& other) {
  if (this != &other) *this = ClusterState(other);
  return *this;
}

// --- nodes -------------------------------------------------------------------------------------

void ClusterState::UpsertNode(Node node) {
  ++version_;
  node.allocatable.ShrinkToFit();
  std::string name = node.name;
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    it = nodes_.emplace(std::move(name), std::move(node)).first;
  } else {
    it->second = std::move(node);
  }
  NodeRecord& record = RecordFor(it->first);
  record.node = &it->second;
  RefreshFit(record);
}

void ClusterState::DeleteNode(std::string_view name) {
  ++version_;
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  if (NodeRecord* record = FindRecord(name)) {
    record->node = nullptr;
    RefreshFit(*record);
    MaybeDropRecord(*record);
  }
  nodes_.erase(it);
  // Pods bound to a deleted node keep counting until they are deleted themselves (the API
  // server's pod garbage collector does that), exactly as their quota sees them.
}

std::optional<NodeInfo> ClusterState::FindNode(std::string_view name) const {
  const NodeRecord* record = FindNodeRecord(name);
  if (record == nullptr || record->node == nullptr) return std::nullopt;
  return NodeInfo{*record->node, &record->usage};
}

const NodeRecord* ClusterState::FindNodeRecord(std::string_view name) const {
  const int64_t id = record_index_.Find(name);
  return id < 0 ? nullptr : &records_[static_cast<std::size_t>(id)];
}

NodeRecord* ClusterState::FindRecord(std::string_view name) {
  return const_cast<NodeRecord*>(FindNodeRecord(name));
}

NodeRecord& ClusterState::RecordFor(std::string_view name) {
  if (NodeRecord* found = FindRecord(name)) return *found;
  uint32_t id;
  if (!free_records_.empty()) {
    id = free_records_.back();
    free_records_.pop_back();
  } else {
    id = static_cast<uint32_t>(records_.size());
    records_.emplace_back();
  }
  NodeRecord& record = records_[id];
  record.name = std::string(name);
  record_index_.Insert(record.name, id);
  return record;
}

void ClusterState::MaybeDropRecord(NodeRecord& record) {
  if (record.node != nullptr || !record.usage.pods.empty() || record.usage.pod_count != 0 ||
      record.fit.nominations != 0) {
    return;
  }
  for (const auto& [resource, amount] : record.usage.requested.entries()) {
    if (amount != 0) return;
  }
  const auto id = static_cast<uint32_t>(&record - records_.data());
  record_index_.Erase(record.name);
  record = NodeRecord{};
  free_records_.push_back(id);
}

void ClusterState::RefreshFit(NodeRecord& record) {
  NodeFitSummary& fit = record.fit;
  if (record.node == nullptr) {
    fit.free_cpu = fit.free_memory = fit.free_ephemeral_storage = 0;
    fit.free_pods = std::numeric_limits<int64_t>::max();
    fit.static_checks = false;
    return;
  }
  const Node& node = *record.node;
  const ResourceList& requested = record.usage.requested;
  fit.free_cpu = SaturatingSub(node.allocatable.Get(kResourceCPU), requested.Get(kResourceCPU));
  fit.free_memory =
      SaturatingSub(node.allocatable.Get(kResourceMemory), requested.Get(kResourceMemory));
  fit.free_ephemeral_storage = SaturatingSub(node.allocatable.Get(kResourceEphemeralStorage),
                                             requested.Get(kResourceEphemeralStorage));
  if (auto max_pods = node.allocatable.Find(kResourcePods)) {
    fit.free_pods = SaturatingSub(*max_pods, record.usage.pod_count);
  } else {
    fit.free_pods = std::numeric_limits<int64_t>::max();
  }
  fit.static_checks = node.unschedulable;
  for (const auto& taint : node.taints) {
    if (taint.effect == "NoSchedule" || taint.effect == "NoExecute") fit.static_checks = true;
  }
}

const NodeUsage& ClusterState::UsageOf(std::string_view node) const {
  const NodeRecord* record = FindNodeRecord(node);
  return record == nullptr ? kNoUsage : record->usage;
}

// --- pods --------------------------------------------------------------------------------------

std::string ClusterState::KeyOf(const Pod& pod) const {
  return pod.uid.empty() ? pod.ns + "/" + pod.name : pod.uid;
}

void ClusterState::ResolvePriority(Pod* pod) const {
  const PriorityClass* by_name = nullptr;
  const PriorityClass* global_default = nullptr;
  if (!pod->priority_class_name.empty()) {
    auto it = priority_classes_.find(pod->priority_class_name);
    if (it != priority_classes_.end()) by_name = &it->second;
  }
  // With several global defaults Kubernetes uses the smallest value (PriorityClass API docs).
  for (const auto& [name, pc] : priority_classes_) {
    if (pc.global_default && (!global_default || pc.value < global_default->value)) {
      global_default = &pc;
    }
  }
  const PriorityClass* cls = by_name                            ? by_name
                             : pod->priority_class_name.empty() ? global_default
                                                                : nullptr;
  if (pod->spec_priority) {
    pod->priority = *pod->spec_priority;
  } else {
    pod->priority = cls ? cls->value : 0;
  }
  if (pod->spec_preemption_policy) {
    pod->preemption_policy = *pod->spec_preemption_policy;
  } else {
    pod->preemption_policy = cls ? cls->preemption_policy : PreemptionPolicy::kPreemptLowerPriority;
  }
}

void ClusterState::ResolveAllPriorities() {
  for (auto& [uid, pod] : pods_)
    ResolvePriority(&pod);
  for (auto* nominations : {&our_nominations_, &status_nominations_}) {
    for (auto& [uid, nomination] : *nominations) {
      if (const Pod* pod = FindPod(uid)) nomination.priority = pod->priority;
    }
  }
}

void ClusterState::AddContribution(const Pod& pod) {
  NodeRecord& record = RecordFor(pod.node_name);
  NodeUsage& usage = record.usage;
  usage.pods.push_back(&pod);
  usage.requested.Add(pod.requests);
  ++usage.pod_count;
  RefreshFit(record);
  book_.AddBound(pod.ns, QuotaRequest(pod));
}

void ClusterState::RemoveContribution(const Pod& pod) {
  if (NodeRecord* record = FindRecord(pod.node_name)) {
    NodeUsage& usage = record->usage;
    auto pos = std::find(usage.pods.begin(), usage.pods.end(), &pod);
    if (pos != usage.pods.end()) usage.pods.erase(pos);
    usage.requested.Subtract(pod.requests);
    --usage.pod_count;
    RefreshFit(*record);
    MaybeDropRecord(*record);
  }
  book_.RemoveBound(pod.ns, QuotaRequest(pod));
}

void ClusterState::UpsertPod(Pod pod) {
  ++version_;
  ResolvePriority(&pod);
  pod.requests.ShrinkToFit();
  if (pod.IsBound() || pod.IsTerminal()) {
    // Scheduling constraints matter only while a pod waits for a node: a bound pod never goes
    // back to pending (a re-created pod is a new pod), so they are not kept.
    pod.node_selector = Labels();
    std::vector<Toleration>().swap(pod.tolerations);
    std::vector<NodeSelectorTerm>().swap(pod.required_affinity);
    std::string().swap(pod.scheduler_name);
  }
  const std::string key = KeyOf(pod);
  auto it = pods_.find(key);
  if (it != pods_.end()) {
    if (Counts(it->second)) RemoveContribution(it->second);
  }
  // A reservation turns into ordinary usage once the pod is seen bound (or ends with the pod).
  if (Counts(pod) || pod.IsTerminal()) ReleaseReservation(key);
  if (pod.IsBound() || pod.IsTerminal()) ReleaseNomination(key);
  if (!pod.nominated_node_name.empty() && !pod.IsBound() && !pod.IsTerminal()) {
    PutNomination(status_nominations_,
                  Nomination{key, pod.ns, pod.nominated_node_name, pod.priority, pod.requests,
                             QuotaRequest(pod), false, 0});
  } else {
    EraseNomination(status_nominations_, key);
  }
  Pod& stored = it != pods_.end() ? it->second : pods_[key];
  if (it != pods_.end()) ForgetName(stored);
  stored = std::move(pod);
  // The latest pod upserted under a name is the one found by it.
  pods_by_name_.Put(&stored);
  // The node usage points at the stored pod (its address is stable: unordered_map nodes).
  if (Counts(stored)) AddContribution(stored);
}

void ClusterState::DeletePod(std::string_view uid) {
  ++version_;
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  if (Counts(it->second)) RemoveContribution(it->second);
  ReleaseReservation(uid);
  ReleaseNomination(uid);
  EraseNomination(status_nominations_, uid);
  ForgetName(it->second);
  pods_.erase(it);
}

const Pod* ClusterState::FindPod(std::string_view uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second;
}

const Pod* ClusterState::FindPodByName(std::string_view ns, std::string_view name) const {
  return pods_by_name_.Find(ns, name);
}

void ClusterState::ForgetName(const Pod& pod) {
  pods_by_name_.Erase(&pod);
}

std::vector<const Pod*> ClusterState::PodsOnNode(std::string_view node) const {
  return UsageOf(node).pods;
}

std::vector<const Pod*> ClusterState::PendingPods() const {
  std::vector<const Pod*> out;
  for (const auto& [uid, pod] : pods_) {
    if (!pod.IsBound() && !pod.IsTerminal() && reservations_.count(uid) == 0) out.push_back(&pod);
  }
  // Scheduling order: higher priority first, then older, then uid (deterministic).
  std::sort(out.begin(), out.end(), [](const Pod* a, const Pod* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->creation_ms != b->creation_ms) return a->creation_ms < b->creation_ms;
    return a->uid < b->uid;
  });
  return out;
}

// --- quotas, priority classes, PDBs ------------------------------------------------------------

bool ClusterState::UpsertQuota(const ElasticQuota& quota) {
  ++version_;
  return book_.UpsertQuota(quota);
}

void ClusterState::DeleteQuota(std::string_view ns, std::string_view name) {
  ++version_;
  book_.DeleteQuota(ns, name);
}

void ClusterState::UpsertPriorityClass(const PriorityClass& pc) {
  ++version_;
  priority_classes_[pc.name] = pc;
  ResolveAllPriorities();
}

void ClusterState::DeletePriorityClass(std::string_view name) {
  ++version_;
  auto it = priority_classes_.find(name);
  if (it == priority_classes_.end()) return;
  priority_classes_.erase(it);
  ResolveAllPriorities();
}

void ClusterState::UpsertPdb(const PodDisruptionBudget& pdb) {
  ++version_;
  for (auto& existing : pdbs_) {
    if (existing.ns == pdb.ns && existing.name == pdb.name) {
      existing = pdb;
      return;
    }
  }
  pdbs_.push_back(pdb);
}

void ClusterState::DeletePdb(std::string_view ns, std::string_view name) {
  ++version_;
  pdbs_.erase(
      std::remove_if(pdbs_.begin(), pdbs_.end(),
                     [&](const PodDisruptionBudget& p) { return p.ns == ns && p.name == name; }),
      pdbs_.end());
}

// --- reservations and nominations ----------------------------------------------------------------

void ClusterState::Reserve(std::string_view uid, std::string_view node, int64_t expires_ms) {
  const Pod* pod = FindPod(uid);
  if (pod == nullptr) return;
  ++version_;
  auto existing = reservations_.find(std::string(uid));
  if (existing != reservations_.end()) {
    if (existing->second.node == node) {
      existing->second.expires_ms = expires_ms;
      return;
    }
    ReleaseReservation(uid);
  }
  Reservation r{pod->uid.empty() ? KeyOf(*pod) : pod->uid,
                pod->ns,
                std::string(node),
                pod->requests,
                QuotaRequest(*pod),
                expires_ms};
  NodeRecord& record = RecordFor(r.node);
  record.usage.requested.Add(r.node_request);
  ++record.usage.pod_count;
  RefreshFit(record);
  book_.AddReserved(r.ns, r.quota_request);
  reservations_.emplace(r.uid, std::move(r));
}

void ClusterState::ReleaseReservation(std::string_view uid) {
  auto it = reservations_.find(std::string(uid));
  if (it == reservations_.end()) return;
  ++version_;
  const Reservation& r = it->second;
  NodeRecord& record = RecordFor(r.node);
  record.usage.requested.Subtract(r.node_request);
  --record.usage.pod_count;
  RefreshFit(record);
  book_.RemoveReserved(r.ns, r.quota_request);
  reservations_.erase(it);
  MaybeDropRecord(record);
}

const Reservation* ClusterState::FindReservation(std::string_view uid) const {
  auto it = reservations_.find(std::string(uid));
  return it == reservations_.end() ? nullptr : &it->second;
}

void ClusterState::Nominate(std::string_view uid, std::string_view node, int64_t expires_ms) {
  const Pod* pod = FindPod(uid);
  if (pod == nullptr) return;
  ++version_;
  PutNomination(our_nominations_, Nomination{KeyOf(*pod), pod->ns, std::string(node), pod->priority,
                                             pod->requests, QuotaRequest(*pod), true, expires_ms});
}

void ClusterState::ReleaseNomination(std::string_view uid) {
  if (our_nominations_.find(uid) == our_nominations_.end()) return;
  ++version_;
  EraseNomination(our_nominations_, uid);
}

void ClusterState::PutNomination(NominationMap& map, Nomination nomination) {
  auto it = map.find(nomination.uid);
  if (it != map.end()) {
    if (it->second.node == nomination.node) {
      it->second = std::move(nomination);
      return;
    }
    EraseNomination(map, nomination.uid);
  }
  ++RecordFor(nomination.node).fit.nominations;
  std::string uid = nomination.uid;
  map.emplace(std::move(uid), std::move(nomination));
}

void ClusterState::EraseNomination(NominationMap& map, std::string_view uid) {
  auto it = map.find(uid);
  if (it == map.end()) return;
  if (NodeRecord* record = FindRecord(it->second.node)) {
    --record->fit.nominations;
    MaybeDropRecord(*record);
  }
  map.erase(it);
}

const Nomination* ClusterState::FindOurNomination(std::string_view uid) const {
  auto it = our_nominations_.find(uid);
  return it == our_nominations_.end() ? nullptr : &it->second;
}

std::vector<Nomination> ClusterState::Nominations() const {
  std::vector<Nomination> out;
  ForEachNomination([&](const Nomination& n) { out.push_back(n); });
  return out;
}

std::vector<std::string> ClusterState::Expire(int64_t now_ms) {
  std::vector<std::string> expired;
  for (const auto& [uid, r] : reservations_) {
    if (r.expires_ms <= now_ms) expired.push_back(uid);
  }
  for (const auto& [uid, n] : our_nominations_) {
    if (n.expires_ms <= now_ms) expired.push_back(uid);
  }
  std::sort(expired.begin(), expired.end());
  for (const auto& uid : expired) {
    auto r = reservations_.find(uid);
    if (r != reservations_.end() && r->second.expires_ms <= now_ms) ReleaseReservation(uid);
    auto n = our_nominations_.find(uid);
    if (n != our_nominations_.end() && n->second.expires_ms <= now_ms) ReleaseNomination(uid);
  }
  expired.erase(std::unique(expired.begin(), expired.end()), expired.end());
  return expired;
}

}  // namespace capext
