#include "extender/routes.h"

#include <atomic>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "config/admission_review.h"
#include "config/pod_mutation.h"
#include "extender/log.h"
#include "extender/ui_page.h"
#include "extender/verbs/pending_view.h"
#include "extender/wire/json_out.h"

namespace capext {
namespace {

std::atomic<uint64_t> g_request_id{0};

http::Response JsonError(int status, const std::string& message) {
  return {status, "application/json", ErrorJson(message), {}};
}

// {"status":"ready"}, with a "note" when there is one (no ElasticQuota API, allowed).
std::string ReadyBody(const std::string& note) {
  JsonOut w;
  w.StartObject();
  w.Key("status"), w.String("ready");
  if (!note.empty()) w.Key("note"), w.Text(note);
  w.EndObject();
  return w.Take();
}

http::Response Admit(ExtenderService* service, const http::Request& request) {
  if (!request.tls) {
    return JsonError(403,
                     "admission webhook requests must arrive over HTTPS (configure "
                     "webhookPort with webhookTLSCertFile/webhookTLSKeyFile)");
  }
  AdmissionClusterView view = service->cache().Read([](const ClusterState& state) {
    AdmissionClusterView v;
    for (const auto& [ns, q] : state.quota_set().quotas())
      v.existing_quotas.push_back(q);
    for (const auto& [name, node] : state.nodes())
      v.total_allocatable.Add(node.allocatable);
    return v;
  });
  std::string response;
  AdmissionDecision decision;
  Status s = ReviewElasticQuotaAdmission(request.body, view, &response, &decision);
  if (!s.ok()) return JsonError(400, "admit: " + s.message());
  Log(LogLevel::kInfo, "admission review",
      {{"allowed", decision.allowed ? "true" : "false"}, {"message", decision.message}});
  return {200, "application/json", std::move(response), {}};
}

// The pod-gating webhook (docs/workloads-live.md#mutate-the-gate-admissionmode-gate). The cache is
// read for one namespace lookup only: the answer is on the pod creation's critical path.
http::Response Mutate(ExtenderService* service, const RouterOptions& options,
                      const http::Request& request) {
  if (!request.tls) {
    return JsonError(403,
                     "admission webhook requests must arrive over HTTPS (configure "
                     "webhookPort with webhookTLSCertFile/webhookTLSKeyFile)");
  }
  PodMutationOptions mutation;
  mutation.scheduler_names = options.gate_scheduler_names;
  mutation.gating = options.gating != nullptr && options.gating->load();
  mutation.governed = [service](std::string_view ns) {
    return service->cache().Read(
        [ns](const ClusterState& state) { return state.quota_set().QuotaFor(ns) != nullptr; });
  };
  mutation.admit_at_creation = options.admit_at_creation;
  mutation.decode = options.decode;
  std::string response;
  PodMutationDecision decision;
  Status s = ReviewPodMutation(request.body, mutation, &response, &decision);
  if (!s.ok()) return JsonError(400, "mutate: " + s.message());
  if (LogEnabled(LogLevel::kDebug)) {
    Log(LogLevel::kDebug, "pod mutation",
        {{"pod", decision.pod},
         {"gated", decision.gated ? "true" : "false"},
         {"admitted", decision.admitted ? "true" : "false"},
         {"why_not", decision.why_not}});
  }
  return {200, "application/json", std::move(response), {}};
}

}  // namespace

http::Handler MakeRouter(ExtenderService* service, Metrics* metrics, RouterOptions options) {
  return [service, metrics, options](http::Request&& request, http::Responder respond) {
    const auto start = std::chrono::steady_clock::now();
    const uint64_t id = ++g_request_id;
    std::string path = request.target.substr(0, request.target.find('?'));
    // The prefix matches whole path segments only: /scheduler/filter, never /schedulerfilter.
    if (!options.path_prefix.empty() && path.starts_with(options.path_prefix) &&
        (path.size() == options.path_prefix.size() || path[options.path_prefix.size()] == '/')) {
      path = path.substr(options.path_prefix.size());
      if (path.empty()) path = "/";
    }
    // Metrics label: one of our paths, or "unknown" (a label per scanned path would grow without
    // bound, and raw paths are not safe label values).
    static const char* const kKnown[] = {"filter",  "prioritize", "preempt", "bind",    "explain",
                                         "admit",   "mutate",     "quotas",  "pending", "ui",
                                         "healthz", "readyz",     "metrics"};
    std::string verb = "unknown";
    for (const char* known : kKnown) {
      if (path.size() > 1 && path.compare(1, std::string::npos, known) == 0) verb = known;
    }
    // `respond` is moved in, not copied: copying a Responder allocates (its target holds a
    // shared_ptr, too big for std::function's inline storage) on every request.
    auto finish = [metrics, start, id, verb,
                   respond = std::move(respond)](http::Response response) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      metrics->ObserveRequest(verb, response.status, seconds);
      // A 503 from /readyz during the first sync is expected (kubelet probes it): debug only.
      const bool expected = verb == "readyz" && response.status == 503;
      if ((response.status >= 400 && !expected) || LogEnabled(LogLevel::kDebug)) {
        Log(expected                 ? LogLevel::kDebug
            : response.status >= 500 ? LogLevel::kError
            : response.status >= 400 ? LogLevel::kWarn
                                     : LogLevel::kDebug,
            "request",
            {{"id", std::to_string(id)},
             {"verb", verb},
             {"status", std::to_string(response.status)},
             {"duration_us", std::to_string(static_cast<int64_t>(seconds * 1e6))},
             {"error", response.status >= 400 ? response.body : ""}});
      }
      respond(std::move(response));
    };

    const bool webhook = options.listener == Listener::kWebhook;
    const bool get = request.method == "GET" || request.method == "HEAD";
    const bool post = request.method == "POST";
    auto method_not_allowed = [&](const char* allowed) {
      http::Response r = JsonError(
          405, fmt::format("{} {}: method not allowed (use {})", request.method, path, allowed));
      r.headers.emplace_back("Allow", allowed);
      finish(std::move(r));
    };

    if (path == "/healthz") {
      if (!get) return method_not_allowed("GET");
      return finish({200, "application/json", R"({"status":"ok"})", {}});
    }
    if (path == "/readyz") {
      if (!get) return method_not_allowed("GET");
      // Asked now: the first sync, the ElasticQuota API, and each resource's sync state. Both
      // replicas are ready once synced; the body says which one acts.
      const SchedulerCache::ReadinessVerdict verdict = service->cache().Readiness();
      const std::string leader =
          options.leadership != nullptr
              ? ",\"leader\":" + LeadershipJson(options.leadership->Report()) + "}"
              : "}";
      http::Response r =
          verdict.ready ? http::Response{200, "application/json", ReadyBody(verdict.reason), {}}
                        : JsonError(503, verdict.reason);
      r.body.pop_back();  // {...} -> {...,"leader":{...}}
      r.body += leader;
      return finish(std::move(r));
    }
    if (path == "/metrics") {
      if (!get) return method_not_allowed("GET");
      std::string body = metrics->Render() + service->QuotaGauges() +
                         CacheSyncGauges(service->cache().SyncReport());
      if (options.leadership != nullptr) body += LeadershipMetrics(options.leadership->Report());
      return finish({200, "text/plain; version=0.0.4", std::move(body), {}});
    }
    if (path == "/admit") {
      if (!post) return method_not_allowed("POST");
      return finish(Admit(service, request));
    }
    if (path == "/mutate") {
      if (!post) return method_not_allowed("POST");
      return finish(Mutate(service, options, request));
    }
    if (!webhook) {
      if (path == "/quotas") {
        if (!get) return method_not_allowed("GET");
        return finish(service->Quotas());
      }
      if (path == "/pending") {
        if (!get) return method_not_allowed("GET");
        static const PendingBoard kNone;
        return finish(
            PendingView(options.pending != nullptr ? *options.pending : kNone,
                        service->cache().Readiness().ready, service->cache().NowMs(),
                        options.gated ? options.gated() : std::vector<PendingPodRecord>{}));
      }
      if (path == "/ui") {
        if (!get) return method_not_allowed("GET");
        // Read-only and self-contained: no script or style from anywhere else may run in it.
        return finish({200,
                       "text/html; charset=utf-8",
                       kUiPageHtml,
                       {{"Content-Security-Policy",
                         "default-src 'none'; script-src 'unsafe-inline'; style-src "
                         "'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; "
                         "form-action 'none'; frame-ancestors 'none'"},
                        {"Cache-Control", "no-store"}}});
      }
      if (path == "/filter" || path == "/prioritize" || path == "/preempt" || path == "/bind" ||
          path == "/explain") {
        if (!post) return method_not_allowed("POST");
        if (path == "/filter") {
          http::Response answer = service->Filter(request.body);
          if (options.filter_pacer == nullptr) return finish(std::move(answer));
          return options.filter_pacer->Answer(std::move(answer), std::move(finish));
        }
        if (path == "/prioritize") return finish(service->Prioritize(request.body));
        if (path == "/preempt") return finish(service->Preempt(request.body));
        if (path == "/explain") return finish(service->Explain(request.body));
        // A request made in process (tests) has no arrival stamp: it arrives now.
        const auto received =
            request.received == std::chrono::steady_clock::time_point{} ? start : request.received;
        return service->Bind(request.body, finish,
                             {received, std::move(request.peer), request.client_gone});
      }
    }
    finish(JsonError(404,
                     fmt::format("unknown path {} (verbs: POST filter, prioritize, preempt, "
                                 "bind, explain, admit, mutate; GET quotas, pending, ui, healthz, "
                                 "readyz, metrics)",
                                 path)));
  };
}

}  // namespace capext
