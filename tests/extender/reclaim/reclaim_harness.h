// The reclaim controller's test harness (header-only, for tests/extender/reclaim/): one
// in-process cache with a test clock, fake Evictor and RequeueNudger that record their calls, an
// ExtenderService (for Filter), a controller over them, and the seed clusters the tests load.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "extender/embedded/embedded_binder.h"
#include "extender/reclaim/reclaim_controller.h"
#include "extender/verbs/extender_service.h"
#include "tests/support/builders.h"

namespace capext::reclaim_testing {

using testing::CpuList;
using testing::kGi;
using testing::MakeNode;
using testing::MakePod;
using testing::MakePriorityClass;
using testing::MakeQuota;

inline constexpr int64_t kStartMs = 1'800'000'000'000;

// Records every eviction; deletes the victim from the cache unless told to keep it (a pod in its
// grace period) or to refuse it (the API server answered 429 for a PDB).
class FakeEvictor final : public Evictor {
 public:
  explicit FakeEvictor(SchedulerCache* cache) : cache_(cache) {}
  EvictOutcome Evict(const Pod& victim, const std::string& /*reason*/) override {
    calls.push_back(victim.Key());
    if (on_evict) on_evict();
    if (refuse.count(victim.Key()) != 0) {
      return {false, true, "Cannot evict pod: PDB", retry_after_seconds};
    }
    if (fail.count(victim.Key()) != 0) return {false, false, "HTTP 500 InternalError: boom", 0};
    if (delete_victims) {
      cache_->Write([&](ClusterState& state) {
        state.DeletePod(victim.uid);
        return 0;
      });
    }
    return {true, false, ""};
  }
  std::vector<std::string> calls;
  std::set<std::string> refuse;  // "ns/name" answered with refused_by_pdb
  std::set<std::string> fail;    // "ns/name" answered with a server error
  int retry_after_seconds = 0;   // the Retry-After of those refusals
  bool delete_victims = true;
  std::function<void()> on_evict;  // called on each eviction, before its answer

 private:
  SchedulerCache* cache_;
};

class FakeNudger final : public RequeueNudger {
 public:
  bool Nudge(const Pod& pod) override {
    calls.push_back(pod.Key());
    return true;
  }
  std::vector<std::string> calls;
};

// Records every Event write; answers as `code` says (kOk by default). Created Events are kept
// by name with their series count, as the API server would hold them.
class RecordingEventSink : public EventSink {
 public:
  struct Stored {
    EventObject event;
    int32_t count = 1;  // series.count, 1 while there is no series
  };
  EventWriteResult Create(const EventObject& event) override {
    creates.push_back(event);
    if (next != EventWriteCode::kOk) return {next, "injected"};
    stored[event.name] = {event, event.series_count >= 2 ? event.series_count : 1};
    return {};
  }
  EventWriteResult PatchSeries(const std::string& ns, const std::string& name, int32_t count,
                               int64_t last_observed_us) override {
    patches.push_back({ns, name, count, last_observed_us});
    if (next != EventWriteCode::kOk) return {next, "injected"};
    auto it = stored.find(name);
    if (it == stored.end()) return {EventWriteCode::kNotFound, "not found"};
    it->second.count = count;
    return {};
  }
  struct Patch {
    std::string ns, name;
    int32_t count;
    int64_t last_observed_us;
  };
  std::vector<EventObject> creates;
  std::vector<Patch> patches;
  std::map<std::string, Stored> stored;  // by Event name
  EventWriteCode next = EventWriteCode::kOk;
};

// A cache, the fakes, a service (for Filter) and a controller over them.
struct Harness {
  explicit Harness(ReclaimControllerOptions options = {},
                   QuotaSemantics semantics = QuotaSemantics::kCapacityExtender)
      : cache(semantics, {}, [this] { return now.load(); }),
        evictor(&cache),
        binder(&cache),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, PriorityThenStartTimeOrder(),
                &binder, ServiceOptions{}) {
    cache.set_ready(true);
    controller = std::make_unique<ReclaimController>(&cache, &metrics, service.victim_order(),
                                                     &evictor, &nudger, options);
  }
  void Add(const Pod& pod) {
    cache.Write([&](ClusterState& s) {
      s.UpsertPod(pod);
      return 0;
    });
  }
  const Nomination* OurNomination(const std::string& uid) {
    nomination_copy = cache.Read([&](const ClusterState& s) {
      const Nomination* n = s.FindOurNomination(uid);
      return n ? std::optional<Nomination>(*n) : std::nullopt;
    });
    return nomination_copy ? &*nomination_copy : nullptr;
  }
  bool Exists(const std::string& uid) {
    return cache.Read([&](const ClusterState& s) { return s.FindPod(uid) != nullptr; });
  }
  // Attaches an EventRecorder writing to `sink` (REQUIRES: before any RunOnce).
  void RecordEvents(EventRecorderOptions options = {}) {
    recorder = std::make_unique<EventRecorder>(options);
    controller->RecordEvents(recorder.get(), &sink);
  }
  std::optional<PendingPodRecord> Verdict(const std::string& uid) {
    return controller->board().Find(uid);
  }

