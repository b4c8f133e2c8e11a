// Concurrency tests of /bind
// (docs/capacity-semantics.md#6-accounting-used-reservations-nominations): many threads bind pods
// of one quota at once, in process and over HTTP. No interleaving may push the quota over max, a
// failed binding must release its reservation, binding a pod twice is idempotent, and with a
// live-like binder the reservations hold until the watch confirms them or their TTL expires. Run
// under ThreadSanitizer by test.sh (tag [concurrency]).
#include <rapidjson/document.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "core/quantity.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/http/server.h"
#include "extender/log.h"
#include "extender/routes.h"
#include "extender/verbs/extender_service.h"
#include "tests/support/builders.h"
#include "tests/support/http_client.h"

namespace capext {
namespace bind_storm_test {
namespace {

using testing::CpuList;
using testing::kGi;
using testing::MakeNode;
using testing::MakeQuota;

constexpr int kPods = 1000;
constexpr int kThreads = 64;
constexpr int64_t kRequestMilli = 100;
constexpr int64_t kMaxMilli = 100 * kRequestMilli;  // exactly 100 pods fit the quota's max
constexpr int kNodes = 10;
constexpr int64_t kStartMs = 1'800'000'000'000;
const char* const kNs = "storm";

std::string PodName(int i) {
  return fmt::format("p{:04}", i);
}
std::string PodUid(int i) {
  return fmt::format("uid-storm-{:04}", i);
}
std::string NodeName(int i) {
  return fmt::format("node-{:02}", i % kNodes);
}

// A pending pod as kube-scheduler sends it in /filter (trimmed).
std::string FilterBody(int i) {
  std::string names;
  for (int n = 0; n < kNodes; ++n)
    names += fmt::format("{}\"{}\"", n == 0 ? "" : ",", NodeName(n));
  return fmt::format(
      R"({{"Pod":{{"metadata":{{"name":"{}","namespace":"{}","uid":"{}",)"
      R"("creationTimestamp":"2027-01-01T00:00:00Z"}},"spec":{{"containers":[{{"name":"c",)"
      R"("image":"registry.k8s.io/pause:3.9","resources":{{"requests":{{"cpu":"{}m",)"
      R"("memory":"64Mi"}}}}}}],"priority":0}},"status":{{"phase":"Pending"}}}},)"
      R"("Nodes":null,"NodeNames":[{}]}})",
      PodName(i), kNs, PodUid(i), kRequestMilli, names);
}

std::string BindBody(int i) {
  return fmt::format(R"({{"PodName":"{}","PodNamespace":"{}","PodUID":"{}","Node":"{}"}})",
                     PodName(i), kNs, PodUid(i), NodeName(i));
}

// The "Error" member of a bind answer; "<status N>" when the answer is not a 200 JSON object.
std::string BindError(const http::Response& response) {
  if (response.status != 200) return fmt::format("<status {}>", response.status);
  rapidjson::Document doc;
  doc.Parse(response.body.c_str());
  if (!doc.IsObject() || !doc.HasMember("Error") || !doc["Error"].IsString()) return "<bad body>";
  return doc["Error"].GetString();
}

// Fails every `every`-th call (deterministic), otherwise delegates.
class FlakyBinder final : public PodBinder {
 public:
  FlakyBinder(PodBinder* inner, int every) : inner_(inner), every_(every) {}
  void Bind(const BindRequest& request, BindDone done) override {
    if (++calls_ % every_ == 0) {
      ++failures;
      return done(BindOutcome{false, 500, "injected failure", false});
    }
    inner_->Bind(request, std::move(done));
  }
  std::atomic<int> failures{0};

 private:
  PodBinder* inner_;
  int every_;
  std::atomic<int> calls_{0};
};

// Runs bind completions on threads of its own, joined before the test ends.
class WorkThreads {
 public:
  ~WorkThreads() { JoinAll(); }
  void Run(std::function<void()> work) {
    std::lock_guard lock(mutex_);
    threads_.emplace_back(std::move(work));
  }
  void JoinAll() {
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mutex_);
      threads.swap(threads_);
    }
    for (auto& t : threads)
      t.join();
  }

