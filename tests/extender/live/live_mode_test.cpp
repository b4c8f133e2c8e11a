// LiveMode in process against the API-server double: the live binder (asynchronous, through the
// Binding client's one thread) under 1,000 binds with no thread created and no quota exceeded;
// failed bindings (409, 500) releasing the reservation before the answer, a Binding whose
// connection dropped keeping it (it may have been made); a Binding sent before its deadline waited
// for past it, one queued past its deadline never sent; ElasticQuotas of both API groups
// enforced, status written to each quota's own group; a CRD installed after start picked up by
// re-discovery, with /readyz's reason naming the missing API until then.
#include "extender/live/live_mode.h"

#include <rapidjson/document.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "extender/verbs/extender_service.h"
#include "tests/support/apiserver_double_process.h"

namespace capext {
namespace live_mode_test {
namespace {

using kube::testing::ApiServerDouble;
using kube::testing::TempDir;
using namespace std::chrono_literals;

constexpr char kEqX[] = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/";
constexpr char kEqSigs[] = "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/";

// Threads of this process now (entries of /proc/self/task).
int ThreadCount() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

bool Poll(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

std::string QuotaJson(const std::string& group, const std::string& ns, const std::string& name,
                      const std::string& max_cpu) {
  return R"({"apiVersion":")" + group + R"(/v1alpha1","kind":"ElasticQuota","metadata":{"name":")" +
         name + R"(","namespace":")" + ns + R"("},"spec":{"min":{"cpu":")" + max_cpu +
         R"("},"max":{"cpu":")" + max_cpu + R"("}}})";
}

std::string PodJson(const std::string& ns, const std::string& name, const std::string& cpu) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" +
         ns +
         R"("},"spec":{"containers":[{"name":"c","image":"pause","resources":{"requests":)"
         R"({"cpu":")" +
         cpu + R"("}}}]},"status":{"phase":"Pending"}})";
}

