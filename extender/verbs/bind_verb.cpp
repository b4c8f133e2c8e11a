// POST /bind (docs/capacity-semantics.md#6-accounting-used-reservations-nominations,
// docs/architecture.md#how-a-bind-travels): decode ExtenderBindingArgs; under one exclusive lock,
// look the pod up once and either answer at once (bound, refused, past the deadline, over
// maxBindsInFlight), join the pod's flight in the air, or ask core's CheckBind (exactly /filter's
// verdict for that node) and, when it passes, reserve the pod's request (which also releases our
// reclaim's nomination of it: the reservation now holds that room) and open the pod's flight; then
// bind through the PodBinder, which never sends the Binding after the deadline. When the Binding
// ends, the reservation is kept (bound, or sent and unanswered) or released (never made) before
// anyone is answered; then the request and the retries that joined it are answered. Idempotent per
// pod.
#include <fmt/format.h>

#include "core/placement.h"
#include "extender/log.h"
#include "extender/verbs/extender_service.h"
#include "extender/wire/verb_results.h"

namespace capext {
namespace {

using Clock = std::chrono::steady_clock;

http::Response BindingResult(std::string_view error) {
  return {200, "application/json", EncodeBindingResult(error), {}};
}

int64_t MsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

// The pod a bind names: by uid, else by namespace and name (a pod the extender learnt without
// its uid), looked up once.
const NormalizedPod* FindBindTarget(const ClusterState& state, const ExtenderBindingArgs& args) {
  if (!args.pod_uid.empty()) {
    if (const NormalizedPod* pod = state.FindPod(args.pod_uid)) return pod;
  }
  return state.FindPodByName(args.pod_namespace, args.pod_name);
}

std::string PodOf(const ExtenderBindingArgs& args) {
  return args.pod_namespace + "/" + args.pod_name;
}

}  // namespace

ExtenderService::BindStep ExtenderService::CheckAndReserve(
    const ExtenderBindingArgs& args, Clock::time_point received, Clock::time_point deadline,
    const std::string& client, http::Responder& respond, BindRequest* request) {
  const int64_t now_ms = cache_->NowMs();
  const Clock::time_point now = Clock::now();
  const auto answer = [](std::string outcome, Status status) {
    return BindStep{BindStep::kAnswer, std::move(status), std::move(outcome)};
  };
  return cache_->Write([&](ClusterState& state) -> BindStep {
    const NormalizedPod* pod = FindBindTarget(state, args);
    if (pod == nullptr) {
      return answer("refused", Status::NotFound(fmt::format(
                                   "pod {}/{} (uid {}) is unknown to the extender: it has not "
                                   "passed /filter and is not in the cluster cache",
                                   args.pod_namespace, args.pod_name, args.pod_uid)));
    }
    const std::string& key = pod->store_key();
    if (pod->IsBound()) {
      flights_.ForgetUnanswered(key);
      if (pod->node_name == args.node) return answer("already-bound", {});  // idempotent
      return answer("refused", Status::Conflict(fmt::format("pod {} is already bound to {}",
                                                            pod->Key(), pod->node_name)));
    }
    // kube-scheduler's retry of a pod whose Binding is still in the air: wait for its outcome.
    if (flights_.Find(key)) {
      if (now >= deadline) {
        return answer("expired",
                      Status::Unavailable(fmt::format(
                          "bind of pod {} arrived {} ms ago, past its bindDeadline of "
                          "{} ms, while an earlier bind of it is still in flight",
                          pod->Key(), MsBetween(received, now), options_.bind_deadline.count())));
      }
      flights_.Join(key, BindFlights::Waiter{args, received, deadline, client, std::move(respond)});
      return BindStep{BindStep::kJoined, {}, "joined"};
    }
    const Reservation* reservation = state.FindReservation(key);
    if (auto unanswered = flights_.FindUnanswered(key)) {
      if (reservation != nullptr) {
        return answer(
            "refused",
            Status::Unavailable(fmt::format(
                "the Binding of pod {} to {} was sent {} ms ago and got no answer ({}): it may "
                "have been made, so the pod keeps its reservation and is not bound again until "
                "the watch shows it or the reservation expires (reservationTTL {} ms)",
                pod->Key(), unanswered->node, MsBetween(unanswered->at, now), unanswered->error,
                options_.reservation_ttl_ms)));
      }
      flights_.ForgetUnanswered(key);  // settled: the reservation expired
    }
    if (reservation != nullptr) {
      // Its Binding succeeded; the watch has not shown the pod bound yet.
      if (reservation->node == args.node) return answer("already-bound", {});
      return answer(
          "refused",
          Status::Conflict(fmt::format(
              "pod {} was bound to {} by an earlier bind (the watch has not shown it yet)",
              pod->Key(), reservation->node)));
    }
    if (now >= deadline) {
      return answer("expired",
                    Status::Unavailable(fmt::format(
                        "bind of pod {} not started: it arrived {} ms ago, past its "
                        "bindDeadline of {} ms",
                        pod->Key(), MsBetween(received, now), options_.bind_deadline.count())));
    }
    if (const std::size_t in_flight = flights_.Size(); in_flight >= options_.max_binds_in_flight) {
      return answer("refused-at-bound",
                    Status::Unavailable(fmt::format(
                        "{} binds already wait for the API server (maxBindsInFlight {}): pod {} "
                        "not reserved; retry later",
                        in_flight, options_.max_binds_in_flight, pod->Key())));
    }
    if (Status verdict = CheckBind(state, *pod, args.node); !verdict.ok()) {
      return answer("refused", std::move(verdict));
    }
    *request = BindRequest{pod->ns, pod->name, pod->uid, args.node, key, deadline, client};
    state.Reserve(key, args.node, now_ms, now_ms + options_.reservation_ttl_ms);
    flights_.Open(key, args.node, now);
    return BindStep{BindStep::kReserved, {}, ""};
  });
}

void ExtenderService::AnswerBind(const ExtenderBindingArgs& args, const http::Responder& respond,
                                 const std::string& outcome, const Status& status) {
  metrics_->CountDecision("bind", outcome);
  if (outcome == "refused-at-bound")
    metrics_->Count("capacity_extender_binds_refused_at_bound_total");
  if (outcome == "expired") metrics_->Count("capacity_extender_binds_expired_total");
  const bool quiet = status.ok() || outcome == "refused-at-bound" || outcome == "expired" ||
                     outcome == "abandoned";
  Log(quiet ? LogLevel::kDebug : LogLevel::kInfo, "bind",
      {{"pod", PodOf(args)},
       {"node", args.node},
       {"outcome", outcome},
       {"code", std::string(StatusCodeName(status.code()))},
       {"reason", status.message()}});
  respond(BindingResult(status.ok() ? "" : "capacity-extender: " + status.message()));
}

void ExtenderService::Bind(std::string& body, http::Responder respond, BindArrival arrival) {
  rapidjson::Document doc;
  ExtenderBindingArgs args;
  Status s = ParseRequestBody(body, &doc);
  if (s.ok()) s = DecodeExtenderBindingArgs(doc, &args);
  if (!s.ok()) {
    respond(BadRequest("bind", s));
    return;
  }
  if (arrival.client_gone) {
    // kube-scheduler stopped waiting (its httpTimeout) before we read the request: a Binding
    // made now would answer nobody, and its retry may already be here.
    metrics_->Count("capacity_extender_binds_abandoned_total");
    return AnswerBind(
        args, respond, "abandoned",
        Status::Unavailable(fmt::format(
            "bind of pod {} to {} not started: its caller ({}) closed the "
            "connection {} ms after sending it, before it was read",
            PodOf(args), args.node, arrival.client, MsBetween(arrival.received, Clock::now()))));
  }
  BindDecoded(std::move(args), arrival.received, arrival.received + options_.bind_deadline,
              std::move(arrival.client), std::move(respond));
}

void ExtenderService::BindDecoded(ExtenderBindingArgs args, Clock::time_point received,
                                  Clock::time_point deadline, std::string client,
                                  http::Responder respond) {
  BindRequest request;
  const BindStep step = CheckAndReserve(args, received, deadline, client, respond, &request);
  if (step.kind == BindStep::kJoined) {
    metrics_->Count("capacity_extender_binds_joined_total");
    return;  // answered when the flight lands, or at the deadline
  }
  if (step.kind == BindStep::kAnswer) return AnswerBind(args, respond, step.outcome, step.status);
  metrics_->AddGauge("capacity_extender_binds_in_flight", 1);
  // The completion runs inline (embedded) or on the Binding client's thread (live): it takes the
  // cache lock briefly and hands the responses to the HTTP server.
  binder_->Bind(request, [this, request, respond = std::move(respond)](BindOutcome outcome) {
    FinishBind(request, outcome, respond);
  });
}

void ExtenderService::FinishBind(const BindRequest& request, const BindOutcome& outcome,
                                 const http::Responder& respond) {
  const Clock::time_point now = Clock::now();
  std::vector<BindFlights::Waiter> waiters = cache_->Write([&](ClusterState& state) {
    if (outcome.may_have_bound) {
      // Sent, never answered: the pod may be bound. Its reservation stays until the watch shows
      // the pod or the reservation expires; meanwhile its binds are refused (CheckAndReserve).
      flights_.MarkUnanswered(request.key, {request.node, now, outcome.error});
      flights_.PruneUnanswered(
          [&](const std::string& key) { return state.FindReservation(key) != nullptr; });
    } else if (!outcome.ok) {
      state.ReleaseReservation(request.key);  // never made: no usage left behind
    }
    return flights_.Land(request.key);
  });
  metrics_->AddGauge("capacity_extender_binds_in_flight", -1);
  metrics_->Observe("capacity_extender_bind_queue_wait_seconds",
                    std::chrono::duration<double>(outcome.queued).count());
  std::string label = outcome.ok                ? "bound"
                      : outcome.deadline_passed ? "expired"
                      : outcome.may_have_bound  ? "unanswered"
                                                : "bind-failed";
  if (outcome.deadline_passed) metrics_->Count("capacity_extender_binds_expired_total");
  if (outcome.may_have_bound) metrics_->Count("capacity_extender_binds_unanswered_total");
  metrics_->CountDecision("bind", label);
  Log(outcome.ok || outcome.deadline_passed ? LogLevel::kDebug : LogLevel::kWarn, "bind",
      {{"pod", request.ns + "/" + request.name},
       {"node", request.node},
       {"outcome", label},
       {"queued_ms", std::to_string(outcome.queued.count() / 1000)},
       // steady_clock (CLOCK_MONOTONIC) milliseconds: lines the bind up with other processes'
       // records of the same Binding on this machine (the slow-bind test reads it).
       {"deadline_monotonic_ms", fmt::format("{:.3f}", std::chrono::duration<double, std::milli>(
                                                           request.deadline.time_since_epoch())
                                                           .count())},
       {"client", request.client},
       {"reason", outcome.error}});
  std::string error;
  if (outcome.deadline_passed) {
    error = fmt::format(
        "capacity-extender: the Binding of pod {}/{} was not sent: its bindDeadline of {} ms "
        "passed while it waited {} ms for a connection to the API server; the reservation is "
        "released",
        request.ns, request.name, options_.bind_deadline.count(), outcome.queued.count() / 1000);
  } else if (!outcome.ok) {
    error = "capacity-extender: binding failed: " + outcome.error;
  }
  respond(BindingResult(error));
  for (auto& waiter : waiters)
    ResumeWaiter(std::move(waiter), request, outcome);
}

void ExtenderService::ResumeWaiter(BindFlights::Waiter waiter, const BindRequest& request,
                                   const BindOutcome& outcome) {
  const std::string pod = request.ns + "/" + request.name;
  if (outcome.ok) {
    if (waiter.args.node == request.node) {
      return AnswerBind(waiter.args, waiter.respond, "joined-bound", {});
    }
    return AnswerBind(waiter.args, waiter.respond, "refused",
                      Status::Conflict(fmt::format(
                          "pod {} was bound to {} by an earlier bind still in flight when this "
                          "one arrived",
                          pod, request.node)));
  }
  if (outcome.may_have_bound) {
    return AnswerBind(waiter.args, waiter.respond, "refused",
                      Status::Unavailable(fmt::format(
                          "the Binding of pod {} to {}, sent for an earlier bind, got no answer "
                          "({}): it may have been made; the pod is not bound again until the "
                          "watch shows it or its reservation expires",
                          pod, request.node, outcome.error)));
  }
  // The earlier Binding was never made: this request runs its own, within its own deadline.
  BindDecoded(std::move(waiter.args), waiter.received, waiter.deadline, std::move(waiter.client),
              std::move(waiter.respond));
}

void ExtenderService::WaiterDeadline(BindFlights::Waiter waiter,
                                     const BindFlights::FlightView& flight) {
  const Clock::time_point now = Clock::now();
  AnswerBind(waiter.args, waiter.respond, "joined-expired",
             Status::Unavailable(fmt::format(
                 "the Binding of pod {} to {}, started {} ms ago for an earlier bind, is still "
                 "unanswered at this bind's deadline ({} ms after it arrived); retry later",
                 PodOf(waiter.args), flight.node, MsBetween(flight.opened, now),
                 MsBetween(waiter.received, now))));
}

}  // namespace capext
