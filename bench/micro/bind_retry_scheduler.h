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
// extender's bind log lines share (CLOCK_MONOTONIC), so CheckBindRun can pair each Binding POST
// the double received with the /bind it served and the attempt that sent it, and check the
// invariants of docs/architecture.md#how-a-bind-travels.
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

// A Binding POST as the API server received it (the double's request log).
struct BindingPost {
  std::string ns, name, node;
  int status = 0;
  BindRetryScheduler::Clock::time_point arrived, answered;
};

// Reads the Binding POSTs out of the double's GET /_double/requests answer; false when the body
// is not a request log. Its times are CLOCK_MONOTONIC seconds, steady_clock's clock on Linux.
inline bool ParseBindingPosts(const std::string& log, std::vector<BindingPost>* out) {
  rapidjson::Document doc;
  doc.Parse(log.c_str());
  if (!doc.IsObject() || !doc.HasMember("requests") || !doc["requests"].IsArray()) return false;
  const auto at = [](double seconds) {
    return BindRetryScheduler::Clock::time_point(
        std::chrono::duration_cast<BindRetryScheduler::Clock::duration>(
            std::chrono::duration<double>(seconds)));
  };
  for (const auto& entry : doc["requests"].GetArray()) {
    const std::string path = entry["path"].GetString();
    if (std::string(entry["method"].GetString()) != "POST" || !path.ends_with("/binding")) continue;
    // /api/v1/namespaces/{ns}/pods/{name}/binding
    const std::size_t ns_at = path.find("/namespaces/") + 12;
    const std::size_t pods_at = path.find("/pods/", ns_at);
    BindingPost post;
    post.ns = path.substr(ns_at, pods_at - ns_at);
    post.name = path.substr(pods_at + 6, path.size() - 8 - (pods_at + 6));
    post.status = entry["status"].GetInt();
    post.arrived = at(entry["arrived"].GetDouble());
    post.answered = at(entry["answered"].GetDouble());
    rapidjson::Document binding;
    binding.Parse(entry["body"].GetString());
    if (binding.IsObject() && binding.HasMember("target") && binding["target"].IsObject())
      post.node = binding["target"]["name"].GetString();
    out->push_back(std::move(post));
  }
  return true;
}

// A Binding the extender made, as its log line at the Binding's end tells (msg=bind, outcome
// bound, bind-failed or unanswered: the outcomes of a Binding that was sent), with the deadline of
// the /bind it served (deadline_monotonic_ms: steady_clock) and that /bind's caller (client=
// ip:port). Needs --log-level debug.
struct BindOwner {
  std::string pod;  // ns/name
  std::string node, outcome;
  BindRetryScheduler::Clock::time_point deadline;
  uint16_t client_port = 0;  // 0: the line names no caller
};

// The value of `key` in a logfmt line ("" when absent); values may be quoted.
inline std::string LogfmtValue(const std::string& line, const std::string& key) {
  const std::string needle = " " + key + "=";
  const std::size_t at = line.find(needle);
  if (at == std::string::npos) return "";
  std::size_t start = at + needle.size();
  if (start < line.size() && line[start] == '"') {
    const std::size_t end = line.find('"', start + 1);
    return line.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
  }
  return line.substr(start, line.find(' ', start) - start);
}

inline std::vector<BindOwner> ParseBindOwners(const std::string& extender_log) {
  std::vector<BindOwner> out;
  std::size_t start = 0;
  while (start < extender_log.size()) {
    std::size_t end = extender_log.find('\n', start);
    if (end == std::string::npos) end = extender_log.size();
    const std::string line = extender_log.substr(start, end - start);
    start = end + 1;
    if (LogfmtValue(line, "msg") != "bind") continue;
    const std::string deadline = LogfmtValue(line, "deadline_monotonic_ms");
    const std::string outcome = LogfmtValue(line, "outcome");
    if (deadline.empty() ||
        (outcome != "bound" && outcome != "bind-failed" && outcome != "unanswered")) {
      continue;
    }
    const std::string client = LogfmtValue(line, "client");
    const std::size_t colon = client.rfind(':');
    const uint16_t port = colon == std::string::npos
                              ? 0
                              : static_cast<uint16_t>(std::stoul("0" + client.substr(colon + 1)));
    out.push_back({LogfmtValue(line, "pod"), LogfmtValue(line, "node"), outcome,
                   BindRetryScheduler::Clock::time_point(
                       std::chrono::duration_cast<BindRetryScheduler::Clock::duration>(
                           std::chrono::duration<double, std::milli>(std::stod(deadline)))),
                   port});
  }
  return out;
}

