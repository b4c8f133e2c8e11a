// Internal to extender/http: the set of live connections of one server. It owns them (a
// connection stays alive at least until it removes itself), counts them against
// ServerOptions::max_connections, and lets shutdown reach every one of them and wait for them to
// go.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

namespace capext::http {

class Connection;

// Thread-safety: all methods are thread-safe.
class ConnectionRegistry {
 public:
  explicit ConnectionRegistry(std::size_t capacity) : capacity_(capacity) {}

  enum class AddResult { kAdded, kFull, kClosed };
  // kFull when `capacity` connections are live; kClosed after Close().
  AddResult Add(const std::shared_ptr<Connection>& connection);

  // Drops the registry's reference. No-op if `connection` is not registered.
  void Remove(Connection* connection);

  // Refuses every later Add.
  void Close();

  // How many connections are registered.
  std::size_t Size() const;

  // A snapshot of the live connections.
  std::vector<std::shared_ptr<Connection>> List() const;

  // True once no connection is registered; false if `deadline` passed first.
  bool WaitUntilEmpty(std::chrono::steady_clock::time_point deadline);

  // Drops every reference (the connections are destroyed once nothing else holds them).
  void Clear();

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable emptied_;
  std::list<std::shared_ptr<Connection>> live_;  // guarded by mutex_
  std::size_t size_ = 0;                         // guarded by mutex_
  bool closed_ = false;                          // guarded by mutex_
};

}  // namespace capext::http
