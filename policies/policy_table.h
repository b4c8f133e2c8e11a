// PolicyTable: the choices a user switches by name (capacity-semantics: victim order, node
// scoring, quota semantics), each as one table of name, help and factory. The tables are the
// only place a policy's name is spelled: config validation, `--help`, /quotas and capacity-sim
// all read them. The first entry is the default.
// Thread-safety: the tables are immutable after static initialisation (entries are added only
// then).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace capext {

template <typename T>
struct PolicyEntry {
  std::string_view name;
  std::string_view help;  // one line, for --help and validation messages
  T (*make)();
};

template <typename T>
class PolicyTable {
 public:
  PolicyTable(std::string_view what, std::vector<PolicyEntry<T>> entries)
      : what_(what), entries_(std::move(entries)) {}

  // Appends an entry (a registration during static initialisation, admission_rules.h).
  void Add(PolicyEntry<T> entry) { entries_.push_back(entry); }

  // "victim order", "scoring", ...: what the table chooses, for messages.
  std::string_view what() const { return what_; }
  const std::vector<PolicyEntry<T>>& entries() const { return entries_; }
  const PolicyEntry<T>& default_entry() const { return entries_.front(); }

  // The entry named `name`, or nullptr.
  const PolicyEntry<T>* Find(std::string_view name) const {
    for (const auto& e : entries_) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_)
      out.emplace_back(e.name);
    return out;
  }
  // "a (default), b or c".
  std::string NamesText() const {
    std::string out;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (i > 0) out += i + 1 == entries_.size() ? " or " : ", ";
      out += entries_[i].name;
      if (i == 0) out += " (default)";
    }
    return out;
  }
  // One line per entry: "  name  help", for --help.
  std::string HelpText(std::string_view indent = "  ") const {
    std::size_t width = 0;
    for (const auto& e : entries_)
      width = std::max(width, e.name.size());
    std::string out;
    for (const auto& e : entries_)
      out += fmt::format("{}{:<{}}  {}\n", indent, e.name, width, e.help);
    return out;
  }

 private:
  std::string_view what_;
  std::vector<PolicyEntry<T>> entries_;
};

}  // namespace capext
