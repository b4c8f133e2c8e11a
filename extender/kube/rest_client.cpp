#include "extender/kube/rest_client.h"

#include <boost/asio/ssl/error.hpp>

#include "extender/kube/kube_log.h"
#include "extender/kube/rest_client_impl.h"
#include "extender/kube/tls_client_context.h"

namespace capext::kube {

std::shared_ptr<RestClient::Impl::Call> RestClient::Impl::NewCall(std::string method,
                                                                  std::string path,
                                                                  std::string body,
                                                                  std::string content_type,
                                                                  ResponseCallback done) {
  auto call = std::make_shared<Call>();
  call->impl = this;
  call->method = std::move(method);
  call->path = std::move(path);
  call->body = std::move(body);
  call->content_type = std::move(content_type);
  call->done = std::move(done);
  return call;
}

std::shared_ptr<ApiRequest> RestClient::Impl::BuildRequest(const std::string& method,
                                                           const std::string& path,
                                                           const std::string& body,
                                                           const std::string& content_type,
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

std::shared_ptr<ApiConnection> RestClient::Impl::NewConnection() {
  ++connections_;
  return std::make_shared<ApiConnection>(io_, endpoint_, tls_.get(),
                                         !config_.insecure_skip_tls_verify);
}

void RestClient::Impl::Dispatch(const std::shared_ptr<Call>& call) {
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
    return Finish(call, {0, "",
                         call->method + " " + call->path + ": " + std::to_string(waiting_.size()) +
                             " requests already wait for a connection"});
  }
  waiting_.push_back(call);
}

void RestClient::Impl::Run(const std::shared_ptr<Call>& call,
                           const std::shared_ptr<ApiConnection>& connection, bool reused) {
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
            Finish(
                call,
                {0, "", call->method + " " + call->path + ": " + DescribeError(ec, call->timeout)});
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

void RestClient::Impl::Pump() {
  while (!waiting_.empty() && !shutting_down_ &&
         (!idle_.empty() || open_ < options_.max_connections)) {
    auto call = std::move(waiting_.front());
    waiting_.pop_front();
    Dispatch(call);
  }
}

// Sends a call again whose written request was not acted on: its deadline applies again.
void RestClient::Impl::Redispatch(const std::shared_ptr<Call>& call) {
  call->written = false;
  Dispatch(call);
  ArmSendDeadline(call);
}

// Arms the call's send_by timer (calls without one never expire unsent). Only a call that waits
// after Dispatch needs it: one an idle connection took is written already, and a timer armed for
// it would cost a timerfd_settime (it is the earliest) and its cancellation on every bind.
void RestClient::Impl::ArmSendDeadline(const std::shared_ptr<Call>& call) {
  if (!call->send_by || call->written || call->finished) return;
  call->send_timer = std::make_unique<net::steady_timer>(io_, *call->send_by);
  call->send_timer->async_wait([this, call](beast::error_code ec) {
    if (ec || call->finished || call->written) return;
    ExpireUnsent(call);
  });
}

// The call's send_by passed before its request was written: it finishes now, never sent. A
// connection still being set up for it stays and serves the next call (see Dispatch).
void RestClient::Impl::ExpireUnsent(const std::shared_ptr<Call>& call) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (*it == call) {
      waiting_.erase(it);
      break;
    }
  }
  RestResponse response{0, "",
                        call->method + " " + call->path + ": not sent: its deadline passed after " +
                            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               Clock::now() - call->created)
                                               .count()) +
                            " ms waiting for a connection"};
  response.send_deadline_passed = true;
  Finish(call, std::move(response));
}

void RestClient::Impl::Finish(const std::shared_ptr<Call>& call, RestResponse response) {
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

void RestClient::Impl::CancelCall(const std::shared_ptr<Call>& call) {
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

void RestClient::Impl::Shutdown() {
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

RestClient::RestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestClient::~RestClient() = default;

Status RestClient::Create(const KubeConfig& config, const RestClientOptions& options,
                          std::unique_ptr<RestClient>* out) {
  if (config.server.empty()) return Status::Error("API server URL is empty");
  StatusOr<ApiEndpoint> parsed = ParseApiEndpoint(config.server);
  if (!parsed.ok()) return parsed.status();
  ApiEndpoint endpoint = std::move(parsed).value();
  std::unique_ptr<net::ssl::context> tls;
  if (endpoint.tls) {
    StatusOr<std::unique_ptr<net::ssl::context>> made = MakeTlsContext(config);
    if (!made.ok()) {
      return made.status().WithContext(std::string("TLS configuration for ") + config.server +
                                       " (" + config.origin + ")");
    }
    tls = std::move(made).value();
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
    impl->Dispatch(call);
    impl->ArmSendDeadline(call);
  });
  return call;
}

}  // namespace capext::kube
