#include "extender/timer_thread.h"

#include "extender/http/thread_name.h"

namespace capext {

TimerThread::TimerThread()
    : thread_([this] {
        http::NameThisThread("ce-timers");
        Run();
      }) {}

TimerThread::~TimerThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  // Pending callbacks are destroyed with due_, here, unrun.
}

TimerThread::Id TimerThread::At(Clock::time_point when, Callback callback) {
  Id id;
  bool earliest;
  {
    std::lock_guard lock(mutex_);
    id = next_id_++;
    due_.emplace(std::make_pair(when, id), std::move(callback));
    when_.emplace(id, when);
    earliest = due_.begin()->first.second == id;
  }
  if (earliest) wake_.notify_all();
  return id;
}

bool TimerThread::Cancel(Id id) {
  Callback cancelled;  // destroyed after the lock is released
  std::lock_guard lock(mutex_);
  auto it = when_.find(id);
  if (it == when_.end()) return false;
  auto entry = due_.find({it->second, id});
  cancelled = std::move(entry->second);
  due_.erase(entry);
  when_.erase(it);
  return true;
}

std::size_t TimerThread::pending() const {
  std::lock_guard lock(mutex_);
  return due_.size();
}

void TimerThread::Run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (due_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const Clock::time_point next = due_.begin()->first.first;
    if (Clock::now() < next) {
      wake_.wait_until(lock, next);
      continue;
    }
    auto first = due_.begin();
    const Id id = first->first.second;
    Callback callback = std::move(first->second);
    when_.erase(id);
    due_.erase(first);
    lock.unlock();
    callback(id);
    callback = nullptr;  // its captures are released without the lock
    lock.lock();
  }
}

}  // namespace capext