// The double, the kubeconfig for it, a LiveMode on a fresh cache and a service over it.
struct LiveFixture {
  explicit LiveFixture(const std::string& group = "scheduling.x-k8s.io",
                       std::chrono::milliseconds request_timeout = 4000ms)
      : api(Options(group)), cache(QuotaSemantics::kCapacityExtender, {}) {
    REQUIRE(api.started());
    REQUIRE_FALSE(api.Control("requests/clear").empty());  // the control client exists now
    dir.Write("kubeconfig",
              "apiVersion: v1\nkind: Config\nclusters:\n- name: d\n  cluster:\n"
              "    server: " +
                  api.url() +
                  "\ncontexts:\n- name: d\n  context:\n    cluster: d\n    user: u\n"
                  "current-context: d\nusers:\n- name: u\n  user:\n    token: " +
                  "test-token\n");
    config.kubeconfig = dir.File("kubeconfig");
    config.request_timeout = request_timeout;
    config.discovery_interval = 200ms;
    config.status_update_interval = 200ms;
  }
  static ApiServerDouble::Options Options(const std::string& group) {
    ApiServerDouble::Options options;
    options.group = group;
    return options;
  }
  void Create(const std::string& collection, const std::string& json) {
    kube::RestResponse r = api.ControlClient()->Post(collection, json);
    INFO(collection << " " << r.status << " " << r.body << r.error);
    REQUIRE(r.status == 201);
  }
  void Start() {
    StatusOr<std::unique_ptr<LiveMode>> started = LiveMode::Start(config, &cache, &metrics);
    INFO(started.status().message());
    REQUIRE(started.ok());
    live = std::move(started).value();
    binder = live->MakeBinder(nullptr);
    ServiceOptions options;
    options.bind_deadline = config.bind_deadline;
    options.max_binds_in_flight = static_cast<std::size_t>(config.max_binds_in_flight);
    service =
        std::make_unique<ExtenderService>(&cache, &metrics, NodeScoring::kLeastAllocated,
                                          PriorityThenStartTimeOrder(), binder.get(), options);
  }
  bool WaitReady() {
    return Poll([&] { return cache.ready(); }, 20s);
  }
  std::string Uid(const std::string& ns, const std::string& name) {
    return cache.Read([&](const ClusterState& s) {
      const Pod* p = s.FindPodByName(ns, name);
      return p ? p->uid : std::string();
    });
  }
  std::string BindBody(const std::string& ns, const std::string& name, const std::string& node) {
    return R"({"PodName":")" + name + R"(","PodNamespace":")" + ns + R"(","PodUID":")" +
           Uid(ns, name) + R"(","Node":")" + node + R"("})";
  }
  // Starts one /bind; the future holds its ExtenderBindingResult.Error.
  std::future<std::string> BindAsync(const std::string& ns, const std::string& name,
                                     const std::string& node) {
    auto promise = std::make_shared<std::promise<std::string>>();
    std::future<std::string> future = promise->get_future();
    std::string body = BindBody(ns, name, node);
    service->Bind(body, [promise](http::Response r) {
      rapidjson::Document doc;
      doc.Parse(r.body.c_str());
      promise->set_value(r.status == 200 && doc.IsObject() && doc.HasMember("Error")
                             ? doc["Error"].GetString()
                             : "<status " + std::to_string(r.status) + ">");
    });
    return future;
  }
  std::string Bind(const std::string& ns, const std::string& name, const std::string& node) {
    return BindAsync(ns, name, node).get();
  }
  // /filter's Error for the pod as the double has it, on node n1 ("" when it decided).
  std::string FilterError(const std::string& ns, const std::string& name) {
    const std::string pod = ObjectJson("pods", ns, name);
    REQUIRE_FALSE(pod.empty());
    std::string body = R"({"Pod":)" + pod + R"(,"NodeNames":["n1"]})";
    rapidjson::Document doc;
    doc.Parse(service->Filter(body).body.c_str());
    REQUIRE(doc.IsObject());
    return doc["Error"].GetString();
  }
  // The names /filter passes for the pod on node n1.
  size_t FilterPasses(const std::string& ns, const std::string& name) {
    const std::string pod = ObjectJson("pods", ns, name);
    std::string body = R"({"Pod":)" + pod + R"(,"NodeNames":["n1"]})";
    rapidjson::Document doc;
    doc.Parse(service->Filter(body).body.c_str());
    return doc.IsObject() && doc["NodeNames"].IsArray() ? doc["NodeNames"].Size() : 0;
  }
  std::string ObjectJson(const std::string& resource, const std::string& ns,
                         const std::string& name) {
    kube::RestResponse r =
        api.ControlClient()->Get("/api/v1/namespaces/" + ns + "/" + resource + "/" + name);
    return r.status == 200 ? r.body : "";
  }
  size_t Reservations() {
    return cache.Read([](const ClusterState& s) { return s.reservations().size(); });
  }
  int64_t UsedMilli(const std::string& ns) {
    return cache.Read([&](const ClusterState& s) { return s.Used(ns).Get("cpu"); });
  }

  TempDir dir;
  ApiServerDouble api;
  SchedulerCache cache;
  Metrics metrics;
  ExtenderConfig config;
  std::unique_ptr<LiveMode> live;
  std::unique_ptr<PodBinder> binder;
  std::unique_ptr<ExtenderService> service;
};

const char kBigNode[] =
    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":)"
    R"({"cpu":"1000","memory":"1Ti","pods":"5000"}}})";

