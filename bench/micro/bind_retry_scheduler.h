// BindRetryScheduler: kube-scheduler's /bind traffic as it behaves when binds are slow, for the
// slow-API-server test (tests/e2e/slow_binds_test.cpp) and benchmark (slow_bind_bench.cpp):
//   * every pod's first /bind starts at once (3,000 binds at once: a prequeued burst);
//   * each /bind is one HTTP exchange bounded by `http_timeout` (kube-scheduler's extender
//     httpTimeout); past it the connection is closed and the bind counts as timed out, whatever
//     the extender does later, as Go's http.Client does;
//   * a bind answered with an error or timed out is retried after kube-scheduler's backoff
//     (initial_backoff doubling per attempt up to max_backoff), unless the pod is bound by then
//     (kube-scheduler drops a pod its informer shows assigned: here a GET of the pod from the API
//     server); a retry may name another of the pod's nodes (a new scheduling cycle), chosen with a
//     seeded generator.
// All exchanges run on one thread (Boost.Asio); nothing blocks. Every attempt is recorded with its
// start, end and outcome on steady_clock, which the API-server double's request log and the
// extender's bind log lines share (CLOCK_MONOTONIC), so CheckBindRun (bind_run_check.h) can pair
// each Binding POST the double received with the /bind it served and the attempt that sent it,
// and check the invariants of docs/architecture.md#how-a-bind-travels.
// Thread-safety: Run from one thread at a time.
#pragma once

#include <rapidjson/document.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace capext::bench {