 private:
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

// Like the API-server path: completes later on another thread, answers ok, but the binding only
// becomes visible when the watch confirms it.
class LiveLikeBinder final : public PodBinder {
 public:
  void Bind(const BindRequest& /*request*/, BindDone done) override {
    work.Run([this, done = std::move(done)] {
      std::this_thread::yield();
      ++calls;
      done(BindOutcome{true, 201, "", false});
    });
  }
  std::atomic<int> calls{0};
  WorkThreads work;
};

struct QuotaNumbers {
  int64_t used = -1;
  int64_t reserved = -1;
  int64_t max = -1;
};

int64_t CpuMilli(const rapidjson::Value& list) {
  if (!list.IsObject() || !list.HasMember("cpu")) return -1;
  const StatusOr<Quantity> q = Quantity::Parse(list["cpu"].GetString());
  if (!q.ok()) return -1;
  return DecisionAmount("cpu", *q);
}

// The storm quota's numbers from a /quotas answer body.
QuotaNumbers ParseQuotas(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  QuotaNumbers out;
  if (!doc.IsObject() || !doc.HasMember("quotas")) return out;
  for (const auto& q : doc["quotas"].GetArray()) {
    if (std::string(q["namespace"].GetString()) != kNs) continue;
    out.used = CpuMilli(q["used"]);
    out.reserved = CpuMilli(q["reserved"]);
    out.max = CpuMilli(q["max"]);
  }
  return out;
}

// One quota {min 1000 cpu (the aggregated check never limits), max 100 pods' worth}, ten large
// nodes, and a service over them with the binder under test.
// `factory` may wrap or replace the embedded binder.
using BinderFactory = std::function<std::unique_ptr<PodBinder>(EmbeddedBinder* embedded)>;

// The storms test quota under concurrency, not the bind deadline (bind_verb_test has its own
// cases): under a sanitizer on a loaded machine a bind may wait seconds for the cache's lock, so
// the deadline is far past any run.
ServiceOptions StormOptions() {
  ServiceOptions options;
  options.bind_deadline = std::chrono::minutes(10);
  return options;
}

struct StormCluster {
  explicit StormCluster(const BinderFactory& factory = nullptr)
      : cache(QuotaSemantics::kCapacityExtender, {}, [this] { return now.load(); }),
        embedded(&cache),
        owned(factory ? factory(&embedded) : nullptr),
        binder(owned ? owned.get() : &embedded),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, PriorityThenStartTimeOrder(),
                binder, StormOptions()) {
    ConfigureLog("logfmt", "error");  // thousands of binds: keep the test output readable
    cache.set_ready(true);
    cache.Write([](ClusterState& s) {
      for (int n = 0; n < kNodes; ++n)
        s.UpsertNode(MakeNode(NodeName(n), 64'000, 256 * kGi, 500));
      s.UpsertQuota(MakeQuota(kNs, CpuList(1'000'000), CpuList(kMaxMilli)));
      return 0;
    });
  }
  ~StormCluster() { ConfigureLog("logfmt", "info"); }

  // Every pod learned through /filter, as kube-scheduler would send it before /bind.
  void LearnAllPods() {
    for (int i = 0; i < kPods; ++i) {
      std::string body = FilterBody(i);
      http::Response r = service.Filter(body);
      REQUIRE(r.status == 200);
    }
    const auto pending = cache.Read([](const ClusterState& s) { return s.PendingPods().size(); });
    REQUIRE(pending == static_cast<std::size_t>(kPods));
  }

  // Binds synchronously when the binder does not block; otherwise waits for the answer.
  std::string BindNow(int i) {
    std::string body = BindBody(i);
    auto promise = std::make_shared<std::promise<std::string>>();
    auto future = promise->get_future();
    service.Bind(body, [promise](http::Response r) { promise->set_value(BindError(r)); });
    return future.get();
  }

  QuotaNumbers Numbers() { return ParseQuotas(service.Quotas().body); }
  std::size_t Reservations() {
    return cache.Read([](const ClusterState& s) { return s.reservations().size(); });
  }
  // Pod index -> node of every pod bound in the cache.
  std::map<int, std::string> Bound() {
    return cache.Read([](const ClusterState& s) {
      std::map<int, std::string> out;
      for (int i = 0; i < kPods; ++i) {
        const Pod* pod = s.FindPod(PodUid(i));
        if (pod != nullptr && pod->IsBound()) out[i] = pod->node_name;
      }
      return out;
    });
  }

  std::atomic<int64_t> now{kStartMs};
  Metrics metrics;
  SchedulerCache cache;
  EmbeddedBinder embedded;
  std::unique_ptr<PodBinder> owned;
  PodBinder* binder;
  ExtenderService service;
};

// Every pod once, and every fifth pod a second time right after the first (so both calls are in
// flight together), in a fixed shuffled order.
std::vector<int> BindOrder() {
  std::vector<int> pods(kPods);
  for (int i = 0; i < kPods; ++i)
    pods[i] = i;
  std::mt19937 rng(20270101);
  std::shuffle(pods.begin(), pods.end(), rng);
  std::vector<int> order;
  for (int i : pods) {
    order.push_back(i);
    if (i % 5 == 0) order.push_back(i);
  }
  return order;
}

struct StormResult {
  std::vector<int> order;
  std::vector<std::string> errors;  // per attempt, "" = success
  std::set<int> succeeded;          // distinct pods with at least one success
};

// kThreads threads pull attempts from one shared list and call `bind` for each.
StormResult RunStorm(const std::function<std::string(int thread, int pod)>& bind) {
  StormResult result;
  result.order = BindOrder();
  result.errors.assign(result.order.size(), "<not run>");
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t k = next++; k < result.order.size(); k = next++) {
        result.errors[k] = bind(t, result.order[k]);
      }
    });
  }
  for (auto& th : threads)
    th.join();
  for (std::size_t k = 0; k < result.order.size(); ++k) {
    if (result.errors[k].empty()) result.succeeded.insert(result.order[k]);
  }
  return result;
}

