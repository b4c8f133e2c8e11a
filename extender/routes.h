// Router: the HTTP handler of `serve` (the routing table above the transport: extender/http/ only
// carries Request and Response, and knows no verb). Maps method + path (after the optional path
// prefix that kube-scheduler's urlPrefix adds) to the service, times every request into the
// metrics, logs one line per request, and answers unknown paths and methods with a JSON 404/405.
//
// Two listeners share it: the extender listener (verbs, views, /ui, health) and the webhook
// listener (HTTPS only: /admit, /mutate, health, metrics; the verbs are not exposed beyond
// localhost). POST /admit and /mutate are refused on a plain-HTTP connection: an admission webhook
// must be HTTPS. Thread-safety: the returned handler may be called concurrently.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "config/pod_mutation.h"
#include "extender/filter_pacer.h"
#include "extender/leadership/leadership.h"
#include "extender/reclaim/pending_board.h"
#include "extender/verbs/extender_service.h"

namespace capext {

enum class Listener { kExtender, kWebhook };

struct RouterOptions {
  std::string path_prefix;  // e.g. "/scheduler"; "" = none
  Listener listener = Listener::kExtender;
  // The reclaim controller's verdicts for GET /pending and /ui (nullptr: /pending lists none).
  const PendingBoard* pending = nullptr;
  // Which replica acts, for /readyz and /metrics (nullptr: not reported).
  const Leadership* leadership = nullptr;
  // spec.schedulerName values whose new pods POST /mutate gates (gateSchedulerNames).
  std::vector<std::string> gate_scheduler_names{"default-scheduler"};
  // Whether gate mode is in force (serve decides at start:
  // docs/workloads-live.md#gate-detection-at-start); nullptr or false: /mutate gates nothing.
  const std::atomic<bool>* gating = nullptr;
  // Gate mode's gated pods for GET /pending and /ui (AdmissionLoop::Gated); empty: none.
  std::function<std::vector<PendingPodRecord>()> gated = nullptr;
  // Gate mode's admission at creation for POST /mutate (AdmissionLoop::AdmitAtCreation); empty:
  // every pod /mutate would gate is gated. `decode` decodes the review's pod for it.
  std::function<CreationAdmission(Pod)> admit_at_creation = nullptr;
  DecodeOptions decode{};
  // Paces /filter answers by the Binding queue (live mode); nullptr: every answer goes at once.
  FilterPacer* filter_pacer = nullptr;
};

http::Handler MakeRouter(ExtenderService* service, Metrics* metrics, RouterOptions options);

}  // namespace capext