// The invariants of a run (docs/architecture.md#how-a-bind-travels). Each Binding POST the API
// server received is paired with the extender's record of the /bind it served (the pod's POSTs
// and its sent Bindings, both in order: a pod never has two Bindings in the air), and that /bind
// with the scheduler's attempt: the one whose connection's port the record names as its caller;
// for a record without one, the pod's latest attempt started before the /bind's arrival
// (deadline - bind_deadline), which misattributes a request the extender read only after the
// next attempt began. Without records (`owners` empty: an extender that logs none), each
// POST is paired with the latest attempt started before it arrived, and its deadline counted
// from that attempt's start: a stricter base, since the extender read the request later.
struct BindRunCheck {
  std::size_t posts = 0, created = 0;
  std::vector<std::string> sent_late;          // arrived past its /bind's deadline + transit
  std::vector<std::string> unattributed;       // no /bind (or no attempt) to pair it with
  std::vector<std::string> bound_twice;        // pods with more than one Binding created
  std::vector<std::string> extra_posts;        // Bindings refused by the API server (409...)
  std::vector<std::string> never_bound;        // pods with no Binding created
  std::vector<std::string> bound_after_error;  // created for an attempt answered with an error
  std::vector<std::string> wrong_node;         // an attempt answered success for another node
  std::size_t created_after_timeout = 0;       // the remaining window: its attempt timed out
  double max_send_wait_ms = 0;                 // POST arrival - its attempt's start
  double max_past_deadline_ms = -1e9;          // POST arrival - its /bind's deadline
  std::vector<double> send_wait_ms;
  bool ok() const {
    return sent_late.empty() && unattributed.empty() && bound_twice.empty() &&
           extra_posts.empty() && never_bound.empty() && bound_after_error.empty() &&
           wrong_node.empty();
  }
  std::string Describe() const {
    std::string out = fmt::format(
        "{} Binding POSTs, {} created; sent late {}, unattributed {}, bound twice {}, refused by "
        "the API server {}, never bound {}, bound after an error answer {}, answered for the "
        "wrong node {}; created after kube-scheduler timed out {}; max wait before sending "
        "{:.0f} ms; latest arrival relative to the deadline {:+.0f} ms",
        posts, created, sent_late.size(), unattributed.size(), bound_twice.size(),
        extra_posts.size(), never_bound.size(), bound_after_error.size(), wrong_node.size(),
        created_after_timeout, max_send_wait_ms, max_past_deadline_ms);
    for (const auto* list : {&sent_late, &unattributed, &bound_twice, &extra_posts, &never_bound,
                             &bound_after_error, &wrong_node}) {
      for (std::size_t i = 0; i < list->size() && i < 5; ++i)
        out += "\n  " + (*list)[i];
    }
    return out;
  }
};