TEST_CASE("live binder: 1,000 concurrent binds create no thread and never exceed the quota",
          "[live]") {
  LiveFixture f;
  f.config.max_binds_in_flight = 1000;  // all at once: the bound has tests of its own
  // The deadline has tests of its own too: 1,000 binds through the double under a sanitizer on a
  // loaded machine may take longer than 4 s.
  f.config.bind_deadline = std::chrono::minutes(10);
  f.Create("/api/v1/nodes", kBigNode);
  f.Create(std::string(kEqX) + "storm/elasticquotas",
           QuotaJson("scheduling.x-k8s.io", "storm", "storm", "5"));  // 500 pods of 10m
  REQUIRE_FALSE(
      f.api
          .Control("churn", R"({"resource":"pods","namespace":"storm","prefix":"p-","count":1000})")
          .empty());
  f.Start();
  REQUIRE(f.WaitReady());
  REQUIRE(Poll([&] { return !f.Uid("storm", "p-999").empty(); }, 10s));
  std::vector<std::string> bodies;
  // The first bindings are held back so that the rest pile up in the client's queue.
  REQUIRE_FALSE(f.api
                    .Control("delay", R"({"ms":300,"count":4,"path_prefix":"/api/v1/namespaces/)"
                                      R"(storm/pods/","method":"POST"})")
                    .empty());

  const int before = ThreadCount();
  std::vector<std::future<std::string>> results;
  for (int i = 0; i < 1000; ++i)
    results.push_back(f.BindAsync("storm", "p-" + std::to_string(i), "n1"));
  const int during = ThreadCount();
  int bound = 0, refused = 0;
  for (auto& r : results) {
    const std::string error = r.get();
    if (error.empty()) {
      ++bound;
    } else {
      INFO(error);
      CHECK(error.find("would exceed max") != std::string::npos);
      ++refused;
    }
  }
  const int after = ThreadCount();
  CHECK(during == before);
  CHECK(after == before);
  CHECK(bound == 500);
  CHECK(refused == 500);
  CHECK(f.api.CountRequests("POST", "/binding") == 500);
  CHECK(f.UsedMilli("storm") == 5000);
  // Every binding reached the API server, through a handful of connections.
  CHECK(Poll([&] { return f.Reservations() == 0; }, 10s));  // confirmed by the watch
  CHECK(f.UsedMilli("storm") == 5000);
}

TEST_CASE("live binder: failed bindings release the reservation before the answer", "[live]") {
  LiveFixture f;
  f.Create("/api/v1/nodes", kBigNode);
  f.Create(std::string(kEqX) + "eq/elasticquotas",
           QuotaJson("scheduling.x-k8s.io", "eq", "eq", "4"));
  f.Create("/api/v1/namespaces/eq/pods", PodJson("eq", "web", "1"));
  f.Start();
  REQUIRE(f.WaitReady());
  REQUIRE(Poll([&] { return !f.Uid("eq", "web").empty(); }, 10s));

  SECTION("409 and 500 from the API server") {
    for (int code : {409, 500}) {
      REQUIRE_FALSE(f.api
                        .Control("inject_binding_failures",
                                 R"({"count":1,"code":)" + std::to_string(code) + "}")
                        .empty());
      const std::string error = f.Bind("eq", "web", "n1");
      INFO(error);
      CHECK(error.find("HTTP " + std::to_string(code)) != std::string::npos);
      CHECK(f.Reservations() == 0);
      CHECK(f.UsedMilli("eq") == 0);
    }
  }
  SECTION("the connection dropped mid-request: the Binding may have been made") {
    REQUIRE_FALSE(f.api
                      .Control("delay", R"({"ms":3000,"count":1,"path_prefix":"/api/v1/)"
                                        R"(namespaces/eq/pods/web/binding"})")
                      .empty());
    LiveFixture* fixture = &f;
    std::future<std::string> pending = f.BindAsync("eq", "web", "n1");
    std::this_thread::sleep_for(200ms);
    fixture->api.Stop();  // the API server goes away with the request in flight
    const std::string error = pending.get();
    INFO(error);
    CHECK_FALSE(error.empty());
    // Nobody knows whether it was made: the room stays held, and the pod is not bound again
    // until the watch shows it or the reservation expires.
    CHECK(f.Reservations() == 1);
    CHECK(f.UsedMilli("eq") == 1000);
    const std::string retry = f.Bind("eq", "web", "n1");
    CHECK(retry.find("got no answer") != std::string::npos);
  }
  SECTION("success, then idempotent") {
    CHECK(f.Bind("eq", "web", "n1").empty());
    CHECK(f.UsedMilli("eq") == 1000);
    CHECK(f.Bind("eq", "web", "n1").empty());
    CHECK(f.api.CountRequests("POST", "/binding") == 1);
  }
  f.live->Stop();
}

