// /bind between its reservation and its Binding's end (docs/architecture.md#how-a-bind-travels):
// a retry of a pod in flight joins the flight and gets its outcome (success on the same node, a
// refusal naming the node otherwise, its own bind when the Binding was never made, an error at
// its own deadline); the bound on binds in flight answers at once and reserves nothing; a bind
// past its deadline is refused before anything is reserved; a Binding never sent releases its
// reservation; a Binding sent and unanswered keeps it and refuses the pod's binds until the watch
// or the TTL settles it. The binder under test holds every Binding until the test ends it.
#include <rapidjson/document.h>

#include <chrono>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "extender/log.h"
#include "extender/verbs/extender_service.h"
#include "tests/support/builders.h"

namespace capext {
namespace bind_verb_test {
namespace {

using testing::CpuList;
using testing::kGi;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int64_t kStartMs = 1'800'000'000'000;

// Keeps every Binding until the test completes it.
class HeldBinder final : public PodBinder {
 public:
  struct Held {
    BindRequest request;
    BindDone done;
  };
  void Bind(const BindRequest& request, BindDone done) override {
    std::lock_guard lock(mutex_);
    held_.push_back({request, std::move(done)});
    ++calls_;
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  std::size_t held() {
    std::lock_guard lock(mutex_);
    return held_.size();
  }
  BindRequest Front() {
    std::lock_guard lock(mutex_);
    return held_.front().request;
  }
  // Completes the oldest held Binding with `outcome`.
  void Complete(BindOutcome outcome) {
    BindDone done;
    {
      std::lock_guard lock(mutex_);
      REQUIRE(!held_.empty());
      done = std::move(held_.front().done);
      held_.pop_front();
    }
    done(std::move(outcome));
  }

 private:
  std::mutex mutex_;
  std::deque<Held> held_;
  int calls_ = 0;
};

BindOutcome Bound() {
  return BindOutcome{true, 201, "", false};
}
BindOutcome RefusedByApiServer() {
  return BindOutcome{false, 500, "HTTP 500 InternalError: injected", false};
}
BindOutcome Unanswered() {
  BindOutcome o{false, 0, "POST .../binding: timed out after 30000 ms", false};
  o.may_have_bound = true;
  return o;
}
BindOutcome NeverSent() {
  BindOutcome o{false, 0, "POST .../binding: not sent: its deadline passed", false};
  o.deadline_passed = true;
  o.queued = std::chrono::milliseconds(4000);
  return o;
}

// Two nodes; quota "team" {min 4, max 6}; pending pods a..e of 1 cpu each.
struct Fixture {
  explicit Fixture(ServiceOptions options = {})
      : cache(QuotaSemantics::kCapacityExtender, {}, [this] { return now.load(); }),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, PriorityThenStartTimeOrder(),
                &binder, options) {
    ConfigureLog("logfmt", "error");
    cache.set_ready(true);
    cache.Write([](ClusterState& s) {
      for (const char* n : {"n1", "n2"})
        s.UpsertNode(MakeNode(n, 8000, 32 * kGi));
      s.UpsertQuota(MakeQuota("team", CpuList(4000), CpuList(6000)));
      for (const char* p : {"a", "b", "c", "d", "e"})
        s.UpsertPod(MakePod("team", p).Cpu(1000));
      return 0;
    });
  }
  ~Fixture() { ConfigureLog("logfmt", "info"); }

  // Starts a /bind; the future holds its ExtenderBindingResult.Error.
  std::future<std::string> Bind(const std::string& pod, const std::string& node,
                                Clock::time_point received = Clock::now(),
                                std::string client = "127.0.0.1:50000", bool client_gone = false) {
    auto promise = std::make_shared<std::promise<std::string>>();
    std::future<std::string> future = promise->get_future();
    std::string body = fmt::format(
        R"({{"PodName":"{}","PodNamespace":"team","PodUID":"uid-team-{}","Node":"{}"}})", pod, pod,
        node);
    service.Bind(body,
                 [promise](http::Response r) {
                   rapidjson::Document doc;
                   doc.Parse(r.body.c_str());
                   promise->set_value(r.status == 200 && doc.IsObject() && doc.HasMember("Error")
                                          ? doc["Error"].GetString()
                                          : "<status " + std::to_string(r.status) + ">");
                 },
                 {received, std::move(client), client_gone});
    return future;
  }
  static bool Ready(const std::future<std::string>& f) {
    return f.wait_for(0s) == std::future_status::ready;
  }
  int64_t Reserved() {
    return cache.Read([](const ClusterState& s) { return s.ledger().Reserved("team").Get("cpu"); });
  }
  std::size_t Reservations() {
    return cache.Read([](const ClusterState& s) { return s.reservations().size(); });
  }
  // The watch shows `pod` bound to `node`.
  void WatchShowsBound(const std::string& pod, const std::string& node) {
    cache.Write([&](ClusterState& s) {
      Pod bound = *s.FindPod("uid-team-" + pod);
      bound.node_name = node;
      bound.phase = PodPhase::kRunning;
      s.UpsertPod(std::move(bound));
      return 0;
    });
  }
  std::string MetricsText() { return metrics.Render(); }