bool IsQuotaRefusal(const std::string& error) {
  return error.find("would exceed max") != std::string::npos;
}
bool IsInFlightRefusal(const std::string& error) {
  return error.find("already in flight") != std::string::npos;
}

TEST_CASE("bind storm: 64 threads, 1000 pods, max fits 100: exactly 100 bound", "[concurrency]") {
  StormCluster cluster;
  cluster.LearnAllPods();
  // Meanwhile /filter keeps reading the cache, as kube-scheduler's serial loop does.
  std::atomic<bool> storming{true};
  std::atomic<int> filter_errors{0}, filters{0};
  std::thread filter_thread([&] {
    for (int i = 0; storming.load(); i = (i + 37) % kPods) {
      std::string body = FilterBody(i);
      http::Response response = cluster.service.Filter(body);
      rapidjson::Document doc;
      doc.Parse(response.body.c_str());
      const bool ok = response.status == 200 && doc.IsObject() && doc.HasMember("Error") &&
                      std::string(doc["Error"].GetString()).empty();
      if (!ok) ++filter_errors;
      ++filters;
    }
  });
  StormResult r = RunStorm([&](int, int pod) { return cluster.BindNow(pod); });
  storming = false;
  filter_thread.join();
  CHECK(filters.load() > 0);
  CHECK(filter_errors.load() == 0);

  CHECK(r.succeeded.size() == 100);
  for (std::size_t k = 0; k < r.order.size(); ++k) {
    const std::string& e = r.errors[k];
    INFO("pod " << r.order[k] << ": " << e);
    CHECK((e.empty() || IsQuotaRefusal(e) || IsInFlightRefusal(e)));
  }
  const auto bound = cluster.Bound();
  CHECK(bound.size() == 100);
  for (int pod : r.succeeded) {
    INFO("pod " << pod);
    CHECK(bound.count(pod) == 1);
    if (bound.count(pod)) CHECK(bound.at(pod) == NodeName(pod));
  }
  const QuotaNumbers q = cluster.Numbers();
  CHECK(q.max == kMaxMilli);
  CHECK(q.used == kMaxMilli);
  CHECK(q.reserved == 0);
  CHECK(cluster.Reservations() == 0);

  // Idempotent afterwards too: a bound pod binds again with no error and no extra usage; a
  // refused pod is still refused.
  const int some_bound = *r.succeeded.begin();
  CHECK(cluster.BindNow(some_bound).empty());
  int some_refused = 0;
  while (r.succeeded.count(some_refused))
    ++some_refused;
  CHECK(IsQuotaRefusal(cluster.BindNow(some_refused)));
  CHECK(cluster.Numbers().used == kMaxMilli);
}

