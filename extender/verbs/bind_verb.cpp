// POST /bind (capacity-semantics 2): decode ExtenderBindingArgs; under one exclusive lock, look
// the pod up once and ask core's CheckBind (exactly /filter's verdict for that node) and, when it
// passes, reserve the pod's request (which also releases our reclaim's nomination of it: the
// reservation now holds that room); then bind through the PodBinder; a failed binding releases
// the reservation before answering. Idempotent per pod.
#include <fmt/format.h>

#include "core/placement.h"
#include "extender/log.h"
#include "extender/verbs/extender_service.h"
#include "extender/wire/verb_results.h"

namespace capext {
namespace {

http::Response BindingResult(std::string_view error) {
  return {200, "application/json", EncodeBindingResult(error), {}};
}

// The pod a bind names: by uid, else by namespace and name (a pod the extender learnt without
// its uid), looked up once.
const NormalizedPod* FindBindTarget(const ClusterState& state, const ExtenderBindingArgs& args) {
  if (!args.pod_uid.empty()) {
    if (const NormalizedPod* pod = state.FindPod(args.pod_uid)) return pod;
  }
  return state.FindPodByName(args.pod_namespace, args.pod_name);
}

}  // namespace

// Ok with *reserved set when the binding may proceed; ok without it when there is nothing to do
// (already bound there, or bound by an earlier call and awaiting the watch); else the refusal.
Status ExtenderService::CheckAndReserve(const ExtenderBindingArgs& args, BindRequest* request,
                                        bool* reserved) {
  *reserved = false;
  const int64_t now = cache_->NowMs();
  return cache_->Write([&](ClusterState& state) -> Status {
    const NormalizedPod* pod = FindBindTarget(state, args);
    if (pod == nullptr) {
      return Status::NotFound(fmt::format(
          "pod {}/{} (uid {}) is unknown to the extender: it has not passed /filter and is not "
          "in the cluster cache",
          args.pod_namespace, args.pod_name, args.pod_uid));
    }
    const std::string& key = pod->store_key();
    if (pod->IsBound()) {
      if (pod->node_name == args.node) return {};  // already done: idempotent
      return Status::Conflict(
          fmt::format("pod {} is already bound to {}", pod->Key(), pod->node_name));
    }
    {
      std::lock_guard lock(in_flight_mutex_);
      if (binds_in_flight_.count(key) != 0) {
        return Status::Conflict(fmt::format("a bind of pod {} is already in flight", pod->Key()));
      }
    }
    if (const Reservation* r = state.FindReservation(key)) {
      if (r->node == args.node) return {};  // bound by an earlier call, awaiting the watch
      state.ReleaseReservation(key);
    }
    if (Status verdict = CheckBind(state, *pod, args.node); !verdict.ok()) return verdict;
    *request = BindRequest{pod->ns, pod->name, pod->uid, args.node, key};
    state.Reserve(key, args.node, now, now + options_.reservation_ttl_ms);
    {
      std::lock_guard lock(in_flight_mutex_);
      binds_in_flight_.insert(key);
    }
    *reserved = true;
    return {};
  });
}

void ExtenderService::FinishBind(const BindRequest& request, const BindOutcome& outcome) {
  cache_->Write([&](ClusterState& state) {
    if (!outcome.ok) state.ReleaseReservation(request.key);
    std::lock_guard lock(in_flight_mutex_);
    binds_in_flight_.erase(request.key);
  });
}

void ExtenderService::Bind(std::string& body, http::Responder respond) {
  rapidjson::Document doc;
  ExtenderBindingArgs args;
  Status s = ParseRequestBody(body, &doc);
  if (s.ok()) s = DecodeExtenderBindingArgs(doc, &args);
  if (!s.ok()) {
    respond(BadRequest("bind", s));
    return;
  }
  BindRequest request;
  bool reserved = false;
  const Status verdict = CheckAndReserve(args, &request, &reserved);
  if (!verdict.ok() || !reserved) {
    const char* outcome = verdict.ok() ? "already-bound" : "refused";
    metrics_->CountDecision("bind", outcome);
    Log(verdict.ok() ? LogLevel::kDebug : LogLevel::kInfo, "bind",
        {{"pod", args.pod_namespace + "/" + args.pod_name},
         {"node", args.node},
         {"outcome", outcome},
         {"code", std::string(StatusCodeName(verdict.code()))},
         {"reason", verdict.message()}});
    respond(BindingResult(verdict.ok() ? "" : "capacity-extender: " + verdict.message()));
    return;
  }
  // The completion runs inline (embedded) or on the API client's thread (live): it only takes
  // the cache lock briefly and hands the response to the HTTP server.
  binder_->Bind(request, [this, request, respond](BindOutcome outcome) {
    FinishBind(request, outcome);
    metrics_->CountDecision("bind", outcome.ok ? "bound" : "bind-failed");
    Log(outcome.ok ? LogLevel::kInfo : LogLevel::kWarn, "bind",
        {{"pod", request.ns + "/" + request.name},
         {"node", request.node},
         {"outcome", outcome.ok ? "bound" : "bind-failed"},
         {"reason", outcome.error}});
    respond(BindingResult(outcome.ok ? "" : "capacity-extender: binding failed: " + outcome.error));
  });
}

}  // namespace capext
