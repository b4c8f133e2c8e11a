// Internal to extender/http: what stands behind a Responder. It routes the one response of one
// request back to its connection: inline when called from inside that connection's Handler call,
// else posted onto the connection's strand.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "extender/http/server.h"

namespace capext::http {

class Connection;

// Shared by the server and every ReplyChannel. The server closes it (after joining its IO threads,
// before destroying its io_context), so that a Responder called later, from any thread, never
// posts into a destroyed io_context.
struct ResponseGate {
  std::mutex mutex;
  bool open = true;  // guarded by mutex
};

// Marks the calling thread as running `connection`'s Handler for the scope's lifetime.
class HandlerCallScope {
 public:
  explicit HandlerCallScope(const Connection* connection);
  ~HandlerCallScope();
  HandlerCallScope(const HandlerCallScope&) = delete;
  HandlerCallScope& operator=(const HandlerCallScope&) = delete;

 private:
  const Connection* previous_;
};

// Thread-safety: Send may be called concurrently from several threads; only the first call counts.
class ReplyChannel {
 public:
  ReplyChannel(const std::shared_ptr<Connection>& connection, std::uint64_t request_serial,
               std::shared_ptr<ResponseGate> gate);
  // Answers 500 if Send was never called.
  ~ReplyChannel();
  ReplyChannel(const ReplyChannel&) = delete;
  ReplyChannel& operator=(const ReplyChannel&) = delete;

  void Send(Response response);

 private:
  void Route(Response response);

  std::weak_ptr<Connection> connection_;
  const Connection* identity_;  // compared only, never dereferenced
  std::uint64_t request_serial_;
  std::shared_ptr<ResponseGate> gate_;
  std::atomic<bool> sent_{false};
};

// The Responder handed to the Handler: every copy shares `channel`.
Responder MakeResponder(std::shared_ptr<ReplyChannel> channel);

}  // namespace capext::http
