#include "core/object_store.h"

#include <algorithm>

namespace capext {

const NormalizedPod* ObjectStore::FindPod(std::string_view key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

void ObjectStore::SetReservedMs(std::string_view key, int64_t reserved_ms) {
  if (auto it = pods_.find(key); it != pods_.end()) it->second.reserved_ms = reserved_ms;
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
