// ResourceName: an interned resource name ("cpu", "memory", "nvidia.com/gpu"). Four bytes that
// copy, compare for equality and hash as an integer, and read as the string they stand for.
// Decisions compare names millions of times a second (every node of every /filter call, every
// pod of every victim search); interning turns those string comparisons into integer ones and
// shrinks every ResourceList entry from 40 to 16 bytes.
//
// The table of names is process-wide and append-only: a name, once interned, keeps its id and
// its characters at the same address for the life of the process. Well-known names have fixed
// ids (kCpuName...). Ordering (operator<) is by the names' characters, as std::string orders
// them, so sorted lists print in the same order in every process.
// Bounded: at most kMaxResourceNames distinct names; TryIntern reports a full table so that
// decoders can reject input that would grow it without bound (names come from API objects and
// from /filter bodies).
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace capext {

class ResourceName {
 public:
  static constexpr uint32_t kMaxResourceNames = 1u << 16;

  // The well-known names' ids (see kCpuName...).
  static constexpr uint32_t kCpuId = 0, kMemoryId = 1, kEphemeralStorageId = 2, kPodsId = 3;

  // "cpu".
  constexpr ResourceName() = default;
  // The name with this id. REQUIRES: `id` was returned by id() of some ResourceName.
  explicit constexpr ResourceName(uint32_t id) : id_(id) {}

  // Interns `name`. Returns false (and leaves *out unchanged) when the table is full.
  static bool TryIntern(std::string_view name, ResourceName* out);
  // Interns `name`. When the table is full, aborts with a message: use TryIntern on input that
  // comes from outside (API objects, requests); this is for names the program itself spells.
  static ResourceName Of(std::string_view name);
  // The name if it was ever interned; false otherwise. Never grows the table.
  static bool Find(std::string_view name, ResourceName* out);
  // How many names are interned (for metrics and tests).
  static uint32_t Count();

  uint32_t id() const { return id_; }
  std::string_view str() const;
  operator std::string_view() const { return str(); }  // NOLINT: reads as its string

  bool operator==(ResourceName other) const { return id_ == other.id_; }
  bool operator!=(ResourceName other) const { return id_ != other.id_; }
  bool operator==(std::string_view other) const { return str() == other; }
  bool operator!=(std::string_view other) const { return str() != other; }
  // By the names' characters (std::string order), not by id.
  bool operator<(ResourceName other) const { return id_ != other.id_ && str() < other.str(); }

 private:
  uint32_t id_ = kCpuId;
};

inline constexpr ResourceName kCpuName{ResourceName::kCpuId};
inline constexpr ResourceName kMemoryName{ResourceName::kMemoryId};
inline constexpr ResourceName kEphemeralStorageName{ResourceName::kEphemeralStorageId};
inline constexpr ResourceName kPodsName{ResourceName::kPodsId};

}  // namespace capext

template <>
struct std::hash<capext::ResourceName> {
  std::size_t operator()(capext::ResourceName name) const noexcept { return name.id(); }
};

template <>
struct fmt::formatter<capext::ResourceName> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(capext::ResourceName name, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(name.str(), ctx);
  }
};
