// POST /bind (capacity-semantics 2): under one exclusive lock, re-run the checks of 1.1 against
// used + reservations and reserve the pod's request; then bind through the PodBinder; a failed
// bind releases the reservation before answering. Idempotent per pod UID.
#include <fmt/format.h>

#include "core/quota_admission.h"
#include "extender/log.h"
#include "extender/verbs/extender_service.h"

namespace capext {
namespace {

http::Response BindingResult(const std::string& error) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("Error");
  w.String(error.c_str(), static_cast<rapidjson::SizeType>(error.size()));
  w.EndObject();
  return {200, "application/json", std::string(buffer.GetString(), buffer.GetSize()), {}};
}

}  // namespace

// Returns "" with *reserved set when the bind may proceed (or is already done: *reserved false),
// else the refusal reason.
std::string ExtenderService::BindChecked(const ExtenderBindingArgs& args, bool* reserved) {
  *reserved = false;
  const int64_t now = cache_->NowMs();
  return cache_->Write([&](ClusterState& state) -> std::string {
    const Pod* pod = args.pod_uid.empty() ? nullptr : state.FindPod(args.pod_uid);
    if (pod == nullptr) pod = state.FindPodByName(args.pod_namespace, args.pod_name);
    if (pod == nullptr) {
      return fmt::format(
          "capacity-extender: pod {}/{} (uid {}) is unknown to the extender: it has not passed "
          "/filter and is not in the cluster cache",
          args.pod_namespace, args.pod_name, args.pod_uid);
    }
    const std::string key = CacheKey(*pod);
    if (pod->IsBound()) {
      if (pod->node_name == args.node) return "";  // already done: idempotent
      return fmt::format("capacity-extender: pod {} is already bound to {}", pod->Key(),
                         pod->node_name);
    }
    {
      std::lock_guard lock(in_flight_mutex_);
      if (binds_in_flight_.count(key) != 0) {
        return fmt::format("capacity-extender: a bind of pod {} is already in flight", pod->Key());
      }
    }
    if (const Reservation* r = state.FindReservation(key)) {
      if (r->node == args.node) return "";  // bound by an earlier call, awaiting the watch
      state.ReleaseReservation(key);
    }
    AdmissionResult quota = CheckQuota(state, *pod);
    if (!quota.ok()) return "capacity-extender: " + quota.reason;
    state.Reserve(key, args.node, now + options_.reservation_ttl_ms);
    {
      std::lock_guard lock(in_flight_mutex_);
      binds_in_flight_.insert(key);
    }
    *reserved = true;
    return "";
  });
}

void ExtenderService::FinishBind(const BindRequest& request, const BindOutcome& outcome) {
  cache_->Write([&](ClusterState& state) {
    const Pod* pod = state.FindPod(request.uid);
    if (pod == nullptr) pod = state.FindPodByName(request.ns, request.name);
    const std::string key = pod ? CacheKey(*pod) : request.uid;
    if (!outcome.ok) state.ReleaseReservation(key);
    std::lock_guard lock(in_flight_mutex_);
    binds_in_flight_.erase(key);
    return 0;
  });
}

void ExtenderService::Bind(std::string& body, http::Responder respond) {
  rapidjson::Document doc;
  ExtenderBindingArgs args;
  Status s = ParseRequestBody(body, &doc);
  if (s.ok()) s = DecodeExtenderBindingArgs(doc, &args);
  if (!s.ok()) {
    respond({400, "application/json", ErrorJson("bind: " + s.message()), {}});
    return;
  }
  bool reserved = false;
  std::string refusal = BindChecked(args, &reserved);
  if (!refusal.empty() || !reserved) {
    metrics_->CountDecision("bind", refusal.empty() ? "already-bound" : "refused");
    Log(refusal.empty() ? LogLevel::kDebug : LogLevel::kInfo, "bind",
        {{"pod", args.pod_namespace + "/" + args.pod_name},
         {"node", args.node},
         {"outcome", refusal.empty() ? "already-bound" : "refused"},
         {"reason", refusal}});
    respond(BindingResult(refusal));
    return;
  }
  BindRequest request{args.pod_namespace, args.pod_name, args.pod_uid, args.node};
  if (request.uid.empty()) {
    request.uid = cache_->Read([&](const ClusterState& state) {
      const Pod* known = state.FindPodByName(args.pod_namespace, args.pod_name);
      return known ? CacheKey(*known) : std::string();
    });
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
