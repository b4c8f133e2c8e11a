// ObjectStore: the Kubernetes objects the decisions read — pods (normalised, by store key and by
// namespace/name), PriorityClasses (inside the normaliser, which reads them), ElasticQuotas and
// PodDisruptionBudgets. Nodes live in NodeTable, with their usage. It keeps no accounting:
// ClusterState pairs every change here with the ledger and the node table.
// Thread-safety: none; ClusterState serialises writers and readers. Pointers to stored pods stay
// valid until that pod is erased (unordered_map nodes do not move).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/name_index.h"
#include "core/pod_name_index.h"
#include "core/pod_normalizer.h"
#include "core/priority_class.h"
#include "core/quota_set.h"

namespace capext {

class ObjectStore {
 public:
  // Pods by store key (uid, else "namespace/name"). The key is a view of the stored pod's own
  // store_key(): a copy of the key was 80 bytes per tracked pod (32 in the map node, 48 of heap
  // for a uid), and the guide allows a tracked pod less than 1 KiB. PutPod keeps every key
  // pointing into its own pod. A copy of the map would view the original's pods: never copy it.
  using PodMap =
      std::unordered_map<std::string_view, NormalizedPod, StringKeyHash, std::equal_to<>>;

  explicit ObjectStore(QuotaSemantics semantics) : normalizer_(semantics) {}
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;
  ObjectStore(ObjectStore&&) = default;
  ObjectStore& operator=(ObjectStore&&) = default;

  const PodNormalizer& normalizer() const { return normalizer_; }
  // The DRA objects and indexes normalisation reads (docs/devices.md).
  DeviceCatalog& devices() { return normalizer_.devices(); }
  const DeviceCatalog& devices() const { return normalizer_.devices(); }

  // --- pods ----------------------------------------------------------------------------------
  const PodMap& pods() const { return pods_; }
  const NormalizedPod* FindPod(std::string_view key) const;
  // The latest pod stored under that namespace and name (two pods may share one while a
  // deleted pod's re-creation is seen before its deletion).
  const NormalizedPod* FindPodByName(std::string_view ns, std::string_view name) const {
    return by_name_.Find(ns, name);
  }
  // Stores `pod` under its store key, replacing the pod there (same address) or adding it;
  // before a replacement, calls before_replace(const NormalizedPod& old). One lookup.
  template <typename F>
  const NormalizedPod& PutPod(NormalizedPod pod, F&& before_replace) {
    auto it = pods_.find(pod.store_key());
    if (it == pods_.end()) {
      PodMap::node_type node;
      if (!spare_.empty()) {
        node = std::move(spare_.back());
        spare_.pop_back();
        node.mapped() = std::move(pod);
      } else {
        // A node is made only by emplace: under the empty key, which no pod has (a store key is
        // a uid or "namespace/name"), then taken out to be keyed by its own pod.
        node = pods_.extract(pods_.emplace(std::string_view(), std::move(pod)).first);
      }
      node.key() = node.mapped().store_key();
      it = pods_.insert(std::move(node)).position;
    } else {
      before_replace(static_cast<const NormalizedPod&>(it->second));
      by_name_.Erase(&it->second);
      if (!pod.uid.empty() && !it->second.uid.empty()) {
        // Equal uids: the stored pod keeps the buffer its key views (a string moved into another
        // takes its buffer along), so the key needs nothing.
        pod.uid.swap(it->second.uid);
        it->second = std::move(pod);
        // Otherwise `pod` still holds that buffer here, so the key can be read to re-key it.
        if (it->first.data() != it->second.store_key().data()) it = Rekey(it, nullptr);
      } else {
        // Keyed by "namespace/name": re-keyed before the old pod's key goes.
        it = Rekey(it, &pod);
      }
    }
    // The latest pod stored under a name is the one found by it.
    by_name_.Put(&it->second);
    return it->second;
  }
  // Sets Pod::reserved_ms of the stored pod (nothing when there is none): the one field of a
  // stored pod changed in place, since it derives from a reservation, not from the API object.
  void SetReservedMs(std::string_view key, int64_t reserved_ms);
  // Removes the pod after calling before_erase(const NormalizedPod& pod); false when there was
  // none. One lookup.
  template <typename F>
  bool ErasePod(std::string_view key, F&& before_erase) {
    auto it = pods_.find(key);
    if (it == pods_.end()) return false;
    before_erase(static_cast<const NormalizedPod&>(it->second));
    by_name_.Erase(&it->second);
    if (spare_.size() < kMaxSpareNodes) {
      spare_.push_back(pods_.extract(it));
    } else {
      pods_.erase(it);
    }
    return true;
  }
  // Re-resolves every pod's priority (after a PriorityClass change); calls changed(pod) for
  // each pod whose priority or preemption policy changed.
  template <typename F>
  void RefreshPriorities(F&& changed) {
    for (auto& [key, pod] : pods_) {
      if (normalizer_.Refresh(&pod)) changed(pod);
    }
  }

  // --- priority classes, quotas, PDBs ------------------------------------------------------
  void UpsertPriorityClass(const PriorityClass& pc) { normalizer_.UpsertPriorityClass(pc); }
  bool DeletePriorityClass(std::string_view name) { return normalizer_.DeletePriorityClass(name); }
  const std::map<std::string, PriorityClass, std::less<>>& priority_classes() const {
    return normalizer_.priority_classes();
  }
  QuotaSet& quota_set() { return quotas_; }
  const QuotaSet& quota_set() const { return quotas_; }
  void UpsertPdb(const PodDisruptionBudget& pdb);
  void DeletePdb(std::string_view ns, std::string_view name);
  const std::vector<PodDisruptionBudget>& pdbs() const { return pdbs_; }

 private:
  // Takes the node out while its key can still be read (the map hashes it), replaces its pod by
  // *replacement when given, and puts it back keyed by its pod's own key.
  PodMap::iterator Rekey(PodMap::iterator it, NormalizedPod* replacement) {
    PodMap::node_type node = pods_.extract(it);
    if (replacement != nullptr) node.mapped() = std::move(*replacement);
    node.key() = node.mapped().store_key();
    return pods_.insert(std::move(node)).position;
  }

  PodNormalizer normalizer_;
  PodMap pods_;
  // Nodes of erased pods (their old contents still in them), reused by the next pods added: a
  // node holds a whole NormalizedPod, about 800 bytes, and allocating and freeing one per pod
  // (the simulator binds and ends pods by the hundred thousand) cost more than the map's work.
  static constexpr std::size_t kMaxSpareNodes = 64;
  std::vector<PodMap::node_type> spare_;
  PodNameIndex by_name_;
  QuotaSet quotas_;
  std::vector<PodDisruptionBudget> pdbs_;
};

}  // namespace capext
