// The reclaim controller's PendingIndex kept in step with the cluster state through the state's
// change journal (the wake rules are in reclaim_controller.h).
#include <unordered_set>

#include "extender/reclaim/quota_tree_reach.h"
#include "extender/reclaim/reclaim_controller.h"

namespace capext {

// A gated pod is the admission loop's (docs/workloads-live.md#the-admission-loop, why a pod waits),
// not kube-scheduler's: not pending here until its gates are gone.
bool ReclaimController::IsPendingQuotaPod(const ClusterState& state, const NormalizedPod& pod) {
  return !pod.IsBound() && !pod.IsTerminal() && !pod.IsGated() &&
         state.QuotaFor(pod.ns) != nullptr && state.FindReservation(pod.store_key()) == nullptr;
}

std::set<std::string> ReclaimController::PendingQuotaPodUids(const ClusterState& state) {
  std::set<std::string> out;
  for (const auto& [key, pod] : state.pods()) {
    if (IsPendingQuotaPod(state, pod)) out.insert(pod.store_key());
  }
  return out;
}

void ReclaimController::LearnChanges() {
  const bool has_journal =
      cache_->Read([](const ClusterState& state) { return state.change_journal() != nullptr; });
  if (!has_journal) {  // the state was replaced wholesale: keep a journal again
    cache_->Write([&](ClusterState& state) {
      if (state.change_journal() == nullptr) state.EnableChangeJournal(options_.journal_capacity);
      return 0;
    });
  }
  cache_->Read([&](const ClusterState& state) {
    const ChangeJournal* journal = state.change_journal();
    ChangeJournal::Changes changes;
    if (journal != journal_seen_) {
      changes.overflowed = true;  // a journal we never read: everything is new
    } else {
      changes = journal->Since(cursor_);
    }
    journal_seen_ = journal;
    cursor_ = journal->last_sequence();
    if (changes.overflowed || rederive_) {
      rederive_ = false;
      Rederive(state);
      return 0;
    }
    std::vector<std::string> changed;  // pending quota pods that changed themselves
    for (const auto& uid : changes.pods) {
      if (Refresh(state, uid)) changed.push_back(uid);
    }
    // Namespaces whose quota's used, spec or nominations changed: each wakes its whole quota
    // tree (quota_tree_reach.h), and, when it has a quota, the cluster-wide rule's subscribers.
    std::set<std::string> quota_namespaces;
    bool cluster_quota = false;
    bool tree_shape = false;  // a quota added or removed, or a parent changed
    for (const auto& ns : changes.quotas) {
      // The sum of mins moves only with a min, or with the set of quotas or of roots; a min of
      // any quota also decides which quotas borrow (victims across trees): both wake the
      // cluster-wide rule. A max alone concerns only its tree.
      std::optional<ClusterShare> share;
      if (const ElasticQuota* quota = state.QuotaFor(ns))
        share = ClusterShare{quota->min, quota->parent};
      auto known = cluster_shares_.find(ns);
      const bool had = known != cluster_shares_.end();
      if (share ? !had || !(known->second == *share) : had) cluster_quota = true;
      if (share.has_value() != had || (share && had && share->parent != known->second.parent)) {
        tree_shape = true;
      }
      if (share) {
        cluster_shares_[ns] = *share;
      } else if (had) {
        cluster_shares_.erase(known);
      }
      // A quota added or removed makes its namespace's pending pods quota pods, or not.
      for (const auto& uid : index_.PodsOf(ns)) {
        if (Refresh(state, uid)) changed.push_back(uid);
      }
      if (state.QuotaFor(ns) != nullptr) {
        for (const auto& [key_view, pod] : state.pods()) {
          const std::string& key = pod.store_key();
          if (pod.ns == ns && !index_.Tracks(key) && Refresh(state, key)) changed.push_back(key);
        }
      }
      quota_namespaces.insert(ns);
    }
    for (const auto* list : {&changes.usage, &changes.nominations}) {
      for (const auto& ns : *list) {
        quota_namespaces.insert(ns);
        cluster_quota = cluster_quota || state.QuotaFor(ns) != nullptr;
      }
    }
    if (tree_shape) {
      // Namespaces moved between trees, and the trees they left are gone: every tree.
      index_.WakeQuotaEverywhere();
    } else {
      for (const auto& ns : NamespacesOfTheirTrees(state, quota_namespaces))
        index_.WakeQuota(ns);
    }
    index_.Wake(changed);
    if (cluster_quota) index_.WakeClusterQuota();
    index_.WakeNodes(changes.nodes);
    if (!changes.pdbs.empty()) index_.WakePdbs();
    if (!changes.priority_classes.empty()) index_.WakeAll();
    return 0;
  });
}

void ReclaimController::Rederive(const ClusterState& state) {
  last_pass_.rederived = true;
  cluster_shares_.clear();
  for (const auto& [ns, quota] : state.quota_set().quotas())
    cluster_shares_[ns] = ClusterShare{quota.min, quota.parent};
  std::unordered_set<std::string> pending;
  for (const auto& [key_view, pod] : state.pods()) {
    if (!IsPendingQuotaPod(state, pod)) continue;
    const std::string& key = pod.store_key();
    pending.insert(key);
    index_.Track(key, pod.ns, pod.priority, pod.creation_ms);
    NoteRecord(pod);
  }
  for (const auto& uid : index_.All()) {
    if (!pending.contains(uid)) Forget(uid);
  }
  auto is_pending = [&](const std::string& uid) { return pending.contains(uid); };
  std::erase_if(refused_, [&](const auto& entry) { return !is_pending(entry.first); });
  std::erase_if(last_nudge_ms_, [&](const auto& entry) { return !is_pending(entry.first); });
  std::erase_if(seen_records_, [&](const auto& entry) { return !is_pending(entry.first); });
  std::erase_if(records_to_clear_, [&](const std::string& uid) { return !is_pending(uid); });
  board_.Retain(is_pending);
  if (recorder_ != nullptr) recorder_->Retain(is_pending);
  index_.WakeAll();
}

bool ReclaimController::Refresh(const ClusterState& state, const std::string& uid) {
  const NormalizedPod* pod = state.FindPod(uid);
  if (pod == nullptr || !IsPendingQuotaPod(state, *pod)) {
    Forget(uid);
    return false;
  }
  index_.Track(uid, pod->ns, pod->priority, pod->creation_ms);
  NoteRecord(*pod);
  return true;
}

void ReclaimController::Forget(const std::string& uid) {
  refused_.erase(uid);
  last_nudge_ms_.erase(uid);
  seen_records_.erase(uid);
  records_to_adopt_.erase(uid);
  records_to_clear_.erase(uid);
  if (!index_.Tracks(uid)) return;  // never planned: nothing published about it
  index_.Untrack(uid);
  board_.Remove(uid);
  if (recorder_ != nullptr) recorder_->Forget(uid);
}

}  // namespace capext
