#include "extender/filter_pacer.h"

#include <utility>
#include <vector>

namespace capext {

FilterPacer::FilterPacer(Options options, Metrics* metrics)
    : options_(options),
      metrics_(metrics),
      timers_(options.hold_limit.count() > 0 ? std::make_unique<TimerThread>() : nullptr) {
  metrics_->Count("capacity_extender_filter_held_total", "", "", 0);  // rendered from the start
  metrics_->Count("capacity_extender_filter_held_to_limit_total", "", "", 0);
  metrics_->DeclareHistogram("capacity_extender_filter_hold_seconds",
                             "How long /filter answers were held while Bindings queued.",
                             Metrics::Scale::kLatency);
}

FilterPacer::~FilterPacer() {
  timers_.reset();  // joins its thread: no limit callback runs from here on
  std::map<uint64_t, Held> held;
  {
    std::lock_guard lock(mutex_);
    held.swap(held_);
  }
  for (auto& [serial, h] : held)
    Send(std::move(h), false);
}

void FilterPacer::QueuedBindingsChanged(int64_t delta) {
  std::vector<Held> release;
  {
    std::lock_guard lock(mutex_);
    queued_ += delta;
    if (queued_ > options_.hold_above || held_.empty()) return;
    for (auto& [serial, h] : held_)
      release.push_back(std::move(h));
    held_.clear();
  }
  for (Held& h : release) {
    timers_->Cancel(h.timer);  // false when its callback runs now: it finds nothing held
    Send(std::move(h), false);
  }
}

void FilterPacer::Answer(http::Response response, http::Responder respond) {
  if (!timers_) return respond(std::move(response));  // hold_limit 0: never hold
  std::unique_lock lock(mutex_);
  if (queued_ <= options_.hold_above) {
    lock.unlock();
    return respond(std::move(response));
  }
  const uint64_t serial = next_serial_++;
  const Clock::time_point now = Clock::now();
  Held& h = held_[serial];
  h.response = std::move(response);
  h.respond = std::move(respond);
  h.since = now;
  // Under the lock, so that QueuedBindingsChanged cannot release the entry before its timer is
  // known.
  h.timer =
      timers_->At(now + options_.hold_limit, [this, serial](TimerThread::Id) { OnLimit(serial); });
  lock.unlock();
  metrics_->Count("capacity_extender_filter_held_total");
}

std::size_t FilterPacer::held() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

void FilterPacer::OnLimit(uint64_t serial) {
  Held h;
  {
    std::lock_guard lock(mutex_);
    auto it = held_.find(serial);
    if (it == held_.end()) return;  // released by the queue meanwhile
    h = std::move(it->second);
    held_.erase(it);
  }
  Send(std::move(h), true);
}

void FilterPacer::Send(Held held, bool by_limit) {
  metrics_->Observe("capacity_extender_filter_hold_seconds",
                    std::chrono::duration<double>(Clock::now() - held.since).count());
  if (by_limit) metrics_->Count("capacity_extender_filter_held_to_limit_total");
  held.respond(std::move(held.response));
}

}  // namespace capext
