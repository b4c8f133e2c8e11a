#include "core/label_selector.h"

#include <algorithm>
#include <stdexcept>

namespace capext {

namespace {
void AppendLength(std::string* out, std::size_t n) {
  const auto length = static_cast<uint32_t>(n);
  char bytes[4];
  std::memcpy(bytes, &length, 4);
  out->append(bytes, 4);
}
}  // namespace

std::string_view Labels::at(std::string_view key) const {
  auto it = find(key);
  if (it == end()) throw std::out_of_range("no label " + std::string(key));
  return (*it).second;
}

bool Labels::insert_or_assign(std::string_view key, std::string_view value) {
  // The first entry whose key is not less than `key`.
  const char* p = data_.data();
  const char* end = p + data_.size();
  while (p != end) {
    const uint32_t klen = Length(p);
    const std::string_view k(p + 4, klen);
    if (!(k < key)) break;
    p += 8 + klen + Length(p + 4 + klen);
  }
  const std::size_t at = static_cast<std::size_t>(p - data_.data());
  std::size_t replaced = 0;
  if (p != end) {
    const uint32_t klen = Length(p);
    if (std::string_view(p + 4, klen) == key) replaced = 8 + klen + Length(p + 4 + klen);
  }
  // Rebuilt into a buffer of exactly the new size: label sets are small, and a growing string
  // would keep up to twice the memory on every pod and node.
  std::string next;
  next.reserve(data_.size() - replaced + 8 + key.size() + value.size());
  next.append(data_, 0, at);
  AppendLength(&next, key.size());
  next.append(key);
  AppendLength(&next, value.size());
  next.append(value);
  next.append(data_, at + replaced, std::string::npos);
  data_.swap(next);
  return replaced == 0;
}

std::size_t Labels::erase(std::string_view key) {
  auto it = find(key);
  if (it == end()) return 0;
  const std::size_t at = static_cast<std::size_t>(it.p_ - data_.data());
  const uint32_t klen = Length(it.p_);
  const std::size_t length = 8 + klen + Length(it.p_ + 4 + klen);
  std::string next;
  next.reserve(data_.size() - length);
  next.append(data_, 0, at);
  next.append(data_, at + length, std::string::npos);
  data_.swap(next);
  return 1;
}

bool LabelSelector::Matches(const Labels& labels) const {
  for (const auto& [key, value] : match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const auto& req : match_expressions) {
    auto it = labels.find(req.key);
    const bool has = it != labels.end();
    const bool in_values =
        has && std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
    if (req.op == "In") {
      if (!in_values) return false;
    } else if (req.op == "NotIn") {
      if (in_values) return false;
    } else if (req.op == "Exists") {
      if (!has) return false;
    } else if (req.op == "DoesNotExist") {
      if (has) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace capext
