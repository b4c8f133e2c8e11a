#include "extender/http/connection_registry.h"

#include <utility>

#include "extender/http/connection.h"

namespace capext::http {

ConnectionRegistry::AddResult ConnectionRegistry::Add(
    const std::shared_ptr<Connection>& connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return AddResult::kClosed;
  if (size_ >= capacity_) return AddResult::kFull;
  connection->registry_slot_ = live_.insert(live_.end(), connection);
  connection->registered_ = true;
  ++size_;
  return AddResult::kAdded;
}

void ConnectionRegistry::Remove(Connection* connection) {
  std::shared_ptr<Connection> released;  // destroyed after the lock is released
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!connection->registered_) return;
    connection->registered_ = false;
    released = std::move(*connection->registry_slot_);
    live_.erase(connection->registry_slot_);
    if (--size_ == 0) emptied_.notify_all();
  }
}

void ConnectionRegistry::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
}

std::size_t ConnectionRegistry::Size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return size_;
}

std::vector<std::shared_ptr<Connection>> ConnectionRegistry::List() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {live_.begin(), live_.end()};
}

bool ConnectionRegistry::WaitUntilEmpty(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  return emptied_.wait_until(lock, deadline, [this] { return size_ == 0; });
}

void ConnectionRegistry::Clear() {
  std::list<std::shared_ptr<Connection>> released;  // destroyed after the lock is released
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& connection : live_)
      connection->registered_ = false;
    released.swap(live_);
    size_ = 0;
    emptied_.notify_all();
  }
}

}  // namespace capext::http
