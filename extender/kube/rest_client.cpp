#include "extender/kube/rest_client.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <deque>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "extender/kube/api_connection.h"
#include "extender/kube/kube_log.h"
#include "extender/kube/tls_client_context.h"

namespace capext::kube {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;

constexpr size_t kMaxWatchLine = 64u << 20;  // one event larger than this is a broken stream
constexpr size_t kMaxErrorBody = 64u << 10;  // kept of a non-200 watch response

}  // namespace

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
    LineCallback on_line;
    std::function<void(WatchResult)> done;
    std::function<void(int)> on_status;
    std::shared_ptr<ApiConnection> connection;
    WatchResult result;
    std::string pending;  // bytes after the last '\n'
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
    thread_ = std::thread([this] { io_.run(); });
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
                                std::string content_type, ResponseCallback done) {
    auto call = std::make_shared<Call>();
    call->impl = this;
    call->method = std::move(method);
    call->path = std::move(path);
    call->body = std::move(body);
    call->content_type = std::move(content_type);
    call->done = std::move(done);
    return call;
  }

  std::shared_ptr<ApiRequest> BuildRequest(const std::string& method, const std::string& path,
                                           const std::string& body, const std::string& content_type,
                                           const std::string& token) const {
    auto request = std::make_shared<ApiRequest>(beast_http::string_to_verb(method),
                                                endpoint_.base_path + path, 11);
    if (request->method() == beast_http::verb::unknown) request->method_string(method);
    request->set(beast_http::field::host, endpoint_.host_header);
    request->set(beast_http::field::user_agent, options_.user_agent);
    request->set(beast_http::field::accept, "application/json");
    if (!token.empty()) request->set(beast_http::field::authorization, "Bearer " + token);
    if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
      request->set(beast_http::field::content_type, content_type);
      request->body() = body;
    }
    request->keep_alive(true);
    request->prepare_payload();
    return request;
  }

  std::string CurrentToken() { return config_.token ? config_.token->Current() : ""; }

  std::shared_ptr<ApiConnection> NewConnection() {
    ++connections_;
    return std::make_shared<ApiConnection>(io_, endpoint_, tls_.get(),
                                           !config_.insecure_skip_tls_verify);
  }

  // --- ordinary requests; everything below runs on the client thread ---

  void Dispatch(const std::shared_ptr<Call>& call) {
    if (call->finished) return;
    if (shutting_down_ || call->cancelled) return Finish(call, {0, "", "cancelled"});
    if (!idle_.empty()) {
      auto connection = std::move(idle_.back());
      idle_.pop_back();
      return Run(call, connection, true);
    }
    if (open_ < options_.max_connections) {
      ++open_;
      auto connection = NewConnection();
      call->connection = connection;
      connection->Connect(
          call->timeout, [this, call, connection](beast::error_code ec, const char* stage) {
            if (call->finished) {  // its send_by passed meanwhile: the connection serves others
              if (!ec && !shutting_down_ && connection->is_open()) {
                idle_.push_back(connection);
              } else {
                connection->Close();
                --open_;
              }
              return Pump();
            }
            if (ec || call->cancelled) {
              connection->Close();
              --open_;
              Finish(call, {0, "",
                            call->cancelled ? "cancelled"
                                            : call->method + " " + call->path + ": " + stage + " " +
                                                  endpoint_.host_header + ": " +
                                                  DescribeError(ec, call->timeout)});
              return Pump();
            }
            Run(call, connection, false);
          });
      return;
    }
    if (waiting_.size() >= options_.max_queued) {
      return Finish(call,
                    {0, "",
                     call->method + " " + call->path + ": " + std::to_string(waiting_.size()) +
                         " requests already wait for a connection"});
    }
    waiting_.push_back(call);
  }

  void Run(const std::shared_ptr<Call>& call, const std::shared_ptr<ApiConnection>& connection,
           bool reused) {
    if (call->send_by && Clock::now() >= *call->send_by) {
      // Never written after its deadline. The connection is healthy: back to the pool, where
      // the caller's loop (Pump) or the next Dispatch takes it.
      call->connection.reset();
      idle_.push_back(connection);
      ExpireUnsent(call);
      net::post(io_, [this] { Pump(); });  // not inline: Run may be inside Pump's loop
      return;
    }
    call->send_timer.reset();  // cancels it
    call->written = true;
    call->queued =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - call->created);
    if (call->on_written) call->on_written();
    call->connection = connection;
    call->token = CurrentToken();
    auto request =
        BuildRequest(call->method, call->path, call->body, call->content_type, call->token);
    connection->Exchange(
        std::move(request), call->timeout,
        [this, call, connection, reused](beast::error_code ec, ApiResponse&& response,
                                         bool got_some) {
          call->connection.reset();
          if (call->cancelled || shutting_down_) {
            connection->Close();
            --open_;
            Finish(call, {0, "", "cancelled"});
            return Pump();
          }
          if (ec) {
            connection->Close();
            --open_;
            if (reused && !got_some && IsStaleConnection(ec) && !call->retried_stale) {
              call->retried_stale = true;
              ++stale_retries_;
              for (auto& idle : idle_) {  // the server closed them all, most likely (restart)
                idle->Close();
                --open_;
              }
              idle_.clear();
              Redispatch(call);  // the closed connection never delivered it
            } else {
              Finish(call,
                     {0, "",
                      call->method + " " + call->path + ": " + DescribeError(ec, call->timeout)});
            }
            return Pump();
          }
          if (response.keep_alive() && connection->is_open()) {
            idle_.push_back(connection);
          } else {
            connection->Close();
            --open_;
          }
          const int status = static_cast<int>(response.result_int());
          if (status == 401 && config_.token && config_.token->from_file() &&
              !call->retried_unauthorized && config_.token->ForceReload() &&
              CurrentToken() != call->token) {
            call->retried_unauthorized = true;
            Redispatch(call);  // refused unauthenticated: not acted on
          } else {
            const int retry_after = RetryAfterSeconds(response);
            Finish(call, {status, std::move(response.body()), "", retry_after});
          }
          Pump();
        });
  }

  void Pump() {
    while (!waiting_.empty() && !shutting_down_ &&
           (!idle_.empty() || open_ < options_.max_connections)) {
      auto call = std::move(waiting_.front());
      waiting_.pop_front();
      Dispatch(call);
    }
  }

  // Sends a call again whose written request was not acted on: its deadline applies again.
  void Redispatch(const std::shared_ptr<Call>& call) {
    call->written = false;
    ArmSendDeadline(call);
    Dispatch(call);
  }

  // Arms the call's send_by timer (calls without one never expire unsent).
  void ArmSendDeadline(const std::shared_ptr<Call>& call) {
    if (!call->send_by) return;
    call->send_timer = std::make_unique<net::steady_timer>(io_, *call->send_by);
    call->send_timer->async_wait([this, call](beast::error_code ec) {
      if (ec || call->finished || call->written) return;
      ExpireUnsent(call);
    });
  }

  // The call's send_by passed before its request was written: it finishes now, never sent. A
  // connection still being set up for it stays and serves the next call (see Dispatch).
  void ExpireUnsent(const std::shared_ptr<Call>& call) {
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
      if (*it == call) {
        waiting_.erase(it);
        break;
      }
    }
    RestResponse response{
        0, "",
        call->method + " " + call->path + ": not sent: its deadline passed after " +
            std::to_string(
                std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - call->created)
                    .count()) +
            " ms waiting for a connection"};
    response.send_deadline_passed = true;
    Finish(call, std::move(response));
  }

  void Finish(const std::shared_ptr<Call>& call, RestResponse response) {
    if (call->finished) return;
    call->finished = true;
    call->send_timer.reset();  // cancels it; no timer outlives its call's end
    response.sent = call->written;
    response.queued =
        call->written
            ? call->queued
            : std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - call->created);
    ++requests_;
    active_.erase(call);
    auto done = std::move(call->done);
    done(std::move(response));
  }

  void CancelCall(const std::shared_ptr<Call>& call) {
    if (call->finished) return;
    call->cancelled = true;
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
      if (*it == call) {
        waiting_.erase(it);
        return Finish(call, {0, "", "cancelled"});
      }
    }
    if (call->connection) call->connection->Close();  // its handler finishes the call
  }

  // --- watches ---

  void StartWatch(const std::shared_ptr<WatchCall>& watch) {
    watches_.insert(watch);
    if (shutting_down_ || watch->cancelled) return FinishWatch(watch);
    watch->connection = NewConnection();
    watch->connection->Connect(options_.request_timeout, [this, watch](beast::error_code ec,
                                                                       const char* stage) {
      if (watch->cancelled || shutting_down_) return FinishWatch(watch);
      if (ec) {
        watch->result.error = "watch " + watch->path + ": " + stage + " " + endpoint_.host_header +
                              ": " + DescribeError(ec, options_.request_timeout);
        return FinishWatch(watch);
      }
      std::string token = CurrentToken();
      watch->connection->Stream(
          BuildRequest("GET", watch->path, "", "", token), options_.request_timeout,
          watch->inactivity,
          [watch](int status, int retry_after) {
            watch->result.status = status;
            watch->result.retry_after_seconds = retry_after;
            if (watch->on_status && !watch->cancelled) watch->on_status(status);
          },
          [watch](std::string_view data) { return WatchData(*watch, data); },
          [this, watch, token](beast::error_code ec, bool complete) {
            if (!watch->cancelled && !watch->result.stopped && watch->result.error.empty()) {
              if (complete) {
                watch->result.completed = watch->result.status == 200;
              } else if (ec) {
                // After the header, the only deadline is the inactivity one.
                watch->result.idle_timeout =
                    ec == beast::error::timeout && watch->result.status != 0;
                watch->result.error = "watch " + watch->path + ": " +
                                      (watch->result.idle_timeout
                                           ? "nothing received for " +
                                                 std::to_string(watch->inactivity.count()) + " ms"
                                           : DescribeError(ec, watch->inactivity));
              }
            }
            if (watch->result.status == 401 && config_.token) config_.token->ForceReload();
            FinishWatch(watch);
          });
    });
  }

  static bool WatchData(WatchCall& watch, std::string_view data) {
    if (watch.cancelled) return false;
    if (watch.result.status != 200) {
      if (watch.result.body.size() < kMaxErrorBody) watch.result.body.append(data);
      return true;
    }
    std::string& pending = watch.pending;
    pending.append(data);
    size_t start = 0;
    for (size_t newline; (newline = pending.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      if (newline == start) continue;
      ++watch.result.lines;
      if (!watch.on_line(std::string_view(pending).substr(start, newline - start))) {
        watch.result.stopped = true;
        return false;
      }
      if (watch.cancelled) return false;
    }
    pending.erase(0, start);
    if (pending.size() > kMaxWatchLine) {
      watch.result.error = "watch event larger than " + std::to_string(kMaxWatchLine) + " bytes";
      return false;
    }
    return true;
  }

  void FinishWatch(const std::shared_ptr<WatchCall>& watch) {
    if (watch->finished) return;
    watch->finished = true;
    watches_.erase(watch);
    if (watch->connection) watch->connection->Close();
    watch->connection.reset();
    if (watch->cancelled) watch->result.stopped = true;
    auto done = std::move(watch->done);
    watch->on_line = nullptr;
    watch->on_status = nullptr;
    done(std::move(watch->result));
  }

  void Shutdown() {
    shutting_down_ = true;
    auto waiting = std::move(waiting_);
    for (auto& call : waiting)
      Finish(call, {0, "", "cancelled"});
    for (auto& call : std::set<std::shared_ptr<Call>>(active_)) {
      call->cancelled = true;
      if (call->connection) call->connection->Close();
    }
    for (auto& watch : std::set<std::shared_ptr<WatchCall>>(watches_)) {
      watch->cancelled = true;
      if (watch->connection) watch->connection->Close();
    }
    for (auto& connection : idle_)
      connection->Close();
    idle_.clear();
  }

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

RestClient::RestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestClient::~RestClient() = default;

Status RestClient::Create(const KubeConfig& config, const RestClientOptions& options,
                          std::unique_ptr<RestClient>* out) {
  if (config.server.empty()) return Status::Error("API server URL is empty");
  ApiEndpoint endpoint;
  std::string error;
  if (!ParseApiEndpoint(config.server, &endpoint, &error)) return Status::Error(error);
  std::unique_ptr<net::ssl::context> tls;
  if (endpoint.tls) {
    try {
      tls = MakeTlsContext(config);
    } catch (const std::exception& e) {
      return Status::Error(std::string("TLS configuration for ") + config.server + " (" +
                           config.origin + "): " + e.what());
    }
  }
  out->reset(
      new RestClient(std::make_unique<Impl>(config, options, std::move(endpoint), std::move(tls))));
  return Status::Ok();
}

const std::string& RestClient::server() const {
  return impl_->config_.server;
}

boost::asio::io_context& RestClient::io_context() {
  return impl_->io_;
}

void RestClient::RunOnClientThread(std::function<void()> work) {
  net::post(impl_->io_, std::move(work));
}

bool RestClient::OnClientThread() const {
  return impl_->OnClientThread();
}

RestClientStats RestClient::Stats() const {
  return {impl_->requests_.load(), impl_->connections_.load(), impl_->stale_retries_.load()};
}

std::shared_ptr<CallHandle> RestClient::SendAsync(std::string method, std::string path,
                                                  std::string body, std::string content_type,
                                                  ResponseCallback done,
                                                  std::chrono::milliseconds timeout) {
  CallOptions options;
  options.timeout = timeout;
  return SendAsync(std::move(method), std::move(path), std::move(body), std::move(content_type),
                   std::move(done), std::move(options));
}

std::shared_ptr<CallHandle> RestClient::SendAsync(std::string method, std::string path,
                                                  std::string body, std::string content_type,
                                                  ResponseCallback done, CallOptions options) {
  auto call = impl_->NewCall(std::move(method), std::move(path), std::move(body),
                             std::move(content_type), std::move(done));
  call->timeout = options.timeout.count() > 0 ? options.timeout : impl_->options_.request_timeout;
  call->send_by = options.send_by;
  call->on_written = std::move(options.on_written);
  net::post(impl_->io_, [impl = impl_.get(), call] {
    impl->active_.insert(call);
    impl->ArmSendDeadline(call);
    impl->Dispatch(call);
  });
  return call;
}

std::shared_ptr<CallHandle> RestClient::WatchAsync(std::string path,
                                                   std::chrono::milliseconds inactivity_timeout,
                                                   LineCallback on_line,
                                                   std::function<void(WatchResult)> done,
                                                   std::function<void(int)> on_status) {
  auto watch = std::make_shared<Impl::WatchCall>();
  watch->impl = impl_.get();
  watch->path = std::move(path);
  watch->inactivity = inactivity_timeout;
  watch->on_line = std::move(on_line);
  watch->done = std::move(done);
  watch->on_status = std::move(on_status);
  net::post(impl_->io_, [impl = impl_.get(), watch] { impl->StartWatch(watch); });
  return watch;
}

}  // namespace capext::kube