TEST_CASE("live binder: a Binding sent is waited for; one queued past its deadline is never sent",
          "[live]") {
  LiveFixture f;
  f.config.bind_connections = 1;  // the slow Binding holds the only connection
  f.config.bind_deadline = 500ms;
  f.Create("/api/v1/nodes", kBigNode);
  f.Create(std::string(kEqX) + "eq/elasticquotas",
           QuotaJson("scheduling.x-k8s.io", "eq", "eq", "4"));
  f.Create("/api/v1/namespaces/eq/pods", PodJson("eq", "slow", "1"));
  f.Create("/api/v1/namespaces/eq/pods", PodJson("eq", "late", "1"));
  f.Start();
  REQUIRE(f.WaitReady());
  REQUIRE(Poll([&] { return !f.Uid("eq", "late").empty(); }, 10s));
  REQUIRE_FALSE(f.api
                    .Control("delay", R"({"ms":1500,"count":1,"path_prefix":"/api/v1/)"
                                      R"(namespaces/eq/pods/slow/binding"})")
                    .empty());
  std::future<std::string> slow = f.BindAsync("eq", "slow", "n1");
  // Written (not queued any more) and not answered yet.
  REQUIRE(Poll(
      [&] {
        const std::string m = f.metrics.Render();
        return m.find("capacity_extender_binds_in_flight 1\n") != std::string::npos &&
               m.find("capacity_extender_binds_queued 0\n") != std::string::npos;
      },
      10s));
  std::future<std::string> late = f.BindAsync("eq", "late", "n1");
  const std::string late_error = late.get();
  INFO(late_error);
  CHECK(late_error.find("was not sent: its bindDeadline of 500 ms passed") != std::string::npos);
  // Sent before its deadline, the slow Binding is waited for past it, and it succeeds.
  CHECK(slow.get().empty());
  CHECK(f.api.CountRequests("POST", "/late/binding") == 0);
  CHECK(Poll([&] { return f.Reservations() == 0; }, 10s));  // the watch confirmed "slow"
  CHECK(f.UsedMilli("eq") == 1000);
  const std::string metrics = f.metrics.Render();
  CHECK(metrics.find("capacity_extender_binds_expired_total 1") != std::string::npos);
  CHECK(metrics.find("capacity_extender_binds_queued 0") != std::string::npos);
  CHECK(metrics.find("capacity_extender_binds_in_flight 0") != std::string::npos);
  f.live->Stop();
}

TEST_CASE("live quotas: both API groups are read; status goes to each quota's group", "[live]") {
  LiveFixture f("both");
  f.Create("/api/v1/nodes", kBigNode);
  f.Create(std::string(kEqX) + "current/elasticquotas",
           QuotaJson("scheduling.x-k8s.io", "current", "current", "1"));
  f.Create(std::string(kEqSigs) + "legacy/elasticquotas",
           QuotaJson("scheduling.sigs.k8s.io", "legacy", "legacy", "1"));
  // One quota per namespace: whichever group's informer delivers first is used, the other one is
  // reported and ignored.
  f.Create(std::string(kEqX) + "shared/elasticquotas",
           QuotaJson("scheduling.x-k8s.io", "shared", "first", "1"));
  f.Create(std::string(kEqSigs) + "shared/elasticquotas",
           QuotaJson("scheduling.sigs.k8s.io", "shared", "second", "1"));
  for (const char* ns : {"current", "legacy", "shared"}) {
    f.Create(std::string("/api/v1/namespaces/") + ns + "/pods", PodJson(ns, "small", "500m"));
    f.Create(std::string("/api/v1/namespaces/") + ns + "/pods", PodJson(ns, "big", "2"));
  }
  f.Start();
  REQUIRE(f.WaitReady());
  REQUIRE(Poll([&] { return !f.Uid("shared", "big").empty(); }, 10s));

  const auto quota_of = [&](const std::string& ns) {
    return f.cache.Read([&](const ClusterState& s) {
      const ElasticQuota* q = s.QuotaFor(ns);
      return q ? q->api_group + "/" + q->name : std::string("none");
    });
  };
  CHECK(quota_of("current") == "scheduling.x-k8s.io/current");
  CHECK(quota_of("legacy") == "scheduling.sigs.k8s.io/legacy");
  const std::string shared = quota_of("shared");
  CHECK((shared == "scheduling.x-k8s.io/first" || shared == "scheduling.sigs.k8s.io/second"));

  for (const char* ns : {"current", "legacy", "shared"}) {
    INFO(ns);
    const std::string over = f.Bind(ns, "big", "n1");  // 2 cpu > max 1: refused in every group
    CHECK(over.find("exceeds the max of ElasticQuota") != std::string::npos);
    CHECK(f.Bind(ns, "small", "n1").empty());
  }
  // status.used is patched on the object's own group.
  const auto status_used = [&](const std::string& group, const std::string& ns,
                               const std::string& name) {
    rapidjson::Document doc;
    doc.Parse(f.api.ControlGet("objects?resource=elasticquotas&group=" + group).c_str());
    if (!doc.IsObject()) return std::string();
    for (const auto& item : doc["items"].GetArray()) {
      if (std::string(item["metadata"]["namespace"].GetString()) == ns &&
          std::string(item["metadata"]["name"].GetString()) == name && item.HasMember("status") &&
          item["status"].HasMember("used")) {
        return std::string(item["status"]["used"]["cpu"].GetString());
      }
    }
    return std::string();
  };
  CHECK(Poll([&] { return status_used("scheduling.sigs.k8s.io", "legacy", "legacy") == "500m"; },
             10s));
  CHECK(Poll([&] { return status_used("scheduling.x-k8s.io", "current", "current") == "500m"; },
             10s));
  const bool first_used = shared == "scheduling.x-k8s.io/first";
  CHECK(Poll(
      [&] {
        return status_used(first_used ? "scheduling.x-k8s.io" : "scheduling.sigs.k8s.io", "shared",
                           first_used ? "first" : "second") == "500m";
      },
      10s));
  // The ignored one is never written.
  CHECK(status_used(first_used ? "scheduling.sigs.k8s.io" : "scheduling.x-k8s.io", "shared",
                    first_used ? "second" : "first")
            .empty());
  f.live->Stop();
}

