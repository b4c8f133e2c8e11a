#include "core/cluster_state.h"

#include <algorithm>

namespace capext {
namespace {
const NodeUsage kNoUsage;
}  // namespace

ClusterState::ClusterState(QuotaSemantics semantics) : book_(semantics) {}

// --- nodes -------------------------------------------------------------------------------------

void ClusterState::UpsertNode(Node node) {
  ++version_;
  std::string name = node.name;
  nodes_[name] = std::move(node);
}

void ClusterState::DeleteNode(std::string_view name) {
  ++version_;
  auto it = nodes_.find(name);
  if (it != nodes_.end()) nodes_.erase(it);
  // Pods bound to a deleted node keep counting until they are deleted themselves (the API
  // server's pod garbage collector does that), exactly as their quota sees them.
}

std::optional<NodeInfo> ClusterState::FindNode(std::string_view name) const {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  return NodeInfo{it->second, &UsageOf(name)};
}

const NodeUsage& ClusterState::UsageOf(std::string_view node) const {
  auto it = node_usage_.find(std::string(node));
  return it == node_usage_.end() ? kNoUsage : it->second;
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
  NodeUsage& usage = node_usage_[pod.node_name];
  usage.pod_uids.push_back(KeyOf(pod));
  usage.requested.Add(pod.requests);
  ++usage.pod_count;
  book_.AddBound(pod.ns, QuotaRequest(pod));
}

void ClusterState::RemoveContribution(const Pod& pod) {
  auto it = node_usage_.find(pod.node_name);
  if (it != node_usage_.end()) {
    NodeUsage& usage = it->second;
    const std::string key = KeyOf(pod);
    auto pos = std::find(usage.pod_uids.begin(), usage.pod_uids.end(), key);
    if (pos != usage.pod_uids.end()) usage.pod_uids.erase(pos);
    usage.requested.Subtract(pod.requests);
    --usage.pod_count;
  }
  book_.RemoveBound(pod.ns, QuotaRequest(pod));
}

void ClusterState::UpsertPod(Pod pod) {
  ++version_;
  ResolvePriority(&pod);
  const std::string key = KeyOf(pod);
  auto it = pods_.find(key);
  if (it != pods_.end()) {
    if (Counts(it->second)) RemoveContribution(it->second);
  }
  // A reservation turns into ordinary usage once the pod is seen bound (or ends with the pod).
  if (Counts(pod) || pod.IsTerminal()) ReleaseReservation(key);
  if (pod.IsBound() || pod.IsTerminal()) ReleaseNomination(key);
  if (Counts(pod)) AddContribution(pod);
  if (!pod.nominated_node_name.empty() && !pod.IsBound() && !pod.IsTerminal()) {
    status_nominations_[key] = Nomination{
        key,   pod.ns, pod.nominated_node_name, pod.priority, pod.requests, QuotaRequest(pod),
        false, 0};
  } else {
    status_nominations_.erase(key);
  }
  uid_by_name_[pod.ns + "/" + pod.name] = key;
  pods_[key] = std::move(pod);
}

void ClusterState::DeletePod(std::string_view uid) {
  ++version_;
  auto it = pods_.find(std::string(uid));
  if (it == pods_.end()) return;
  if (Counts(it->second)) RemoveContribution(it->second);
  ReleaseReservation(uid);
  ReleaseNomination(uid);
  status_nominations_.erase(std::string(uid));
  uid_by_name_.erase(it->second.ns + "/" + it->second.name);
  pods_.erase(it);
}

const Pod* ClusterState::FindPod(std::string_view uid) const {
  auto it = pods_.find(std::string(uid));
  return it == pods_.end() ? nullptr : &it->second;
}

const Pod* ClusterState::FindPodByName(std::string_view ns, std::string_view name) const {
  std::string key(ns);
  key += '/';
  key += name;
  auto it = uid_by_name_.find(key);
  return it == uid_by_name_.end() ? nullptr : FindPod(it->second);
}

std::vector<const Pod*> ClusterState::PodsOnNode(std::string_view node) const {
  std::vector<const Pod*> out;
  for (const auto& uid : UsageOf(node).pod_uids) {
    if (const Pod* pod = FindPod(uid)) out.push_back(pod);
  }
  return out;
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
  NodeUsage& usage = node_usage_[r.node];
  usage.requested.Add(r.node_request);
  ++usage.pod_count;
  book_.AddReserved(r.ns, r.quota_request);
  reservations_.emplace(r.uid, std::move(r));
}

void ClusterState::ReleaseReservation(std::string_view uid) {
  auto it = reservations_.find(std::string(uid));
  if (it == reservations_.end()) return;
  ++version_;
  const Reservation& r = it->second;
  NodeUsage& usage = node_usage_[r.node];
  usage.requested.Subtract(r.node_request);
  --usage.pod_count;
  book_.RemoveReserved(r.ns, r.quota_request);
  reservations_.erase(it);
}

const Reservation* ClusterState::FindReservation(std::string_view uid) const {
  auto it = reservations_.find(std::string(uid));
  return it == reservations_.end() ? nullptr : &it->second;
}

void ClusterState::Nominate(std::string_view uid, std::string_view node, int64_t expires_ms) {
  const Pod* pod = FindPod(uid);
  if (pod == nullptr) return;
  ++version_;
  Nomination n{KeyOf(*pod),        pod->ns, std::string(node), pod->priority, pod->requests,
               QuotaRequest(*pod), true,    expires_ms};
  our_nominations_[n.uid] = std::move(n);
}

void ClusterState::ReleaseNomination(std::string_view uid) {
  auto it = our_nominations_.find(uid);
  if (it == our_nominations_.end()) return;
  ++version_;
  our_nominations_.erase(it);
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
