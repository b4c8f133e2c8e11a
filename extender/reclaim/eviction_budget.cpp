#include "extender/reclaim/eviction_budget.h"

#include <iterator>

namespace capext {

void EvictionBudget::Expire(std::deque<int64_t>& window, int64_t window_ms, int64_t now_ms) {
  while (!window.empty() && window.front() <= now_ms - window_ms)
    window.pop_front();
}

bool EvictionBudget::HasRoomFor(const std::vector<std::string>& victim_namespaces, int64_t now_ms) {
  Expire(recent_, 1000, now_ms);
  if (static_cast<double>(recent_.size() + victim_namespaces.size()) > per_second_) return false;
  std::map<std::string, int> per_namespace;
  for (const auto& ns : victim_namespaces)
    ++per_namespace[ns];
  for (const auto& [ns, count] : per_namespace) {
    auto& window = by_namespace_[ns];
    Expire(window, 60'000, now_ms);
    if (static_cast<int>(window.size()) + count > per_namespace_per_minute_) return false;
  }
  return true;
}

bool EvictionBudget::Take(const std::string& ns, int64_t now_ms) {
  Expire(recent_, 1000, now_ms);
  auto& window = by_namespace_[ns];
  Expire(window, 60'000, now_ms);
  if (static_cast<double>(recent_.size()) + 1 > per_second_ ||
      static_cast<int>(window.size()) + 1 > per_namespace_per_minute_) {
    return false;
  }
  recent_.push_back(now_ms);
  window.push_back(now_ms);
  return true;
}

void EvictionBudget::GiveBack(const std::string& ns, int64_t now_ms) {
  // Tokens are appended in time order, so the one taken at now_ms is the last such entry.
  auto give_back = [now_ms](std::deque<int64_t>& window) {
    for (auto it = window.rbegin(); it != window.rend() && *it >= now_ms; ++it) {
      if (*it == now_ms) {
        window.erase(std::next(it).base());
        return;
      }
    }
  };
  give_back(recent_);
  give_back(by_namespace_[ns]);
}

}  // namespace capext