TEST_CASE("bind storm with injected binding failures: usage is exactly the successful binds",
          "[concurrency]") {
  StormCluster cluster(
      [](EmbeddedBinder* embedded) { return std::make_unique<FlakyBinder>(embedded, 7); });
  auto* flaky = static_cast<FlakyBinder*>(cluster.binder);
  cluster.LearnAllPods();

  StormResult r = RunStorm([&](int, int pod) { return cluster.BindNow(pod); });

  CHECK(flaky->failures.load() > 0);
  int injected = 0;
  for (const auto& e : r.errors) {
    if (e.find("injected failure") != std::string::npos) ++injected;
  }
  CHECK(injected == flaky->failures.load());
  CHECK(r.succeeded.size() <= 100);
  CHECK(!r.succeeded.empty());
  const auto bound = cluster.Bound();
  CHECK(bound.size() == r.succeeded.size());
  for (int pod : r.succeeded)
    CHECK(bound.count(pod) == 1);

  const QuotaNumbers q = cluster.Numbers();
  CHECK(q.used == static_cast<int64_t>(r.succeeded.size()) * kRequestMilli);
  CHECK(q.reserved == 0);
  CHECK(cluster.Reservations() == 0);

  // What the failures released can still be used: keep binding refused pods until max.
  for (int i = 0; i < kPods && cluster.Numbers().used < kMaxMilli; ++i) {
    if (!r.succeeded.count(i)) cluster.BindNow(i);
  }
  CHECK(cluster.Numbers().used == kMaxMilli);
  CHECK(cluster.Reservations() == 0);
}

TEST_CASE("bind storm with a live-like binder: reservations hold until confirmed or expired",
          "[concurrency]") {
  StormCluster cluster([](EmbeddedBinder*) { return std::make_unique<LiveLikeBinder>(); });
  auto& live = *static_cast<LiveLikeBinder*>(cluster.binder);
  WorkThreads& work = live.work;
  cluster.LearnAllPods();

  StormResult r = RunStorm([&](int, int pod) { return cluster.BindNow(pod); });
  work.JoinAll();

  REQUIRE(r.succeeded.size() == 100);
  CHECK(live.calls.load() == 100);  // one binding per reserved pod, even for double binds
  CHECK(cluster.Bound().empty());   // nothing confirmed yet
  CHECK(cluster.Reservations() == 100);
  QuotaNumbers q = cluster.Numbers();
  CHECK(q.used == kMaxMilli);
  CHECK(q.reserved == kMaxMilli);

  // A repeated bind of a reserved pod (same node) is idempotent: no new binding, no new usage.
  const std::vector<int> reserved(r.succeeded.begin(), r.succeeded.end());
  CHECK(cluster.BindNow(reserved[0]).empty());
  work.JoinAll();
  CHECK(live.calls.load() == 100);
  CHECK(cluster.Numbers().used == kMaxMilli);

  // The watch confirms 60 of them: usage moves from reserved to bound, never counted twice.
  cluster.cache.Write([&](ClusterState& s) {
    for (int k = 0; k < 60; ++k) {
      Pod pod = *s.FindPod(PodUid(reserved[k]));
      pod.node_name = NodeName(reserved[k]);
      pod.phase = PodPhase::kRunning;
      s.UpsertPod(std::move(pod));
    }
    return 0;
  });
  q = cluster.Numbers();
  CHECK(q.used == kMaxMilli);
  CHECK(q.reserved == 40 * kRequestMilli);
  CHECK(cluster.Reservations() == 40);
  CHECK(cluster.Bound().size() == 60);
  // A confirmed pod binds again idempotently.
  CHECK(cluster.BindNow(reserved[1]).empty());

  int refused = 0;
  while (r.succeeded.count(refused))
    ++refused;
  CHECK(IsQuotaRefusal(cluster.BindNow(refused)));

  // One millisecond before the TTL nothing expires; at the TTL the 40 unconfirmed ones do.
  const int64_t ttl = ServiceOptions{}.reservation_ttl_ms;
  cluster.now += ttl - 1;
  CHECK(cluster.cache.Write([&](ClusterState& s) { return s.Expire(cluster.now.load()); }).empty());
  cluster.now += 1;
  const auto expired =
      cluster.cache.Write([&](ClusterState& s) { return s.Expire(cluster.now.load()); });
  CHECK(expired.size() == 40);
  CHECK(cluster.Reservations() == 0);
  q = cluster.Numbers();
  CHECK(q.used == 60 * kRequestMilli);
  CHECK(q.reserved == 0);

  // The room they held is free again: exactly 40 more pods get through.
  int more = 0;
  for (int i = 0; i < kPods; ++i) {
    if (r.succeeded.count(i)) continue;
    if (cluster.BindNow(i).empty()) ++more;
  }
  work.JoinAll();
  CHECK(more == 40);
  CHECK(cluster.Numbers().used == kMaxMilli);
}

