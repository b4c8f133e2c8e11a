// RestClient: calls to the Kubernetes API server on ONE client thread of its own (Boost.Beast over
// Asio); live mode runs two, one for Bindings and one for everything else. Requests go over a
// small pool of keep-alive connections with a bounded queue; each has a timeout and, optionally, a
// deadline after which it is never sent; a reused connection the server had closed (end of file,
// reset, or over TLS a stream truncated without close_notify: a killed server) is replaced and the
// request sent again once; completion callbacks run on the client thread. Watches stream on
// dedicated connections, their lines handed to a callback on the client thread as they arrive.
// No thread is created per request.
//
// TLS: the server certificate is verified against KubeConfig::ca_pem (only those roots) or, when
// that is empty, the system roots; the host name (or IP address) must match. Verification is off
// only when the kubeconfig asked for insecure-skip-tls-verify. Client certificates and bearer
// tokens are sent when configured; the token is fetched for every request, so a rotated token
// file is used as soon as it is re-read, and a 401 forces a re-read plus one retry.
//
// Thread-safety: every method may be called from any thread. The blocking calls (Get, Post, ...,
// Watch) wait on the client thread and must not be called from it (they then fail at once with
// an error instead of deadlocking); callbacks of the asynchronous calls run on the client thread
// and must not block.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "core/status.h"
#include "extender/kube/kube_config.h"

namespace boost::asio {
class io_context;
}

namespace capext::kube {

struct RestResponse {
  int status = 0;     // HTTP status code; 0 when no response arrived (see error)
  std::string body;   // the response body, whatever the status
  std::string error;  // why no response arrived (connect, TLS, timeout, cancelled); else empty
  int retry_after_seconds = -1;  // the Retry-After header; -1 when absent
  // The request was written (at least partly) to a connection. With status 0 the server may or
  // may not have acted on it; without `sent` it certainly did not.
  bool sent = false;
  // Never sent: CallOptions::send_by passed while the call waited for a connection.
  bool send_deadline_passed = false;
  // From SendAsync to the request's write (or, when never sent, to the end of the call).
  std::chrono::microseconds queued{0};
  bool ok() const { return status >= 200 && status < 300; }
};

// Per-call options of SendAsync.
struct CallOptions {
  // > 0 replaces the client's request_timeout for this call (set-up and exchange).
  std::chrono::milliseconds timeout{0};
  // When set, the request is never written to a connection at or after this instant: a call
  // still waiting for a connection (queued, or its connection still being set up) then finishes
  // at once with send_deadline_passed and sent == false.
  std::optional<std::chrono::steady_clock::time_point> send_by;
  // Runs on the client thread when the request is about to be written (at most once per call
  // unless a stale-connection or 401 retry writes it again: then once per write).
  std::function<void()> on_written;
};

struct RestClientOptions {
  // Timeout of ordinary requests: bounds the connection set-up (when a new connection is needed)
  // and, separately, the exchange (write + read).
  std::chrono::milliseconds request_timeout{30000};
  std::string user_agent = "capacity-extender";
  std::string thread_name = "ce-api";  // of the client's thread (http/thread_name.h)
  size_t max_connections = 4;          // keep-alive connections for ordinary requests
  size_t max_queued = 4096;            // requests waiting for a connection; beyond: failed at once
};

// The Kubernetes protobuf media type (docs/architecture.md#watching-in-protobuf). A watch in it
// answers "application/vnd.kubernetes.protobuf;stream=watch".
inline constexpr std::string_view kProtobufMediaType = "application/vnd.kubernetes.protobuf";

// How a watch stream's body is cut into events, chosen by the response's Content-Type: a JSON
// stream has one event per line; a protobuf stream (kProtobufMediaType) gives each event's bytes
// after their length, 4 bytes big-endian.
enum class WatchFraming { kLines, kLengthPrefixed };

struct WatchResult {
  int status = 0;             // HTTP status of the watch response; 0 when none arrived
  std::string body;           // the response body when status != 200
  std::string error;          // why the stream broke (dropped connection, timeout); empty otherwise
  bool stopped = false;       // ended by a cancel/stop or by on_event returning false
  bool completed = false;     // the server ended the stream normally (terminating chunk)
  bool idle_timeout = false;  // the stream broke because nothing arrived for inactivity_timeout
  uint64_t lines = 0;         // complete events (lines or frames) handed to on_event
  WatchFraming framing = WatchFraming::kLines;  // of the response (its Content-Type)
  int retry_after_seconds = -1;  // the Retry-After header of the response; -1 when absent
};

// Cancels one asynchronous call. Cancelling a finished call does nothing. Thread-safe; on the
// client thread it takes effect at once, elsewhere as soon as the client thread gets to it.
// REQUIRES: the RestClient still exists.
class CallHandle {
 public:
  virtual ~CallHandle() = default;
  virtual void Cancel() = 0;
};

struct RestClientStats {
  uint64_t requests = 0;       // requests completed (any outcome)
  uint64_t connections = 0;    // connections opened (pool and watches)
  uint64_t stale_retries = 0;  // requests re-sent after a reused connection turned out closed
};

class RestClient {
 public:
  // Checks the URL and the TLS material (CA, client certificate and key must parse), then
  // starts the client thread.
  static Status Create(const KubeConfig& config, const RestClientOptions& options,
                       std::unique_ptr<RestClient>* out);
  // Cancels every call in flight (their callbacks run with error "cancelled") and joins the
  // client thread.
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  using ResponseCallback = std::function<void(RestResponse)>;
  // `path` is the request target below the server URL, with its query: "/api/v1/pods?limit=5".
  // `done` runs exactly once, on the client thread. `timeout` > 0 replaces the client's
  // request_timeout for this call (set-up and exchange).
  std::shared_ptr<CallHandle> SendAsync(std::string method, std::string path, std::string body,
                                        std::string content_type, ResponseCallback done,
                                        std::chrono::milliseconds timeout = {});
  std::shared_ptr<CallHandle> SendAsync(std::string method, std::string path, std::string body,
                                        std::string content_type, ResponseCallback done,
                                        CallOptions options);

