// LabelSelector (metav1.LabelSelector) and its matching rules.
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace capext {

// Labels: a string -> string map with the part of std::map's interface the code uses (find,
// count, at, operator[], emplace, insert_or_assign, erase, iteration in key order, ==), packed
// in one buffer. Every pod and node carries a label set; std::map spent about 100 bytes of
// bookkeeping per label on top of the strings, this spends 8.
// Entries are "<key length><key><value length><value>" (lengths as 4 bytes), sorted by key as
// std::string compares. Keys and values are views into the buffer: valid until the next change.
// Thread-safety: a value type.
class Labels {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;

  class const_iterator {
   public:
    using value_type = Labels::value_type;
    using reference = value_type;
    using difference_type = std::ptrdiff_t;
    using iterator_category = std::forward_iterator_tag;
    struct Arrow {
      value_type entry;
      const value_type* operator->() const { return &entry; }
    };

    const_iterator() = default;
    value_type operator*() const {
      const uint32_t klen = Length(p_);
      const char* key = p_ + 4;
      return {std::string_view(key, klen), std::string_view(key + klen + 4, Length(key + klen))};
    }
    Arrow operator->() const { return Arrow{**this}; }
    const_iterator& operator++() {
      const uint32_t klen = Length(p_);
      p_ += 8 + klen + Length(p_ + 4 + klen);
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const const_iterator& other) const { return p_ == other.p_; }
    bool operator!=(const const_iterator& other) const { return p_ != other.p_; }

   private:
    friend class Labels;
    explicit const_iterator(const char* p) : p_(p) {}
    const char* p_ = nullptr;
  };
  using iterator = const_iterator;

  // What operator[] returns: assigning to it sets the value, as with std::map.
  class ValueRef {
   public:
    ValueRef& operator=(std::string_view value) {
      labels_->insert_or_assign(key_, value);
      return *this;
    }
    operator std::string_view() const { return labels_->find(key_)->second; }

   private:
    friend class Labels;
    ValueRef(Labels* labels, std::string_view key) : labels_(labels), key_(key) {}
    Labels* labels_;
    std::string_view key_;  // valid for the full expression that called operator[]
  };

  Labels() = default;
  Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> entries) {
    for (const auto& [key, value] : entries)
      insert_or_assign(key, value);
  }

  bool empty() const { return data_.empty(); }
  std::size_t size() const {
    std::size_t n = 0;
    for (auto it = begin(); it != end(); ++it)
      ++n;
    return n;
  }
  const_iterator begin() const { return const_iterator(data_.data()); }
  const_iterator end() const { return const_iterator(data_.data() + data_.size()); }

  const_iterator find(std::string_view key) const {
    for (auto it = begin(); it != end(); ++it) {
      const std::string_view k = (*it).first;
      if (k == key) return it;
      if (key < k) break;
    }
    return end();
  }
  std::size_t count(std::string_view key) const { return find(key) != end() ? 1 : 0; }
  bool contains(std::string_view key) const { return find(key) != end(); }
  // The value of `key`. REQUIRES: the key is present (else std::out_of_range is thrown).
  std::string_view at(std::string_view key) const;

  // The value of `key` for assignment (an absent key gets an empty value when read).
  ValueRef operator[](std::string_view key) {
    if (find(key) == end()) insert_or_assign(key, std::string_view());
    return ValueRef(this, key);
  }
  // Sets `key` to `value`. Returns true when the key was new.
  bool insert_or_assign(std::string_view key, std::string_view value);
  // Adds `key` unless present (as std::map::emplace). Returns true when it was added.
  bool emplace(std::string_view key, std::string_view value) {
    if (find(key) != end()) return false;
    return insert_or_assign(key, value);
  }
  std::size_t erase(std::string_view key);
  void clear() { std::string().swap(data_); }

  bool operator==(const Labels& other) const { return data_ == other.data_; }
  bool operator!=(const Labels& other) const { return data_ != other.data_; }

 private:
  static uint32_t Length(const char* p) {
    uint32_t n;
    std::memcpy(&n, p, 4);
    return n;
  }
  std::string data_;
};

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
};

struct LabelSelector {
  Labels match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;

  // True when the selector has no terms at all. Kubernetes' PDB check treats an empty
  // selector as matching nothing (see PodDisruptionBudget).
  bool Empty() const { return match_labels.empty() && match_expressions.empty(); }
  // Every matchLabels pair and every expression must hold. An unknown operator matches nothing.
  bool Matches(const Labels& labels) const;
};

}  // namespace capext