TEST_CASE("bind storm over HTTP: 64 keep-alive clients against the real server", "[concurrency]") {
  StormCluster cluster;
  Metrics router_metrics;
  http::ServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.io_threads = 2;
  std::string error;
  auto server =
      http::Server::Start(options, MakeRouter(&cluster.service, &router_metrics, {}), &error);
  INFO(error);
  REQUIRE(server != nullptr);
  const uint16_t port = server->port();

  {
    test::HttpConnection learn;
    REQUIRE(learn.Connect("127.0.0.1", port));
    for (int i = 0; i < kPods; ++i) {
      test::ClientResponse response = learn.Post("/filter", FilterBody(i));
      REQUIRE(response.ok());
      REQUIRE(response.status == 200);
    }
  }

  std::vector<std::unique_ptr<test::HttpConnection>> connections;
  for (int t = 0; t < kThreads; ++t) {
    connections.push_back(std::make_unique<test::HttpConnection>());
    REQUIRE(connections.back()->Connect("127.0.0.1", port));
  }
  std::vector<uint16_t> first_ports;
  for (const auto& c : connections)
    first_ports.push_back(c->local_port());

  StormResult r = RunStorm([&](int t, int pod) -> std::string {
    test::ClientResponse response = connections[t]->Post("/bind", BindBody(pod));
    if (!response.ok()) return "<transport: " + response.error + ">";
    http::Response as_server{response.status, "", response.body, {}};
    return BindError(as_server);
  });

  CHECK(r.succeeded.size() == 100);
  for (std::size_t k = 0; k < r.order.size(); ++k) {
    const std::string& e = r.errors[k];
    INFO("pod " << r.order[k] << ": " << e);
    CHECK((e.empty() || IsQuotaRefusal(e) || IsInFlightRefusal(e)));
  }
  // Every client kept its one keep-alive connection for the whole storm.
  for (int t = 0; t < kThreads; ++t) {
    CHECK(connections[t]->is_open());
    CHECK(connections[t]->local_port() == first_ports[t]);
  }
  CHECK(cluster.Bound().size() == 100);

  test::ClientResponse quotas = connections[0]->Get("/quotas");
  REQUIRE(quotas.ok());
  const QuotaNumbers q = ParseQuotas(quotas.body);
  CHECK(q.used == kMaxMilli);
  CHECK(q.reserved == 0);
  CHECK(cluster.Reservations() == 0);

  connections.clear();
  server->Shutdown(std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace bind_storm_test
}  // namespace capext
