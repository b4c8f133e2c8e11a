// EvictionBudget: the reclaim controller's eviction rate limits, a cluster-wide
// evictions-per-second window and a per-victim-namespace evictions-per-minute window. A plan is
// all or nothing (HasRoomFor before Take); an eviction that did not happen gives its token back.
// Thread-safety: none; the reclaim loop is its only user.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace capext {

class EvictionBudget {
 public:
  EvictionBudget(double per_second, int per_namespace_per_minute)
      : per_second_(per_second), per_namespace_per_minute_(per_namespace_per_minute) {}

  // True when evicting one pod of each namespace in `victim_namespaces` (repeats count) now
  // stays within both limits.
  bool HasRoomFor(const std::vector<std::string>& victim_namespaces, int64_t now_ms);
  // Takes one eviction of namespace `ns` at `now_ms`; false (nothing taken) when over a limit.
  bool Take(const std::string& ns, int64_t now_ms);
  // Gives back a token taken at `now_ms` for an eviction that did not happen.
  void GiveBack(const std::string& ns, int64_t now_ms);

  double per_second() const { return per_second_; }
  int per_namespace_per_minute() const { return per_namespace_per_minute_; }

 private:
  void Expire(std::deque<int64_t>& window, int64_t window_ms, int64_t now_ms);

  double per_second_;
  int per_namespace_per_minute_;
  std::deque<int64_t> recent_;                               // global window (1 s)
  std::map<std::string, std::deque<int64_t>> by_namespace_;  // 60 s windows
};

}  // namespace capext
