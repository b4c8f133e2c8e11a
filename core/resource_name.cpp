#include "core/resource_name.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace capext {
namespace {

// Names live in fixed-size chunks that never move, so str() reads them without a lock: an id
// only reaches a thread after the name behind it was published (under the table's mutex, or
// through whatever synchronised hand-off carried the id there).
class NameTable {
 public:
  static constexpr uint32_t kChunkBits = 10;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr uint32_t kChunks = ResourceName::kMaxResourceNames / kChunkSize;

  NameTable() {
    // The well-known ids, in the order of their constants.
    for (std::string_view name : {"cpu", "memory", "ephemeral-storage", "pods"}) {
      uint32_t id = 0;
      Insert(name, &id);
    }
  }

  std::string_view Name(uint32_t id) const {
    return (*chunks_[id >> kChunkBits].load(std::memory_order_acquire))[id & (kChunkSize - 1)];
  }

  bool Find(std::string_view name, uint32_t* id) const {
    if (WellKnown(name, id)) return true;
    std::shared_lock lock(mutex_);
    auto it = ids_.find(name);
    if (it == ids_.end()) return false;
    *id = it->second;
    return true;
  }

  bool Intern(std::string_view name, uint32_t* id) {
    if (Find(name, id)) return true;
    std::unique_lock lock(mutex_);
    return Insert(name, id);
  }

  uint32_t Count() const {
    std::shared_lock lock(mutex_);
    return count_;
  }

 private:
  using Chunk = std::array<std::string, kChunkSize>;

  static bool WellKnown(std::string_view name, uint32_t* id) {
    if (name == "cpu") {
      *id = ResourceName::kCpuId;
    } else if (name == "memory") {
      *id = ResourceName::kMemoryId;
    } else if (name == "pods") {
      *id = ResourceName::kPodsId;
    } else if (name == "ephemeral-storage") {
      *id = ResourceName::kEphemeralStorageId;
    } else {
      return false;
    }
    return true;
  }

  // REQUIRES: mutex_ held exclusively (or construction).
  bool Insert(std::string_view name, uint32_t* id) {
    if (auto it = ids_.find(name); it != ids_.end()) {
      *id = it->second;
      return true;
    }
    if (count_ >= ResourceName::kMaxResourceNames) return false;
    const uint32_t next = count_;
    Chunk* chunk = chunks_[next >> kChunkBits].load(std::memory_order_relaxed);
    if (chunk == nullptr) {
      owned_[next >> kChunkBits] = std::make_unique<Chunk>();
      chunk = owned_[next >> kChunkBits].get();
    }
    std::string& slot = (*chunk)[next & (kChunkSize - 1)];
    slot.assign(name);
    chunks_[next >> kChunkBits].store(chunk, std::memory_order_release);
    ids_.emplace(std::string_view(slot), next);
    ++count_;
    *id = next;
    return true;
  }

  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string_view, uint32_t> ids_;  // views into the chunks
  std::array<std::atomic<Chunk*>, kChunks> chunks_{};
  std::array<std::unique_ptr<Chunk>, kChunks> owned_;
  uint32_t count_ = 0;
};

NameTable& Table() {
  static NameTable* table = new NameTable();  // never destroyed: names outlive every user
  return *table;
}

}  // namespace

bool ResourceName::TryIntern(std::string_view name, ResourceName* out) {
  uint32_t id = 0;
  if (!Table().Intern(name, &id)) return false;
  *out = ResourceName(id);
  return true;
}

ResourceName ResourceName::Of(std::string_view name) {
  ResourceName out;
  if (!TryIntern(name, &out)) {
    std::fprintf(stderr, "capacity-extender: more than %u distinct resource names\n",
                 kMaxResourceNames);
    std::abort();
  }
  return out;
}

bool ResourceName::Find(std::string_view name, ResourceName* out) {
  uint32_t id = 0;
  if (!Table().Find(name, &id)) return false;
  *out = ResourceName(id);
  return true;
}

uint32_t ResourceName::Count() {
  return Table().Count();
}

std::string_view ResourceName::str() const {
  return Table().Name(id_);
}

}  // namespace capext
