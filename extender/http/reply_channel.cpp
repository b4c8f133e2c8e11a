#include "extender/http/reply_channel.h"

#include <utility>

#include "extender/http/connection.h"
#include "extender/http/error_body.h"

namespace capext::http {
namespace {

// The connection whose Handler the current thread is running, if any.
thread_local const Connection* handling_connection = nullptr;

}  // namespace

HandlerCallScope::HandlerCallScope(const Connection* connection) : previous_(handling_connection) {
  handling_connection = connection;
}

HandlerCallScope::~HandlerCallScope() {
  handling_connection = previous_;
}

ReplyChannel::ReplyChannel(const std::shared_ptr<Connection>& connection,
                           std::uint64_t request_serial, std::shared_ptr<ResponseGate> gate)
    : connection_(connection),
      identity_(connection.get()),
      request_serial_(request_serial),
      gate_(std::move(gate)) {}

ReplyChannel::~ReplyChannel() {
  if (sent_.load(std::memory_order_relaxed)) return;
  Route(ErrorResponse(500, "request handler did not respond"));
}

void ReplyChannel::Send(Response response) {
  if (sent_.exchange(true, std::memory_order_acq_rel)) return;
  Route(std::move(response));
}

void ReplyChannel::Route(Response response) {
  if (identity_ != nullptr && handling_connection == identity_) {
    // Inside the connection's own Handler call: we are on its strand and it is alive (it is the
    // caller), unless the address was reused, which the weak_ptr rules out.
    if (auto connection = connection_.lock()) {
      connection->DeliverInline(request_serial_, std::move(response));
    }
    return;
  }
  // Another thread. Holding the gate keeps the io_context alive until the post is done, and makes
  // sure that our temporary strong reference is never the last one once the io_context is gone.
  std::lock_guard<std::mutex> lock(gate_->mutex);
  if (!gate_->open) return;
  if (auto connection = connection_.lock()) {
    connection->PostResponse(request_serial_, std::move(response));
  }
}

Responder MakeResponder(std::shared_ptr<ReplyChannel> channel) {
  return [channel = std::move(channel)](Response response) { channel->Send(std::move(response)); };
}

}  // namespace capext::http
