#include "core/object_store.h"

#include <algorithm>

namespace capext {

const NormalizedPod* ObjectStore::FindPod(std::string_view key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

const NormalizedPod& ObjectStore::PutPod(NormalizedPod pod) {
  auto it = pods_.find(pod.store_key());
  if (it == pods_.end()) {
    std::string key = pod.store_key();
    it = pods_.emplace(std::move(key), std::move(pod)).first;
  } else {
    by_name_.Erase(&it->second);
    it->second = std::move(pod);
  }
  // The latest pod stored under a name is the one found by it.
  by_name_.Put(&it->second);
  return it->second;
}

bool ObjectStore::ErasePod(std::string_view key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return false;
  by_name_.Erase(&it->second);
  pods_.erase(it);
  return true;
}

void ObjectStore::UpsertPdb(const PodDisruptionBudget& pdb) {
  for (auto& existing : pdbs_) {
    if (existing.ns == pdb.ns && existing.name == pdb.name) {
      existing = pdb;
      return;
    }
  }
  pdbs_.push_back(pdb);
}

void ObjectStore::DeletePdb(std::string_view ns, std::string_view name) {
  pdbs_.erase(
      std::remove_if(pdbs_.begin(), pdbs_.end(),
                     [&](const PodDisruptionBudget& p) { return p.ns == ns && p.name == name; }),
      pdbs_.end());
}

}  // namespace capext
