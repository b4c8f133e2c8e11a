#include "core/resource_list.h"

#include <algorithm>
#include <limits>

#include "core/quantity.h"

namespace capext {

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) {
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

namespace {

// a < b as std::string compares them (bytes as unsigned char, then length). Inline: resource
// names are short and usually differ in their first bytes, where a call to memcmp costs more
// than the comparison.
inline bool NameLess(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(a[i]);
    const auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y;
  }
  return a.size() < b.size();
}

inline bool NameEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Lists usually hold a handful of names: a linear scan of the sorted entries beats a binary
// search there.
template <typename Vector>
auto LowerBound(Vector& v, std::string_view name) {
  if (v.size() > 16) {
    return std::lower_bound(
        v.begin(), v.end(), name,
        [](const ResourceList::Entry& e, std::string_view n) { return NameLess(e.first, n); });
  }
  auto it = v.begin();
  while (it != v.end() && NameLess(it->first, name))
    ++it;
  return it;
}

}  // namespace

ResourceList::ResourceList(std::initializer_list<Entry> entries) {
  for (const auto& e : entries)
    Set(e.first, e.second);
}

std::optional<int64_t> ResourceList::Find(std::string_view name) const {
  // Sorted, so the first entry that is not less than `name` decides.
  auto it = LowerBound(entries_, name);
  if (it != entries_.end() && NameEqual(it->first, name)) return it->second;
  return std::nullopt;
}

int64_t ResourceList::Get(std::string_view name) const {
  return Find(name).value_or(0);
}

void ResourceList::Set(std::string_view name, int64_t amount) {
  auto it = LowerBound(entries_, name);
  if (it != entries_.end() && NameEqual(it->first, name)) {
    it->second = amount;
  } else {
    entries_.insert(it, Entry(std::string(name), amount));
  }
}

void ResourceList::Erase(std::string_view name) {
  auto it = LowerBound(entries_, name);
  if (it != entries_.end() && NameEqual(it->first, name)) entries_.erase(it);
}

void ResourceList::AddTo(std::string_view name, int64_t amount) {
  auto it = LowerBound(entries_, name);
  if (it != entries_.end() && NameEqual(it->first, name)) {
    it->second = SaturatingAdd(it->second, amount);
  } else {
    entries_.insert(it, Entry(std::string(name), amount));
  }
}

void ResourceList::Add(const ResourceList& other) {
  for (const auto& [name, amount] : other.entries_)
    AddTo(name, amount);
}

void ResourceList::Subtract(const ResourceList& other) {
  for (const auto& [name, amount] : other.entries_) {
    auto it = LowerBound(entries_, name);
    if (it != entries_.end() && NameEqual(it->first, name)) {
      it->second = SaturatingSub(it->second, amount);
    } else {
      entries_.insert(it, Entry(name, SaturatingSub(0, amount)));
    }
  }
}

void ResourceList::MaxWith(const ResourceList& other) {
  for (const auto& [name, amount] : other.entries_) {
    auto it = LowerBound(entries_, name);
    if (it != entries_.end() && NameEqual(it->first, name)) {
      it->second = std::max(it->second, amount);
    } else {
      entries_.insert(it, Entry(name, std::max<int64_t>(0, amount)));
    }
  }
}

std::string ResourceList::ToString() const {
  std::string out;
  for (const auto& [name, amount] : entries_) {
    if (!out.empty()) out += ", ";
    out += name;
    out += ' ';
    out += FormatAmount(name, amount);
  }
  return out;
}

ResourceList operator+(ResourceList a, const ResourceList& b) {
  a.Add(b);
  return a;
}

std::string FormatAmount(std::string_view resource, int64_t amount) {
  if (amount == std::numeric_limits<int64_t>::max()) return "unbounded";
  return QuantityFromDecisionAmount(resource, amount).ToString();
}

}  // namespace capext