TEST_CASE("live quotas: a CRD installed after start is watched without a restart", "[live]") {
  LiveFixture f("none");
  f.Create("/api/v1/nodes", kBigNode);
  f.Create("/api/v1/namespaces/late/pods", PodJson("late", "big", "2"));
  f.Start();
  // Everything else is listed, but without an ElasticQuota API the cache is not ready.
  std::this_thread::sleep_for(600ms);
  CHECK_FALSE(f.cache.ready());
  const std::string reason = f.cache.not_ready_reason();
  INFO(reason);
  CHECK(reason.find("no ElasticQuota API is served (install deploy/crd)") != std::string::npos);
  CHECK(reason.find("scheduling.x-k8s.io/v1alpha1") != std::string::npos);
  // /filter says so, not "cluster cache not synced yet" (missingQuotaAPI: refuse, the default).
  CHECK(f.FilterError("late", "big") == "capacity-extender: " + reason);

  REQUIRE_FALSE(f.api.Control("install_group", R"({"group":"scheduling.sigs.k8s.io"})").empty());
  f.Create(std::string(kEqSigs) + "late/elasticquotas",
           QuotaJson("scheduling.sigs.k8s.io", "late", "late", "1"));
  REQUIRE(f.WaitReady());
  CHECK(f.cache.not_ready_reason().empty());
  REQUIRE(Poll(
      [&] {
        return f.cache.Read([](const ClusterState& s) { return s.QuotaFor("late"); }) != nullptr;
      },
      10s));
  REQUIRE(Poll([&] { return !f.Uid("late", "big").empty(); }, 10s));
  const std::string over = f.Bind("late", "big", "n1");
  INFO(over);
  CHECK(over.find("exceeds the max of ElasticQuota late/late") != std::string::npos);
  f.live->Stop();
}

