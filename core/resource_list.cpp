#include "core/resource_list.h"

#include <algorithm>
#include <limits>

#include "core/quantity.h"

namespace capext {

ResourceList::ResourceList(std::initializer_list<std::pair<std::string_view, int64_t>> entries) {
  for (const auto& [name, amount] : entries)
    Set(ResourceName::Of(name), amount);
}

std::vector<ResourceList::Entry>::iterator ResourceList::Position(ResourceName name) {
  auto it = entries_.begin();
  for (; it != entries_.end(); ++it) {
    if (it->first == name) return it;
  }
  // Absent: the first entry whose name sorts after it.
  const std::string_view text = name.str();
  it = entries_.begin();
  while (it != entries_.end() && it->first.str() < text)
    ++it;
  return it;
}

std::optional<int64_t> ResourceList::Find(ResourceName name) const {
  for (const auto& e : entries_) {
    if (e.first == name) return e.second;
  }
  return std::nullopt;
}

std::optional<int64_t> ResourceList::Find(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.first.str() == name) return e.second;
  }
  return std::nullopt;
}

int64_t ResourceList::Get(std::string_view name) const {
  return Find(name).value_or(0);
}

void ResourceList::Set(ResourceName name, int64_t amount) {
  auto it = Position(name);
  if (it != entries_.end() && it->first == name) {
    it->second = amount;
  } else {
    entries_.insert(it, Entry(name, amount));
  }
}

void ResourceList::Erase(ResourceName name) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == name) {
      entries_.erase(it);
      return;
    }
  }
}

void ResourceList::AddTo(ResourceName name, int64_t amount) {
  for (auto& e : entries_) {
    if (e.first == name) {
      e.second = SaturatingAdd(e.second, amount);
      return;
    }
  }
  entries_.insert(Position(name), Entry(name, amount));
}

void ResourceList::Add(const ResourceList& other) {
  for (const auto& [name, amount] : other.entries_)
    AddTo(name, amount);
}

void ResourceList::Subtract(const ResourceList& other) {
  for (const auto& [name, amount] : other.entries_) {
    auto it = Position(name);
    if (it != entries_.end() && it->first == name) {
      it->second = SaturatingSub(it->second, amount);
    } else {
      entries_.insert(it, Entry(name, SaturatingSub(0, amount)));
    }
  }
}

void ResourceList::MaxWith(const ResourceList& other) {
  for (const auto& [name, amount] : other.entries_) {
    auto it = Position(name);
    if (it != entries_.end() && it->first == name) {
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
    out += name.str();
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
