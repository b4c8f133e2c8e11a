// NewContentStamp: a number that no earlier call in this process returned (never 0). A structure
// that takes a fresh stamp whenever its content changes, and keeps its stamp when copied, lets a
// cache keyed by stamps tell "the same content" (the same object unchanged, or a copy of it)
// from "changed" without comparing contents. Only caches read stamps: no result depends on their
// values, so core stays deterministic.
// Thread-safety: safe to call from any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace capext {

inline uint64_t NewContentStamp() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace capext
