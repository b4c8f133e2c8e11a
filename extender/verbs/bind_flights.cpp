#include "extender/verbs/bind_flights.h"

#include <utility>

namespace capext {

BindFlights::BindFlights(DeadlineHandler on_deadline) : on_deadline_(std::move(on_deadline)) {}

std::size_t BindFlights::Size() const {
  std::lock_guard lock(mutex_);
  return flights_.size();
}

std::optional<BindFlights::FlightView> BindFlights::Find(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = flights_.find(key);
  if (it == flights_.end()) return std::nullopt;
  return FlightView{it->second.node, it->second.opened};
}

void BindFlights::Open(const std::string& key, const std::string& node, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  flights_.emplace(key, Flight{node, now, {}});
}

void BindFlights::Join(const std::string& key, Waiter waiter) {
  std::lock_guard lock(mutex_);
  Flight& flight = flights_.at(key);
  // Set while the mutex is held: its callback (which takes the mutex) finds the waiter in place,
  // even when the deadline has already passed.
  const TimerThread::Id id =
      timers_.At(waiter.deadline, [this, key](TimerThread::Id self) { OnDeadline(key, self); });
  flight.waiters.emplace(id, std::move(waiter));
}

std::vector<BindFlights::Waiter> BindFlights::Land(const std::string& key) {
  std::vector<Waiter> out;
  std::lock_guard lock(mutex_);
  auto it = flights_.find(key);
  if (it == flights_.end()) return out;
  for (auto& [id, waiter] : it->second.waiters) {
    timers_.Cancel(id);  // a callback already started finds no waiter and does nothing
    out.push_back(std::move(waiter));
  }
  flights_.erase(it);
  return out;
}

void BindFlights::OnDeadline(const std::string& key, TimerThread::Id id) {
  std::optional<Waiter> waiter;
  FlightView view;
  {
    std::lock_guard lock(mutex_);
    auto it = flights_.find(key);
    if (it == flights_.end()) return;  // landed: Land took the waiter
    auto w = it->second.waiters.find(id);
    if (w == it->second.waiters.end()) return;
    waiter = std::move(w->second);
    it->second.waiters.erase(w);
    view = FlightView{it->second.node, it->second.opened};
  }
  on_deadline_(std::move(*waiter), view);
}

void BindFlights::MarkUnanswered(const std::string& key, Unanswered unanswered) {
  std::lock_guard lock(mutex_);
  unanswered_[key] = std::move(unanswered);
}

std::optional<BindFlights::Unanswered> BindFlights::FindUnanswered(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = unanswered_.find(key);
  if (it == unanswered_.end()) return std::nullopt;
  return it->second;
}

void BindFlights::ForgetUnanswered(const std::string& key) {
  std::lock_guard lock(mutex_);
  unanswered_.erase(key);
}

void BindFlights::PruneUnanswered(const std::function<bool(const std::string& key)>& reserved) {
  std::lock_guard lock(mutex_);
  std::erase_if(unanswered_, [&](const auto& entry) { return !reserved(entry.first); });
}

std::size_t BindFlights::UnansweredSize() const {
  std::lock_guard lock(mutex_);
  return unanswered_.size();
}

}  // namespace capext