class BindRetryScheduler {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    uint16_t extender_port = 0;
    std::string extender_path = "/bind";
    uint16_t api_port = 0;  // the API server, for "is the pod bound?" before a retry
    std::string api_token;  // its bearer token ("" = none)
    std::chrono::milliseconds http_timeout{5000};
    std::chrono::milliseconds initial_backoff{1000};
    std::chrono::milliseconds max_backoff{10000};
    std::chrono::milliseconds give_up{120000};  // the run stops here, finished or not
    uint32_t seed = 1;
  };
  struct Pod {
    std::string ns, name, uid;
    std::vector<std::string> nodes;  // the first attempt names nodes[0]
  };
  enum class Outcome { kBound, kRefused, kTimedOut, kTransport };
  struct Attempt {
    std::size_t pod = 0;
    int number = 1;
    std::string node;
    Clock::time_point start, end;
    Outcome outcome = Outcome::kTransport;
    std::string error;  // the ExtenderBindingResult.Error, or why no answer came
    uint16_t port = 0;  // the local port of its connection (0: never connected)
  };
  struct PodState {
    bool done = false;        // an attempt succeeded, or the pod was seen bound
    bool seen_bound = false;  // done because the API server showed it bound before a retry
    int attempts = 0;
  };
  struct Result {
    std::vector<Attempt> attempts;
    std::vector<PodState> pods;
    double seconds = 0;
    bool finished = false;  // every pod done before give_up
  };

  explicit BindRetryScheduler(Options options) : options_(std::move(options)) {}

  Result Run(const std::vector<Pod>& pods) {
    pods_ = &pods;
    result_ = Result{};
    result_.pods.assign(pods.size(), PodState{});
    remaining_ = pods.size();
    rng_.seed(options_.seed);
    io_.restart();
    const Clock::time_point start = Clock::now();
    boost::asio::steady_timer give_up(io_, start + options_.give_up);
    give_up.async_wait([this](boost::system::error_code ec) {
      if (!ec) io_.stop();
    });
    for (std::size_t i = 0; i < pods.size(); ++i)
      StartAttempt(i);
    if (remaining_ > 0) io_.run();
    result_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result_.finished = remaining_ == 0;
    return std::move(result_);
  }

 private:
  using Tcp = boost::asio::ip::tcp;
  using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
  using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;
  // (status, body, error, timed out, local port): status 0 when no answer came; port 0 when
  // the connection was never made.
  using ExchangeDone = std::function<void(int, std::string, std::string, bool, uint16_t)>;

  // One HTTP/1.1 exchange on a connection of its own, the whole of it within `timeout`.
  struct Exchange : std::enable_shared_from_this<Exchange> {
    Exchange(boost::asio::io_context& io, HttpRequest req, ExchangeDone on_done)
        : stream(io), request(std::move(req)), done(std::move(on_done)) {}
    void Start(uint16_t port, std::chrono::milliseconds timeout) {
      stream.expires_after(timeout);
      auto self = shared_from_this();
      stream.async_connect(
          Tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port),
          [self](boost::system::error_code ec) {
            if (ec) return self->Finish(ec);
            boost::system::error_code port_ec;
            self->local_port = self->stream.socket().local_endpoint(port_ec).port();
            boost::beast::http::async_write(
                self->stream, self->request, [self](boost::system::error_code ec, std::size_t) {
                  if (ec) return self->Finish(ec);
                  boost::beast::http::async_read(
                      self->stream, self->buffer, self->response,
                      [self](boost::system::error_code ec, std::size_t) { self->Finish(ec); });
                });
          });
    }
    void Finish(boost::system::error_code ec) {
      boost::system::error_code ignored;
      stream.socket().shutdown(Tcp::socket::shutdown_both, ignored);
      stream.close();  // as Go's client does on a timeout: the server's answer goes nowhere
      if (ec) return done(0, "", ec.message(), ec == boost::beast::error::timeout, local_port);
      done(static_cast<int>(response.result_int()), std::move(response.body()), "", false,
           local_port);
    }
    boost::beast::tcp_stream stream;
    HttpRequest request;
    HttpResponse response;
    boost::beast::flat_buffer buffer;
    ExchangeDone done;
    uint16_t local_port = 0;
  };

  void Send(uint16_t port, const std::string& method, const std::string& target,
            const std::string& body, const std::string& token, ExchangeDone done) {
    HttpRequest request(
        method == "POST" ? boost::beast::http::verb::post : boost::beast::http::verb::get, target,
        11);
    request.set(boost::beast::http::field::host, fmt::format("127.0.0.1:{}", port));
    request.set(boost::beast::http::field::connection, "close");
    if (!token.empty()) request.set(boost::beast::http::field::authorization, "Bearer " + token);
    if (method == "POST") {
      request.set(boost::beast::http::field::content_type, "application/json");
      request.body() = body;
    }
    request.prepare_payload();
    std::make_shared<Exchange>(io_, std::move(request), std::move(done))
        ->Start(port, options_.http_timeout);
  }

  void StartAttempt(std::size_t pod_index) {
    const Pod& pod = (*pods_)[pod_index];
    PodState& state = result_.pods[pod_index];
    ++state.attempts;
    const std::string& node =
        state.attempts == 1 ? pod.nodes.front() : pod.nodes[rng_() % pod.nodes.size()];
    const std::size_t index = result_.attempts.size();
    result_.attempts.push_back(
        Attempt{pod_index, state.attempts, node, Clock::now(), {}, Outcome::kTransport, ""});
    const std::string body =
        fmt::format(R"({{"PodName":"{}","PodNamespace":"{}","PodUID":"{}","Node":"{}"}})", pod.name,
                    pod.ns, pod.uid, node);
    Send(options_.extender_port, "POST", options_.extender_path, body, "",
         [this, index](int status, std::string answer, std::string error, bool timed_out,
                       uint16_t port) {
           result_.attempts[index].port = port;
           OnBindAnswer(index, status, answer, error, timed_out);
         });
  }

  void OnBindAnswer(std::size_t index, int status, const std::string& answer,
                    const std::string& error, bool timed_out) {
    Attempt& attempt = result_.attempts[index];
    attempt.end = Clock::now();
    if (status == 0) {
      attempt.outcome = timed_out ? Outcome::kTimedOut : Outcome::kTransport;
      attempt.error = error;
    } else {
      rapidjson::Document doc;
      doc.Parse(answer.c_str());
      const bool ok = status == 200 && doc.IsObject() && doc.HasMember("Error") &&
                      doc["Error"].IsString() && doc["Error"].GetStringLength() == 0;
      attempt.outcome = ok ? Outcome::kBound : Outcome::kRefused;
      if (!ok) {
        attempt.error =
            status == 200 && doc.IsObject() && doc.HasMember("Error") && doc["Error"].IsString()
                ? doc["Error"].GetString()
                : fmt::format("HTTP {}: {}", status, answer.substr(0, 200));
      }
    }
    const std::size_t pod_index = attempt.pod;
    if (attempt.outcome == Outcome::kBound) return PodDone(pod_index, false);
    const int failures = result_.pods[pod_index].attempts;
    auto backoff = options_.initial_backoff;
    for (int i = 1; i < failures && backoff < options_.max_backoff; ++i)
      backoff *= 2;
    backoff = std::min(backoff, options_.max_backoff);
    auto timer = std::make_shared<boost::asio::steady_timer>(io_, Clock::now() + backoff);
    timer->async_wait([this, timer, pod_index](boost::system::error_code ec) {
      if (!ec) RetryUnlessBound(pod_index);
    });
  }

  // kube-scheduler drops a pod its informer shows assigned; else it schedules it again.
  void RetryUnlessBound(std::size_t pod_index) {
    const Pod& pod = (*pods_)[pod_index];
    Send(options_.api_port, "GET", fmt::format("/api/v1/namespaces/{}/pods/{}", pod.ns, pod.name),
         "", options_.api_token,
         [this, pod_index](int status, std::string body, std::string, bool, uint16_t) {
           rapidjson::Document doc;
           doc.Parse(body.c_str());
           const bool bound = status == 200 && doc.IsObject() && doc.HasMember("spec") &&
                              doc["spec"].IsObject() && doc["spec"].HasMember("nodeName") &&
                              doc["spec"]["nodeName"].IsString() &&
                              doc["spec"]["nodeName"].GetStringLength() > 0;
           if (bound) return PodDone(pod_index, true);
           StartAttempt(pod_index);
         });
  }

  void PodDone(std::size_t pod_index, bool seen_bound) {
    PodState& state = result_.pods[pod_index];
    if (state.done) return;
    state.done = true;
    state.seen_bound = seen_bound;
    if (--remaining_ == 0) io_.stop();
  }

  Options options_;
  boost::asio::io_context io_;
  const std::vector<Pod>* pods_ = nullptr;
  Result result_;
  std::size_t remaining_ = 0;
  std::mt19937 rng_;
};

}  // namespace capext::bench