  // Blocking forms. A stop request aborts the call (the result then carries error "cancelled").
  RestResponse Get(const std::string& path, std::stop_token stop = {});
  RestResponse Post(const std::string& path, std::string body,
                    const std::string& content_type = "application/json");
  RestResponse Put(const std::string& path, std::string body,
                   const std::string& content_type = "application/json");
  RestResponse Patch(const std::string& path, std::string body, const std::string& content_type);
  RestResponse Delete(const std::string& path);
  // `timeout` > 0 replaces the client's request_timeout for this call.
  RestResponse Send(const std::string& method, const std::string& path, std::string body,
                    const std::string& content_type, std::stop_token stop = {},
                    std::chrono::milliseconds timeout = {});

  // Called with each complete event of a watch stream: a line (without its '\n'; empty lines
  // skipped), or a frame (without its length) of a length-prefixed stream. Returning false ends
  // the watch (the connection is closed). The view is valid only during the call.
  using EventCallback = std::function<bool(std::string_view event)>;
  // Runs once the response header arrived, before any event: its status, and how its body is
  // cut into events.
  using WatchStartCallback = std::function<void(int status, WatchFraming framing)>;

  // GETs `path` (which should carry watch=1) with `accept` as its Accept header, and streams the
  // response body event by event until the server ends it, the connection breaks,
  // `inactivity_timeout` passes without a byte, the callback returns false, or the handle is
  // cancelled. A trailing partial event of a broken stream is dropped, never delivered.
  // `on_start` (when set), `on_event` and then `done` (once) run on the client thread; no event
  // is delivered after Cancel() returned on the client thread.
  std::shared_ptr<CallHandle> WatchAsync(std::string path,
                                         std::chrono::milliseconds inactivity_timeout,
                                         EventCallback on_event,
                                         std::function<void(WatchResult)> done,
                                         WatchStartCallback on_start = {},
                                         std::string accept = "application/json");

  // Blocking form of WatchAsync (on_event still runs on the client thread); `stop` cancels.
  WatchResult Watch(const std::string& path, std::chrono::milliseconds inactivity_timeout,
                    const EventCallback& on_event, std::stop_token stop,
                    std::string accept = "application/json");

  // The client thread's io_context, for timers of code that runs on the client thread.
  boost::asio::io_context& io_context();
  // Runs `work` on the client thread (later, never inline).
  void RunOnClientThread(std::function<void()> work);
  bool OnClientThread() const;

  RestClientStats Stats() const;
  const std::string& server() const;

 private:
  class Impl;
  explicit RestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace capext::kube