TEST_CASE("live quotas: missingQuotaAPI: allow places pods by node fit until a CRD appears",
          "[live]") {
  LiveFixture f("none");
  f.config.missing_quota_api = "allow";
  f.Create("/api/v1/nodes", kBigNode);
  f.Create("/api/v1/namespaces/late/pods", PodJson("late", "big", "2"));
  f.Start();
  REQUIRE(f.WaitReady());  // every resource listed; no quota API is allowed
  REQUIRE(Poll([&] { return !f.Uid("late", "big").empty(); }, 10s));
  CHECK(f.FilterError("late", "big").empty());
  CHECK(f.FilterPasses("late", "big") == 1);
  const SchedulerCache::ReadinessVerdict ready = f.cache.Readiness();
  CHECK(ready.ready);
  CHECK(ready.reason.find("no ElasticQuota API is served (install deploy/crd)") !=
        std::string::npos);

  // The CRD appears with a quota: it is listed, then enforced (max 1 cpu < 2).
  REQUIRE_FALSE(f.api.Control("install_group", R"({"group":"scheduling.x-k8s.io"})").empty());
  f.Create(std::string(kEqX) + "late/elasticquotas",
           QuotaJson("scheduling.x-k8s.io", "late", "late", "1"));
  REQUIRE(Poll(
      [&] {
        return f.cache.Read([](const ClusterState& s) { return s.QuotaFor("late"); }) != nullptr;
      },
      10s));
  REQUIRE(f.WaitReady());
  CHECK(f.cache.quota_api().served);
  CHECK(f.FilterPasses("late", "big") == 0);
  const std::string over = f.Bind("late", "big", "n1");
  INFO(over);
  CHECK(over.find("exceeds the max of ElasticQuota late/late") != std::string::npos);
  f.live->Stop();
}

}  // namespace
}  // namespace live_mode_test
}  // namespace capext

namespace capext {
namespace live_mode_test {
namespace {

int32_t GroupMinMember(SchedulerCache& cache, const GroupKey& key) {
  return cache.Read([&](const ClusterState& s) {
    const GroupView* g = s.FindGroup(key);
    return g == nullptr || !g->has_object ? -1 : g->min_member;
  });
}

TEST_CASE("live: PodGroup and Workload APIs served later are watched; their objects set minMember",
          "[live]") {
  LiveFixture f;
  f.Start();
  REQUIRE(f.WaitReady());
  // Neither API at start; both installed later are picked up by the next discovery.
  REQUIRE_FALSE(f.api.Control("install_group", R"({"group":"workloads"})").empty());
  REQUIRE_FALSE(f.api.Control("install_group", R"({"group":"podgroups"})").empty());
  f.Create("/apis/scheduling.k8s.io/v1alpha1/namespaces/ml/workloads",
           R"({"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload","metadata":)"
           R"({"name":"job","namespace":"ml"},"spec":{"podGroups":[{"name":"workers","policy":)"
           R"({"gang":{"minCount":4}}},{"name":"driver","policy":{"basic":{}}}]}})");
  f.Create("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups",
           R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":)"
           R"({"name":"train-a","namespace":"ml"},"spec":{"minMember":3,)"
           R"("scheduleTimeoutSeconds":30}})");
  const GroupKey workers{"scheduling.k8s.io", "ml", "job/workers"};
  const GroupKey driver{"scheduling.k8s.io", "ml", "job/driver"};
  const GroupKey train{"scheduling.x-k8s.io", "ml", "train-a"};
  CHECK(Poll([&] { return GroupMinMember(f.cache, workers) == 4; }, 20s));
  CHECK(Poll([&] { return GroupMinMember(f.cache, driver) == 0; }, 20s));
  CHECK(Poll([&] { return GroupMinMember(f.cache, train) == 3; }, 20s));
  CHECK(f.cache.Read([&](const ClusterState& s) {
    return s.FindGroup(train)->schedule_timeout_ms;
  }) == 30'000);
  // A podGroups entry removed from the Workload drops its spec; the PodGroup's deletion too.
  kube::RestResponse r = f.api.ControlClient()->Put(
      "/apis/scheduling.k8s.io/v1alpha1/namespaces/ml/workloads/job",
      R"({"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload","metadata":)"
      R"({"name":"job","namespace":"ml"},"spec":{"podGroups":[{"name":"workers","policy":)"
      R"({"gang":{"minCount":2}}}]}})");
  INFO(r.status << " " << r.body);
  REQUIRE(r.ok());
  CHECK(Poll([&] { return GroupMinMember(f.cache, workers) == 2; }, 20s));
  CHECK(Poll([&] { return GroupMinMember(f.cache, driver) == -1; }, 20s));
  REQUIRE(f.api.ControlClient()
              ->Delete("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups/train-a")
              .ok());
  CHECK(Poll([&] { return GroupMinMember(f.cache, train) == -1; }, 20s));
}

}  // namespace
}  // namespace live_mode_test
}  // namespace capext
