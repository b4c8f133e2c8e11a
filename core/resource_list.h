// ResourceList: resource name -> amount in decision units (cpu in milli-units, every other
// resource in whole units; see DecisionAmount in quantity.h). A small vector of (interned name,
// amount) sorted by the names' characters: pods and quotas name a handful of resources, lookups
// by ResourceName compare integers, and iteration and printing follow name order.
// Arithmetic saturates at the int64 limits instead of overflowing.
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/resource_name.h"

namespace capext {

inline constexpr std::string_view kResourceCPU = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";

// a + b and a - b, held at the int64 limits instead of overflowing. Inline: node fit and the
// reclaim plan's what-if run them a few times per pod or member looked at.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}
inline int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) {
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

class ResourceList {
 public:
  using Entry = std::pair<ResourceName, int64_t>;

  ResourceList() = default;
  // Interns each name (ResourceName::Of): for lists the program spells, and tests.
  ResourceList(std::initializer_list<std::pair<std::string_view, int64_t>> entries);

  // The amount of `name`, or 0 when absent.
  int64_t Get(ResourceName name) const {
    for (const auto& e : entries_) {
      if (e.first == name) return e.second;
    }
    return 0;
  }
  int64_t Get(std::string_view name) const;
  std::optional<int64_t> Find(ResourceName name) const;
  std::optional<int64_t> Find(std::string_view name) const;
  bool Has(ResourceName name) const { return Find(name).has_value(); }
  bool Has(std::string_view name) const { return Find(name).has_value(); }

  void Set(ResourceName name, int64_t amount);
  // Interns `name` (ResourceName::Of). Decoders of outside input intern with TryIntern first.
  void Set(std::string_view name, int64_t amount) { Set(ResourceName::Of(name), amount); }
  void Erase(ResourceName name);
  // Adds `amount` to `name` (creating it at 0 first).
  void AddTo(ResourceName name, int64_t amount);

  void Add(const ResourceList& other);       // per name, saturating
  void Subtract(const ResourceList& other);  // per name, saturating; names absent here become -x
  void MaxWith(const ResourceList& other);   // per name maximum (absent = 0)

  const std::vector<Entry>& entries() const { return entries_; }
  // Releases spare capacity (for lists kept long, such as a stored pod's requests).
  void ShrinkToFit() { entries_.shrink_to_fit(); }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

  bool operator==(const ResourceList& other) const { return entries_ == other.entries_; }

  // "cpu 2, memory 1Gi" with every amount printed as a Kubernetes quantity.
  std::string ToString() const;

 private:
  // Where `name` is, or where it would go to keep name order.
  std::vector<Entry>::iterator Position(ResourceName name);

  std::vector<Entry> entries_;  // sorted by name, unique names
};

ResourceList operator+(ResourceList a, const ResourceList& b);

// Prints one decision amount of `resource` as a Kubernetes quantity ("1500m", "2", "32Gi").
std::string FormatAmount(std::string_view resource, int64_t amount);

}  // namespace capext
