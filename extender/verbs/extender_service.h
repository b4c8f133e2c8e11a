// ExtenderService: the extender verbs (filter, prioritize, preempt, bind) and the read-only views
// (/quotas, /explain) on top of the SchedulerCache. Every verb is decode -> core -> encode: the
// request is read by extender/wire/, the decision is a core function over the cluster state
// (core/placement.h, core/preemption.h, core/node_score.h), the answer is written by
// extender/wire/. Malformed input is a 400 with {"error": "..."}.
// Thread-safety: every method may be called concurrently from many threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/fair_victim_eligibility.h"
#include "core/node_score.h"
#include "core/victim_selection.h"
#include "extender/http/message.h"
#include "extender/metrics.h"
#include "extender/pod_binder.h"
#include "extender/scheduler_cache.h"
#include "extender/verbs/bind_flights.h"
#include "extender/wire/extender_wire.h"

namespace capext {

struct ServiceOptions {
  int64_t reservation_ttl_ms = 60'000;
  // reserveAt: filter — /filter holds a passing pod's quota (without a node) for
  // reservation_ttl_ms, instead of /bind reserving it
  // (docs/capacity-semantics.md#6-accounting-used-reservations-nominations, "Or at /filter").
  bool reserve_at_filter = false;
  bool ignore_not_ready = false;
  // How long filter mode's group holds last when the PodGroup sets no timeout (config
  // gangScheduleTimeout; docs/workloads.md#4-filter-mode).
  int64_t gang_schedule_timeout_ms = 120'000;
  // No Binding is sent later than this after its /bind arrived (bindDeadline).
  std::chrono::milliseconds bind_deadline{4000};
  // Binds reserved and waiting for their Binding's end, at most (maxBindsInFlight).
  std::size_t max_binds_in_flight = 2048;
  // fairSharing, fairShareMinRunTime: /explain's plan searches as the reclaim controller does
  // (FairReclaimOptionsFrom in extender/serve_options.h; now_ms is set per request).
  FairReclaimOptions fair_reclaim;
};

// Where a /bind came from, as the HTTP server saw it.
struct BindArrival {
  // The request's first byte; its deadline is received + bind_deadline.
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
  std::string client;        // "ip:port" of the caller, logged with the Binding it causes
  bool client_gone = false;  // the caller had closed the connection: it waits for no answer
};

class ExtenderService {
 public:
  ExtenderService(SchedulerCache* cache, Metrics* metrics, NodeScoring scoring,
                  const VictimOrder& victim_order, PodBinder* binder, ServiceOptions options);

  http::Response Filter(std::string& body);
  http::Response Prioritize(std::string& body);
  http::Response Preempt(std::string& body);
  // Answers through `respond`, possibly later from another thread (the binder's completion, or
  // the bind timer thread for a joined retry). A bind whose caller is gone does nothing.
  void Bind(std::string& body, http::Responder respond, BindArrival arrival = {});
  http::Response Quotas() const;
  http::Response Explain(std::string& body);
  // Quota gauges in the Prometheus text format (used, min, max per namespace and resource).
  std::string QuotaGauges() const;

  const VictimOrder& victim_order() const { return victim_order_; }
  SchedulerCache& cache() { return *cache_; }

 private:
  // Adds or refreshes a pending pod seen in a request, so /bind can find its requests later.
  void LearnPod(const Pod& pod);
  // Filter mode: holds the need of the pod's starting group once one of its members passed.
  void HoldGroupNeed(const Pod& pod);
  // reserveAt: filter. Holds the passing pod's quota under the write lock after checking its
  // admission again there; the refusal when another pod took the room in between.
  Status HoldPassingPod(const Pod& pod);
  // reserveAt: filter. Ends the pod's own hold from an earlier attempt (it did not pass now).
  void ReleasePodHold(const Pod& pod);
  // What CheckAndReserve decided about one /bind.
  struct BindStep {
    enum Kind { kAnswer, kJoined, kReserved } kind = kAnswer;
    Status status;        // kAnswer: ok (success, nothing to do) or the refusal
    std::string outcome;  // kAnswer: the decision label (capacity_extender_decisions_total)
  };
  using BindClock = std::chrono::steady_clock;
  // A decoded /bind, from its arrival or again after a flight it joined failed.
  void BindDecoded(ExtenderBindingArgs args, BindClock::time_point received,
                   BindClock::time_point deadline, std::string client, http::Responder respond);
  // Under the cache's lock: the bind check, then the reservation (see bind_verb.cpp). For
  // kJoined it has taken `respond` into the flight's waiters.
  BindStep CheckAndReserve(const ExtenderBindingArgs& args, BindClock::time_point received,
                           BindClock::time_point deadline, const std::string& client,
                           http::Responder& respond, BindRequest* request);
  void FinishBind(const BindRequest& request, const BindOutcome& outcome,
                  const http::Responder& respond);
  // Answers a retry that waited for `request`'s flight, now landed with `outcome`.
  void ResumeWaiter(BindFlights::Waiter waiter, const BindRequest& request,
                    const BindOutcome& outcome);
  // The bind timer thread: a joined retry's deadline came before its flight landed.
  void WaiterDeadline(BindFlights::Waiter waiter, const BindFlights::FlightView& flight);
  void AnswerBind(const ExtenderBindingArgs& args, const http::Responder& respond,
                  const std::string& outcome, const Status& status);

  SchedulerCache* cache_;
  Metrics* metrics_;
  NodeScoring scoring_;
  const VictimOrder& victim_order_;
  PodBinder* binder_;
  ServiceOptions options_;
  BindFlights flights_;
};

// The pod a verb decides about: the cache's normalised copy while it holds the pod pending —
// the object /bind and the reclaim controller decide on too — else the request's pod,
// normalised. Valid while the state is not modified.
class DecisionPod {
 public:
  DecisionPod(const ClusterState& state, const Pod& wire_pod);
  const NormalizedPod& get() const { return *pod_; }
  const NormalizedPod& operator*() const { return *pod_; }
  const NormalizedPod* operator->() const { return pod_; }

 private:
  std::optional<NormalizedPod> owned_;
  const NormalizedPod* pod_ = nullptr;
};

// A 400 answer for a malformed request of `verb`.
http::Response BadRequest(std::string_view verb, const Status& status);

}  // namespace capext