  std::atomic<int64_t> now{kStartMs};
  Metrics metrics;
  SchedulerCache cache;
  HeldBinder binder;
  ExtenderService service;
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("bind: a retry joins the Binding in flight and gets its outcome", "[bind]") {
  Fixture f;
  auto first = f.Bind("a", "n1");
  REQUIRE(f.binder.held() == 1);
  CHECK(f.Reserved() == 1000);

  SECTION("bound: the retry for the same node succeeds, one for another node is refused") {
    auto same = f.Bind("a", "n1");
    auto other = f.Bind("a", "n2");
    CHECK_FALSE(Fixture::Ready(same));
    CHECK_FALSE(Fixture::Ready(other));
    CHECK(f.binder.calls() == 1);  // no second Binding while one is in the air
    f.binder.Complete(Bound());
    CHECK(first.get().empty());
    CHECK(same.get().empty());
    const std::string refused = other.get();
    CHECK(Contains(refused, "pod team/a was bound to n1 by an earlier bind"));
    CHECK(f.Reserved() == 1000);  // held until the watch shows the pod
    CHECK(Contains(f.MetricsText(), "capacity_extender_binds_joined_total 2"));
  }
  SECTION("refused by the API server: the retry makes its own Binding") {
    auto retry = f.Bind("a", "n2");
    f.binder.Complete(RefusedByApiServer());
    CHECK(Contains(first.get(), "binding failed: HTTP 500"));
    REQUIRE(f.binder.held() == 1);  // the retry's own, for its node
    CHECK(f.binder.Front().node == "n2");
    CHECK(f.Reserved() == 1000);  // the first one's released, the retry's taken
    CHECK_FALSE(Fixture::Ready(retry));
    f.binder.Complete(Bound());
    CHECK(retry.get().empty());
    CHECK(f.binder.calls() == 2);
  }
  SECTION("sent and unanswered: the retry is refused and the reservation stays") {
    auto retry = f.Bind("a", "n1");
    f.binder.Complete(Unanswered());
    CHECK(Contains(first.get(), "timed out after 30000 ms"));
    CHECK(Contains(retry.get(), "got no answer"));
    CHECK(f.Reserved() == 1000);
    // Later binds are refused too, naming the Binding, without a second one.
    CHECK(Contains(f.Bind("a", "n1").get(), "not bound again until the watch shows it"));
    CHECK(f.binder.calls() == 1);
    // The watch settles it: the pod is bound, its bind is answered as done.
    f.WatchShowsBound("a", "n1");
    CHECK(f.Bind("a", "n1").get().empty());
    CHECK(f.Reservations() == 0);
    CHECK(f.binder.calls() == 1);
  }
}

TEST_CASE("bind: a joined retry is answered at its own deadline if the flight is still up",
          "[bind]") {
  ServiceOptions options;
  options.bind_deadline = 100ms;
  Fixture f(options);
  auto first = f.Bind("a", "n1");
  auto retry = f.Bind("a", "n1");
  // The retry gets its error at its deadline; the first one waits for its Binding.
  const std::string error = retry.get();
  CHECK(Contains(error, "still unanswered at this bind's deadline"));
  CHECK_FALSE(Fixture::Ready(first));
  f.binder.Complete(Bound());
  CHECK(first.get().empty());
  CHECK(Contains(f.MetricsText(), "outcome=\"joined-expired\"} 1"));
}

TEST_CASE("bind: past maxBindsInFlight a bind is refused at once and reserves nothing", "[bind]") {
  ServiceOptions options;
  options.max_binds_in_flight = 2;
  Fixture f(options);
  auto a = f.Bind("a", "n1");
  auto b = f.Bind("b", "n1");
  const std::string refused = f.Bind("c", "n1").get();
  CHECK(Contains(refused, "2 binds already wait for the API server (maxBindsInFlight 2)"));
  CHECK(f.Reserved() == 2000);
  CHECK(f.binder.calls() == 2);
  CHECK(Contains(f.MetricsText(), "capacity_extender_binds_refused_at_bound_total 1"));
  CHECK(Contains(f.MetricsText(), "capacity_extender_binds_in_flight 2"));
  f.binder.Complete(Bound());
  CHECK(a.get().empty());
  auto c = f.Bind("c", "n1");  // room again
  CHECK(f.binder.calls() == 3);
  f.binder.Complete(Bound());
  f.binder.Complete(Bound());
  CHECK(b.get().empty());
  CHECK(c.get().empty());
  CHECK(Contains(f.MetricsText(), "capacity_extender_binds_in_flight 0"));
}

TEST_CASE("bind: a caller gone before the read gets nothing done; the Binding names its caller",
          "[bind]") {
  Fixture f;
  SECTION("gone: nothing reserved, no Binding, counted") {
    const std::string error = f.Bind("a", "n1", Clock::now(), "127.0.0.1:50001", true).get();
    CHECK(Contains(error, "its caller (127.0.0.1:50001) closed the connection"));
    CHECK(f.binder.calls() == 0);
    CHECK(f.Reservations() == 0);
    CHECK(Contains(f.MetricsText(), "capacity_extender_binds_abandoned_total 1"));
  }
  SECTION("there: the binder gets the caller with the request") {
    auto pending = f.Bind("a", "n1", Clock::now(), "127.0.0.1:50002");
    CHECK(f.binder.Front().client == "127.0.0.1:50002");
    f.binder.Complete(Bound());
    CHECK(pending.get().empty());
  }
}

TEST_CASE("bind: the deadline", "[bind]") {
  Fixture f;
  SECTION("a bind that arrives past it is refused before anything is reserved") {
    const std::string error = f.Bind("a", "n1", Clock::now() - 5s).get();
    CHECK(Contains(error, "past its bindDeadline of 4000 ms"));
    CHECK(f.binder.calls() == 0);
    CHECK(f.Reservations() == 0);
  }
  SECTION("the binder is given it") {
    const auto received = Clock::now();
    auto pending = f.Bind("a", "n1", received);
    CHECK(f.binder.Front().deadline == received + 4000ms);
    f.binder.Complete(Bound());
    CHECK(pending.get().empty());
  }
  SECTION("a Binding never sent releases its reservation before the answer") {
    auto pending = f.Bind("a", "n1");
    f.binder.Complete(NeverSent());
    const std::string error = pending.get();
    CHECK(Contains(error, "was not sent: its bindDeadline of 4000 ms passed"));
    CHECK(f.Reservations() == 0);
    CHECK(f.Reserved() == 0);
    CHECK(Contains(f.MetricsText(), "capacity_extender_binds_expired_total 1"));
    // Nothing left behind: the pod binds on its next try.
    auto again = f.Bind("a", "n1");
    f.binder.Complete(Bound());
    CHECK(again.get().empty());
  }
}

TEST_CASE("bind: an unanswered Binding's reservation expires; then the pod binds again", "[bind]") {
  Fixture f;
  auto first = f.Bind("a", "n1");
  f.binder.Complete(Unanswered());
  CHECK_FALSE(first.get().empty());
  CHECK(f.Reservations() == 1);
  f.now += ServiceOptions{}.reservation_ttl_ms;
  f.cache.Write([&](ClusterState& s) { return s.Expire(f.now.load()); });
  CHECK(f.Reservations() == 0);
  auto again = f.Bind("a", "n1");
  CHECK(f.binder.calls() == 2);
  f.binder.Complete(Bound());
  CHECK(again.get().empty());
}

TEST_CASE("bind: a reservation of a Binding that succeeded answers its node only", "[bind]") {
  Fixture f;
  auto first = f.Bind("a", "n1");
  f.binder.Complete(Bound());
  CHECK(first.get().empty());
  CHECK(f.Bind("a", "n1").get().empty());  // idempotent
  CHECK(Contains(f.Bind("a", "n2").get(), "was bound to n1 by an earlier bind"));
  CHECK(f.Reserved() == 1000);  // never released by a bind for another node
  CHECK(f.binder.calls() == 1);
}

}  // namespace
}  // namespace bind_verb_test
}  // namespace capext
