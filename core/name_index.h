// NameIndex: a flat open-addressing hash index from a name (a node name) to a small integer id.
// It keeps its own copy of the names, packed in one buffer, and per bucket only a hash tag, the
// id and where the name lies (16 bytes): a lookup touches one or two cache lines of the buckets
// and one of the names, never a pointer to chase. Built for the per-node lookups of /filter,
// where std::map and node-based hash maps cost more than the decision itself.
// Thread-safety: none; lookups may run concurrently with each other, never with Insert/Erase.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace capext {

namespace name_index_detail {

inline uint64_t Load64(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// The 128-bit product of a and b, folded to 64 bits (wyhash's mixer).
inline uint64_t Mix(uint64_t a, uint64_t b) {
  const __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

inline constexpr uint64_t kSecret[4] = {0xa0761d6478bd642fULL, 0xe7037ed1a0b428dbULL,
                                        0x8ebc6af09c88c6e3ULL, 0x589965cc75374cc3ULL};

// a == b for n bytes, without a call to memcmp.
inline bool SameBytes(const char* a, const char* b, std::size_t n) {
  if (n < 8) {
    if (n >= 4) {
      uint32_t a0, a1, b0, b1;
      std::memcpy(&a0, a, 4);
      std::memcpy(&b0, b, 4);
      std::memcpy(&a1, a + n - 4, 4);
      std::memcpy(&b1, b + n - 4, 4);
      return a0 == b0 && a1 == b1;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  for (std::size_t i = 0; i + 8 < n; i += 8) {
    if (Load64(a + i) != Load64(b + i)) return false;
  }
  return Load64(a + n - 8) == Load64(b + n - 8);
}

}  // namespace name_index_detail

// A fast, non-cryptographic 64-bit hash of `s`, after wyhash (names come from the cluster, not
// from anyone who gains by colliding them: a collision costs one extra comparison).
inline uint64_t HashName(std::string_view s) {
  using namespace name_index_detail;
  const char* p = s.data();
  const std::size_t n = s.size();
  uint64_t a, b;
  if (n >= 16) {
    uint64_t seed = kSecret[0] ^ n;
    for (std::size_t i = 0; i + 16 < n; i += 16)
      seed = Mix(Load64(p + i) ^ kSecret[1], Load64(p + i + 8) ^ seed);
    a = Load64(p + n - 16) ^ seed;
    b = Load64(p + n - 8);
  } else if (n >= 8) {
    a = Load64(p);
    b = Load64(p + n - 8);
  } else if (n >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    a = lo;
    b = hi;
  } else {
    a = n == 0 ? 0
               : (static_cast<uint64_t>(static_cast<unsigned char>(p[0])) << 16) |
                     (static_cast<uint64_t>(static_cast<unsigned char>(p[n >> 1])) << 8) |
                     static_cast<unsigned char>(p[n - 1]);
    b = 0;
  }
  return Mix(kSecret[1] ^ n, Mix(a ^ kSecret[2], b ^ kSecret[3]));
}

class NameIndex {
 public:
  // The id of `name`, or -1.
  int64_t Find(std::string_view name) const {
    if (buckets_.empty()) return -1;
    const uint64_t h = HashName(name);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Bucket& b = buckets_[i];
      if (b.id_plus_one == 0) return -1;
      if (b.tag == tag && b.length == name.size() &&
          name_index_detail::SameBytes(names_.data() + b.offset, name.data(), name.size())) {
        return b.id_plus_one - 1;
      }
    }
  }

  // Adds name -> id. REQUIRES: `name` is not in the index; id < 2^32 - 1.
  void Insert(std::string_view name, uint32_t id) {
    if ((size_ + 1) * 4 > buckets_.size() * 3) Rehash(buckets_.empty() ? 16 : buckets_.size() * 2);
    if (dead_bytes_ > 4096 && dead_bytes_ > names_.size() / 2) Rehash(buckets_.size());
    Place(HashName(name), id, Store(name), name.size());
    ++size_;
  }

  // Removes `name` (nothing when absent).
  void Erase(std::string_view name) {
    if (buckets_.empty()) return;
    const uint64_t h = HashName(name);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    std::size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      const Bucket& b = buckets_[i];
      if (b.id_plus_one == 0) return;
      if (b.tag == tag && NameAt(b) == name) break;
    }
    dead_bytes_ += buckets_[i].length;
    // Backward-shift deletion: move later members of the probe run into the hole unless their
    // home bucket lies cyclically in (hole, position].
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      const Bucket& b = buckets_[j];
      if (b.id_plus_one == 0) break;
      const std::size_t home = HashName(NameAt(b)) & mask_;
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      buckets_[i] = b;
      i = j;
    }
    buckets_[i] = Bucket{};
    --size_;
  }

  std::size_t size() const { return size_; }

 private:
  struct Bucket {
    uint32_t tag = 0;          // high half of the hash
    uint32_t id_plus_one = 0;  // 0 = empty
    uint32_t offset = 0;       // of the name in names_
    uint32_t length = 0;
  };

  std::string_view NameAt(const Bucket& b) const {
    return std::string_view(names_.data() + b.offset, b.length);
  }

  uint32_t Store(std::string_view name) {
    const auto offset = static_cast<uint32_t>(names_.size());
    names_.append(name);
    return offset;
  }

  void Place(uint64_t h, uint32_t id, uint32_t offset, std::size_t length) {
    std::size_t i = h & mask_;
    while (buckets_[i].id_plus_one != 0)
      i = (i + 1) & mask_;
    buckets_[i] =
        Bucket{static_cast<uint32_t>(h >> 32), id + 1, offset, static_cast<uint32_t>(length)};
  }

  // Rebuilds the buckets with `capacity` slots and the names without the erased ones.
  void Rehash(std::size_t capacity) {
    std::vector<Bucket> old = std::move(buckets_);
    std::string old_names = std::move(names_);
    buckets_.assign(capacity, Bucket{});
    mask_ = capacity - 1;
    names_.clear();
    names_.reserve(old_names.size() - dead_bytes_);
    dead_bytes_ = 0;
    for (const Bucket& b : old) {
      if (b.id_plus_one == 0) continue;
      const std::string_view name(old_names.data() + b.offset, b.length);
      Place(HashName(name), b.id_plus_one - 1, Store(name), name.size());
    }
  }

  std::vector<Bucket> buckets_;  // power-of-two size, at most 3/4 full
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  std::string names_;  // every name inserted since the last rehash, erased ones included
  std::size_t dead_bytes_ = 0;
};

// Transparent hashing for maps keyed by std::string, so lookups by string_view allocate nothing.
struct StringKeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return HashName(s); }
};

}  // namespace capext
