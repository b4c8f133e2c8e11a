// PodNameIndex: pods by namespace and name, as a flat open-addressing set of pointers (about 12
// bytes per pod where a node-based map of "ns/name" strings cost about 190). The pods belong to
// the caller; a pod's namespace and name must not change while it is in the index.
// Thread-safety: none; lookups may run concurrently with each other, never with Put/Erase.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/name_index.h"
#include "core/pod.h"

namespace capext {

class PodNameIndex {
 public:
  const NormalizedPod* Find(std::string_view ns, std::string_view name) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = Hash(ns, name) & mask_;; i = (i + 1) & mask_) {
      const NormalizedPod* p = slots_[i];
      if (p == nullptr) return nullptr;
      if (p->ns == ns && p->name == name) return p;
    }
  }

  // Makes `pod` the one found under its namespace and name (replacing another pod there).
  void Put(const NormalizedPod* pod) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    std::size_t i = Hash(pod->ns, pod->name) & mask_;
    for (; slots_[i] != nullptr; i = (i + 1) & mask_) {
      if (slots_[i]->ns == pod->ns && slots_[i]->name == pod->name) {
        slots_[i] = pod;
        return;
      }
    }
    slots_[i] = pod;
    ++size_;
  }

  // Removes `pod` if it is the one found under its name.
  void Erase(const NormalizedPod* pod) {
    if (slots_.empty()) return;
    std::size_t i = Hash(pod->ns, pod->name) & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i] == nullptr) return;
      if (slots_[i] == pod) break;
    }
    // Backward-shift deletion (see NameIndex::Erase).
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      const NormalizedPod* p = slots_[j];
      if (p == nullptr) break;
      const std::size_t home = Hash(p->ns, p->name) & mask_;
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = p;
      i = j;
    }
    slots_[i] = nullptr;
    --size_;
  }

  std::size_t size() const { return size_; }

 private:
  static uint64_t Hash(std::string_view ns, std::string_view name) {
    return HashName(ns) ^ (HashName(name) * 0x9e3779b97f4a7c15ULL);
  }

  void Grow() {
    std::vector<const NormalizedPod*> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, nullptr);
    mask_ = slots_.size() - 1;
    for (const NormalizedPod* p : old) {
      if (p == nullptr) continue;
      std::size_t i = Hash(p->ns, p->name) & mask_;
      while (slots_[i] != nullptr)
        i = (i + 1) & mask_;
      slots_[i] = p;
    }
  }

  std::vector<const NormalizedPod*> slots_;  // power-of-two size, at most 3/4 full
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace capext