// `transit`: the most a Binding written at its deadline may take to reach the API server's log.
inline BindRunCheck CheckBindRun(const std::vector<BindRetryScheduler::Pod>& pods,
                                 const BindRetryScheduler::Result& run,
                                 const std::vector<BindingPost>& posts,
                                 const std::vector<BindOwner>& owners,
                                 std::chrono::milliseconds bind_deadline,
                                 std::chrono::milliseconds transit) {
  using Clock = BindRetryScheduler::Clock;
  BindRunCheck check;
  std::map<std::string, std::size_t> pod_of;  // "ns/name" -> index
  for (std::size_t i = 0; i < pods.size(); ++i)
    pod_of[pods[i].ns + "/" + pods[i].name] = i;
  std::vector<std::vector<const BindRetryScheduler::Attempt*>> attempts(pods.size());
  for (const auto& a : run.attempts)
    attempts[a.pod].push_back(&a);  // in start order per pod
  std::vector<std::vector<const BindingPost*>> posts_of(pods.size());
  for (const auto& post : posts) {
    auto known = pod_of.find(post.ns + "/" + post.name);
    if (known != pod_of.end()) posts_of[known->second].push_back(&post);
  }
  std::vector<std::vector<const BindOwner*>> owners_of(pods.size());
  for (const auto& owner : owners) {
    auto known = pod_of.find(owner.pod);
    if (known != pod_of.end()) owners_of[known->second].push_back(&owner);
  }
  const auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  for (std::size_t pod = 0; pod < pods.size(); ++pod) {
    const std::string key = pods[pod].ns + "/" + pods[pod].name;
    auto& mine = posts_of[pod];
    std::sort(mine.begin(), mine.end(),
              [](const auto* a, const auto* b) { return a->arrived < b->arrived; });
    auto& theirs = owners_of[pod];
    std::sort(theirs.begin(), theirs.end(),
              [](const auto* a, const auto* b) { return a->deadline < b->deadline; });
    std::vector<BindOwner> pseudo;
    if (owners.empty()) {  // pseudo-records from the scheduler's attempts
      pseudo.reserve(mine.size());
      for (const auto* post : mine) {
        const BindRetryScheduler::Attempt* before = nullptr;
        for (const auto* a : attempts[pod]) {
          if (a->start <= post->arrived) before = a;
        }
        pseudo.push_back(
            {key, post->node, "", (before ? before->start : post->arrived) + bind_deadline});
      }
      theirs.clear();
      for (const auto& o : pseudo)
        theirs.push_back(&o);
    }
    if (mine.size() != theirs.size()) {
      check.unattributed.push_back(fmt::format("{}: {} Binding POSTs, {} sent Bindings logged", key,
                                               mine.size(), theirs.size()));
    }
    int created = 0;
    std::string bound_node;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const BindingPost& post = *mine[i];
      ++check.posts;
      if (post.status == 201) {
        ++check.created;
        ++created;
        bound_node = post.node;
      } else {
        check.extra_posts.push_back(fmt::format("{}: HTTP {}", key, post.status));
      }
      if (i >= theirs.size()) continue;
      const BindOwner& owner = *theirs[i];
      const double past = ms(post.arrived - owner.deadline);
      check.max_past_deadline_ms = std::max(check.max_past_deadline_ms, past);
      if (post.arrived > owner.deadline + transit) {
        check.sent_late.push_back(fmt::format(
            "{}: Binding reached the API server {:.0f} ms after its bind's deadline", key, past));
      }
      const Clock::time_point received = owner.deadline - bind_deadline;
      const BindRetryScheduler::Attempt* served = nullptr;
      for (const auto* a : attempts[pod]) {
        const bool from_it =
            owner.client_port != 0 ? a->port == owner.client_port : a->start <= received;
        if (from_it && a->start <= received) served = a;
      }
      if (served == nullptr) {
        check.unattributed.push_back(
            owner.client_port != 0
                ? fmt::format("{}: no attempt from port {} started before its bind arrived", key,
                              owner.client_port)
                : key + ": no attempt started before its bind arrived");
        continue;
      }
      const double wait = ms(post.arrived - served->start);
      check.send_wait_ms.push_back(wait);
      check.max_send_wait_ms = std::max(check.max_send_wait_ms, wait);
      if (post.status != 201) continue;
      if (served->outcome == BindRetryScheduler::Outcome::kRefused) {
        check.bound_after_error.push_back(
            fmt::format("{} (attempt {}): bound to {} although answered \"{}\"", key,
                        served->number, post.node, served->error));
      } else if (served->outcome == BindRetryScheduler::Outcome::kTimedOut) {
        ++check.created_after_timeout;
      }
    }
    if (created == 0) check.never_bound.push_back(key);
    if (created > 1) check.bound_twice.push_back(fmt::format("{}: {}", key, created));
    for (const auto* a : attempts[pod]) {
      if (a->outcome == BindRetryScheduler::Outcome::kBound && created > 0 &&
          a->node != bound_node) {
        check.wrong_node.push_back(
            fmt::format("{} (attempt {}): answered success for {}, bound to {}", key, a->number,
                        a->node, bound_node));
      }
    }
  }
  return check;
}

}  // namespace capext::bench