  std::atomic<int64_t> now{kStartMs};
  Metrics metrics;
  SchedulerCache cache;
  FakeEvictor evictor;
  FakeNudger nudger;
  EmbeddedBinder binder;
  ExtenderService service;
  RecordingEventSink sink;
  std::unique_ptr<EventRecorder> recorder;
  std::unique_ptr<ReclaimController> controller;
  std::optional<Nomination> nomination_copy;
};

// seed-002-borrow-and-reclaim after events 0-4, and job-2 (event 5) pending in eq2.
inline void LoadSeed002(Harness& h, bool job2_never_preempts = false) {
  h.cache.Write([&](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 8000, 32 * kGi));
    s.UpsertNode(MakeNode("n2", 8000, 32 * kGi));
    Node master = MakeNode("master", 8000, 32 * kGi);
    master.labels.clear();
    master.taints.push_back({"node-role.kubernetes.io/control-plane", "", "NoSchedule"});
    s.UpsertNode(master);
    s.UpsertPriorityClass(MakePriorityClass("priority-class-for-notebook", 1'000'000, false,
                                            PreemptionPolicy::kNever));
    s.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(10000)));
    s.UpsertQuota(MakeQuota("eq2", CpuList(12000), CpuList(14000)));
    const int64_t t0 = kStartMs - 600'000;
    auto running = [&](const char* ns, const char* name, int64_t cpu, const char* node,
                       int64_t since, const char* priority_class = "") {
      s.UpsertPod(MakePod(ns, name)
                      .Uid(std::string("u-") + name)
                      .Cpu(cpu)
                      .PriorityClassName(priority_class)
                      .BoundTo(node)
                      .Created(t0 + since)
                      .Started(t0 + since));
    };
    running("eq1", "job-a", 2000, "n1", 0);
    running("eq1", "job-b", 2000, "n2", 1000);
    running("eq2", "job-1", 3000, "n1", 2000);
    running("eq1", "nb-a", 2000, "n1", 60'000, "priority-class-for-notebook");
    running("eq1", "nb-b", 2000, "n2", 61'000, "priority-class-for-notebook");
    auto job2 = MakePod("eq2", "job-2").Uid("u-job-2").Cpu(5000).Created(t0 + 120'000);
    if (job2_never_preempts) job2.PreemptionNever();
    s.UpsertPod(job2);
    return 0;
  });
}

// Two 8-cpu nodes filled by the borrower eq1 {min 4, max 16} with four 4-cpu pods (a1, a3 on n1;
// a2, a4 on n2); eq2 {min 12, max 16} has `pending` 4-cpu pods waiting, each entitled to its room.
// For p1 the candidates are n1 (victim a3) and n2 (victim a4); the candidate order picks n2 (latest
// start).
inline void LoadTwoReclaims(Harness& h, int pending) {
  h.cache.Write([&](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 8000, 32 * kGi));
    s.UpsertNode(MakeNode("n2", 8000, 32 * kGi));
    s.UpsertQuota(MakeQuota("eq1", CpuList(4000), CpuList(16000)));
    s.UpsertQuota(MakeQuota("eq2", CpuList(12000), CpuList(16000)));
    const int64_t t0 = kStartMs - 600'000;
    const char* nodes[] = {"n1", "n2", "n1", "n2"};
    for (int i = 0; i < 4; ++i) {
      const int64_t start = t0 + 1000 * (i + 1);
      s.UpsertPod(MakePod("eq1", fmt::format("a{}", i + 1))
                      .Cpu(4000)
                      .BoundTo(nodes[i])
                      .Created(start)
                      .Started(start));
    }
    for (int i = 0; i < pending; ++i) {
      s.UpsertPod(MakePod("eq2", fmt::format("p{}", i + 1)).Cpu(4000).Created(t0 + 10'000 + i));
    }
    return 0;
  });
}

// The pods a reclaim pass planned, by key.
using Keys = std::set<std::string>;

inline Keys Planned(Harness& h) {
  const auto& planned = h.controller->last_pass().planned;
  return {planned.begin(), planned.end()};
}

// Runs one pass a second later and returns the pods it planned.
inline Keys Pass(Harness& h) {
  h.now += 1000;
  h.controller->RunOnce();
  return Planned(h);
}

// Changes the cache's state under its write lock.
template <typename F>
void Change(Harness& h, F&& f) {
  h.cache.Write([&](ClusterState& s) {
    f(s);
    return 0;
  });
}

}  // namespace capext::reclaim_testing
