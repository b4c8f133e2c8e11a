// RestClient::Impl: the client thread's state and its two halves, shared by rest_client.cpp (the
// pool of keep-alive connections for ordinary requests) and rest_client_watch.cpp (watch
// streams). Internal to extender/kube: include it only from those two files. Every method below
// OnThread runs on the client thread.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <deque>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "extender/http/thread_name.h"
#include "extender/kube/api_connection.h"
#include "extender/kube/rest_client.h"

namespace capext::kube {

namespace net = boost::asio;
namespace beast = boost::beast;

class RestClient::Impl {
 public:
  using Clock = std::chrono::steady_clock;

  struct Call final : CallHandle, std::enable_shared_from_this<Call> {
    Impl* impl = nullptr;
    std::string method, path, body, content_type;
    ResponseCallback done;
    std::string token;
    std::chrono::milliseconds timeout{0};
    std::optional<Clock::time_point> send_by;
    std::function<void()> on_written;
    Clock::time_point created = Clock::now();
    std::chrono::microseconds queued{0};  // until the (last) write began
    // Fires at send_by while the request is not written yet (see ExpireUnsent).
    std::unique_ptr<net::steady_timer> send_timer;
    bool written = false;  // the current attempt's request went (at least partly) on the wire
    bool retried_unauthorized = false;
    bool retried_stale = false;
    bool cancelled = false;
    bool finished = false;
    std::shared_ptr<ApiConnection> connection;
    void Cancel() override {
      impl->OnThread([self = shared_from_this()] { self->impl->CancelCall(self); });
    }
  };

  struct WatchCall final : CallHandle, std::enable_shared_from_this<WatchCall> {
    Impl* impl = nullptr;
    std::string path;
    std::chrono::milliseconds inactivity{0};
    std::string accept;
    EventCallback on_event;
    std::function<void(WatchResult)> done;
    WatchStartCallback on_start;
    std::shared_ptr<ApiConnection> connection;
    WatchResult result;
    std::string pending;  // bytes after the last complete event
    bool cancelled = false;
    bool finished = false;
    void Cancel() override {
      impl->OnThread([self = shared_from_this()] {
        self->cancelled = true;
        if (self->connection) self->connection->Close();
      });
    }
  };

  Impl(KubeConfig config, RestClientOptions options, ApiEndpoint endpoint,
       std::unique_ptr<net::ssl::context> tls)
      : config_(std::move(config)),
        options_(std::move(options)),
        endpoint_(std::move(endpoint)),
        tls_(std::move(tls)),
        io_(1),
        work_(net::make_work_guard(io_)) {
    thread_ = std::thread([this] {
      http::NameThisThread(options_.thread_name);
      io_.run();
    });
    thread_id_ = thread_.get_id();
  }

  ~Impl() {
    net::post(io_, [this] { Shutdown(); });
    work_.reset();
    thread_.join();
  }

  bool OnClientThread() const { return std::this_thread::get_id() == thread_id_; }

  // Runs `work` now when on the client thread, else posts it there.
  void OnThread(std::function<void()> work) {
    if (OnClientThread()) {
      work();
    } else {
      net::post(io_, std::move(work));
    }
  }

  std::shared_ptr<Call> NewCall(std::string method, std::string path, std::string body,
                                std::string content_type, ResponseCallback done);

  std::shared_ptr<ApiRequest> BuildRequest(const std::string& method, const std::string& path,
                                           const std::string& body, const std::string& content_type,
                                           const std::string& token) const;

  std::string CurrentToken() { return config_.token ? config_.token->Current() : ""; }

  std::shared_ptr<ApiConnection> NewConnection();

  // --- ordinary requests (rest_client.cpp) ---

  // Gives the call an idle connection, a new one (under max_connections), or a place in the queue.
  void Dispatch(const std::shared_ptr<Call>& call);

  // Writes the call on `connection` (unless its send_by passed) and finishes it with the response;
  // a `reused` connection the server had closed is replaced and the call sent again once.
  void Run(const std::shared_ptr<Call>& call, const std::shared_ptr<ApiConnection>& connection,
           bool reused);

  // Dispatches queued calls while connections are free.
  void Pump();

  // Sends a call again whose written request was not acted on: its deadline applies again.
  void Redispatch(const std::shared_ptr<Call>& call);

  // Arms the call's send_by timer; called after Dispatch, it arms one only for a call still
  // waiting (queued, or on a connection still connecting). Calls without one never expire unsent.
  void ArmSendDeadline(const std::shared_ptr<Call>& call);

  // The call's send_by passed before its request was written: it finishes now, never sent. A
  // connection still being set up for it stays and serves the next call (see Dispatch).
  void ExpireUnsent(const std::shared_ptr<Call>& call);

  // Runs the call's callback once, with `sent` and `queued` filled in.
  void Finish(const std::shared_ptr<Call>& call, RestResponse response);

  void CancelCall(const std::shared_ptr<Call>& call);

  // --- watches (rest_client_watch.cpp) ---

  // Connects, sends the watch GET and streams its body into WatchData.
  void StartWatch(const std::shared_ptr<WatchCall>& watch);

  // Cuts the stream into events (lines or frames) for on_event; false ends the stream.
  static bool WatchData(WatchCall& watch, std::string_view data);

  // Closes the watch's connection and runs its `done` once.
  void FinishWatch(const std::shared_ptr<WatchCall>& watch);

  // Cancels every call and watch in flight (rest_client.cpp).
  void Shutdown();

  KubeConfig config_;
  RestClientOptions options_;
  ApiEndpoint endpoint_;
  std::unique_ptr<net::ssl::context> tls_;
  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  std::thread thread_;
  std::thread::id thread_id_;

  // Client-thread state.
  std::vector<std::shared_ptr<ApiConnection>> idle_;
  size_t open_ = 0;  // pool connections open or opening
  std::deque<std::shared_ptr<Call>> waiting_;
  std::set<std::shared_ptr<Call>> active_;
  std::set<std::shared_ptr<WatchCall>> watches_;
  bool shutting_down_ = false;

  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> stale_retries_{0};
};

}  // namespace capext::kube
