// capacity-extender serve: builds the cache (embedded snapshot or live API server), the service,
// the reclaim controller and the listeners, then waits for SIGTERM/SIGINT and drains.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iostream>

#include <fmt/format.h>

#include "config/extender_config.h"
#include "config/pod_mutation.h"
#include "extender/admission/admission_loop.h"
#include "extender/admission/api_admission_revocation_writer.h"
#include "extender/admission/api_gate_opener.h"
#include "extender/commands.h"
#include "extender/embedded/cluster_source.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/embedded/embedded_evictor.h"
#include "extender/filter_pacer.h"
#include "extender/http/server.h"
#include "extender/live/live_mode.h"
#include "extender/log.h"
#include "extender/reclaim/reclaim_controller.h"
#include "extender/routes.h"
#include "extender/serve_options.h"
#include "policies/admission_rules.h"
#include "policies/node_scorers.h"
#include "policies/policies.h"
#include "policies/victim_orders.h"

namespace capext {
namespace {

EventRecorderOptions EventOptions(const ExtenderConfig& config) {
  EventRecorderOptions o;
  o.reporting_instance = EventReportingInstance(o.reporting_controller);
  o.refresh_interval_ms = config.event_refresh_interval.count();
  o.events_per_second = config.max_events_per_second;
  o.burst = config.event_burst;
  o.namespace_events_per_minute = config.max_events_per_namespace_per_minute;
  o.namespace_burst = config.event_burst_per_namespace;
  return o;
}

ReclaimMode ReclaimModeFromName(const std::string& name) {
  if (name == "off") return ReclaimMode::kOff;
  if (name == "dry-run") return ReclaimMode::kDryRun;
  return ReclaimMode::kOn;
}

std::unique_ptr<http::Server> StartListener(const ExtenderConfig& config, int port,
                                            const std::string& cert, const std::string& key,
                                            const std::string& client_ca,
                                            const std::string& address, http::Handler handler,
                                            const char* what) {
  http::ServerOptions options;
  options.address = address;
  options.port = static_cast<uint16_t>(port);
  options.io_threads = config.threads;
  options.body_limit = static_cast<std::size_t>(config.body_limit);
  options.read_timeout = config.request_timeout;
  options.tls_cert_file = cert;
  options.tls_key_file = key;
  options.client_ca_file = client_ca;
  options.client_gone_paths = {"/bind"};  // the one handler that reads it (routes.cpp)
  std::string error;
  auto server = http::Server::Start(options, std::move(handler), &error);
  if (!server) {
    Log(LogLevel::kError, fmt::format("cannot start the {} listener", what), {{"error", error}});
    return nullptr;
  }
  Log(LogLevel::kInfo, fmt::format("{} listening", what),
      {{"address", fmt::format("{}:{}", address, server->port())},
       {"tls", cert.empty() ? "off" : (client_ca.empty() ? "on" : "mutual")}});
  return server;
}

}  // namespace

int RunServeCommand(const std::vector<std::string>& args) {
  ExtenderConfig config;
  std::vector<ValidationFinding> diagnostics;
  bool help = false;
  ParseServeFlags(args, &config, &diagnostics, &help);
  if (diagnostics.empty() && !help) ValidateExtenderConfig(config, &diagnostics);
  if (!diagnostics.empty()) {
    for (const auto& d : diagnostics)
      std::cerr << FormatDiagnostic(d) << "\n";
    std::cerr << "see 'capacity-extender serve --help'\n";
    return 2;
  }
  if (help) {
    std::cout << "usage: capacity-extender serve [FLAGS]\n\n" << ServeFlagsHelp();
    return 0;
  }
  ConfigureLog(config.log_format, config.log_level);

  // Block the shutdown signals in every thread; this thread waits for them below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // Names were validated with the config (the tables' entries).
  QuotaSemantics semantics = QuotaSemanticsPolicies().Find(config.quota_semantics)->make();
  if (Status s = WithAdmissionRules(semantics, config.admission_rules, &semantics); !s.ok()) {
    Log(LogLevel::kError, "bad admissionRules", {{"error", s.message()}});
    return 1;
  }
  DecodeOptions decode;
  decode.accelerator_model_annotation = config.gpu_model_annotation;
  SchedulerCache cache(semantics, decode);
  cache.Write([&](ClusterState& state) {
    state.SetDeviceClassMappings(config.device_class_mappings);
    return 0;
  });
  Metrics metrics;

  // Declared before the binder and the listeners that use it, so that it outlives them.
  std::unique_ptr<FilterPacer> pacer;
  std::unique_ptr<LiveMode> live;
  std::unique_ptr<PodBinder> binder;
  std::unique_ptr<Evictor> evictor;
  std::unique_ptr<RequeueNudger> nudger;
  std::unique_ptr<EventSink> event_sink;
  std::unique_ptr<ReclaimRecorder> reclaim_records;
  SoleReplica sole_replica;
  const Leadership* leadership = &sole_replica;
  const bool use_live =
      !config.kubeconfig.empty() || (config.snapshot.empty() && LiveMode::InClusterAvailable());
  if (use_live) {
    StatusOr<std::unique_ptr<LiveMode>> started = LiveMode::Start(config, &cache, &metrics);
    if (!started.ok()) {
      Log(LogLevel::kError, "cannot start live mode", {{"error", started.status().message()}});
      return 1;
    }
    live = std::move(started).value();
    // A hold stays inside kube-scheduler's httpTimeout, which bindDeadline is below.
    pacer = std::make_unique<FilterPacer>(
        FilterPacer::Options{config.filter_hold_queued_binds,
                             std::min(config.filter_hold_limit, config.bind_deadline / 2)},
        &metrics);
    binder = live->MakeBinder(pacer.get());
    evictor = live->MakeEvictor();
    nudger = live->MakeNudger();
    if (config.events) event_sink = live->MakeEventSink();
    reclaim_records = live->MakeReclaimRecorder();
    leadership = live->leadership();
  } else {
    if (config.leader_election != "off") {
      Log(LogLevel::kWarn, "leaderElection applies to live mode only: embedded mode always acts");
    }
    std::string source;
    if (Status s = LoadEmbeddedCluster(config.snapshot, &cache, &source); !s.ok()) {
      Log(LogLevel::kError, "cannot load the snapshot", {{"error", s.message()}});
      return 1;
    }
    binder = std::make_unique<EmbeddedBinder>(&cache);
    evictor = std::make_unique<EmbeddedEvictor>(&cache);
    nudger = std::make_unique<LoggingNudger>();
  }

  ExtenderService service(&cache, &metrics,
                          NodeScoring(NodeScoringPolicies().Find(config.scoring)->make()),
                          *VictimOrderPolicies().Find(config.victim_order)->make(), binder.get(),
                          ServiceOptionsFrom(config));

  ReclaimControllerOptions reclaim_options;
  reclaim_options.mode = ReclaimModeFromName(config.reclaim);
  reclaim_options.interval_ms = config.reclaim_interval.count();
  reclaim_options.max_pods_per_pass = static_cast<std::size_t>(config.reclaim_max_pods_per_pass);
  reclaim_options.nomination_ttl_ms = config.nomination_ttl.count();
  reclaim_options.plan_max_steps = config.plan_max_steps;
  reclaim_options.plan_time_cap_ms = config.plan_time_cap.count();
  reclaim_options.max_evictions_per_second = config.max_evictions_per_second;
  reclaim_options.max_evictions_per_namespace_per_minute =
      config.max_evictions_per_namespace_per_minute;
  reclaim_options.requeue_nudge = config.requeue_nudge;
  reclaim_options.requeue_nudge_interval_ms = config.requeue_nudge_interval.count();
  reclaim_options.require_unschedulable_condition = use_live;
  const FairReclaimOptions fair_reclaim = FairReclaimOptionsFrom(config);
  reclaim_options.fair_sharing = fair_reclaim.enabled;
  reclaim_options.fair_share_min_run_time_ms = fair_reclaim.min_run_time_ms;
  EventRecorder events(EventOptions(config));  // outlives the controller's threads
  ReclaimController reclaim(&cache, &metrics, service.victim_order(), evictor.get(), nudger.get(),
                            reclaim_options);
  if (event_sink) reclaim.RecordEvents(&events, event_sink.get());
  reclaim.FollowLeadership(leadership);
  if (reclaim_records) reclaim.RecordReclaimsWith(reclaim_records.get());
  if (config.cross_node_reclaim) {
    Log(LogLevel::kWarn, "crossNodeReclaim is not available yet: reclaiming on one node at a time");
  }

  // docs/workloads-live.md#gate-detection-at-start: gate mode only where the API server keeps
  // scheduling gates; otherwise filter mode, said loudly.
  std::atomic<bool> gating{false};
  if (config.admission_mode == "gate") {
    if (live) {
      const kube::GateSupport support = live->ProbeSchedulingGates();
      if (support.known && support.kept) {
        gating = true;
        Log(LogLevel::kInfo, "admissionMode gate: scheduling gates are kept",
            {{"detail", support.detail}});
      } else {
        Log(LogLevel::kError,
            "admissionMode gate is NOT in force: running filter mode (pods are not gated; "
            "/filter admits pods and gangs)",
            {{"detail", support.detail}});
      }
    } else {
      gating = true;  // embedded mode: no API server to ask
    }
  }

  // The admission loop (docs/workloads-live.md): gate mode in force, live mode. It runs on every
  // replica and acts only on the leader (a follower plans, for /pending, and writes nothing).
  std::unique_ptr<GateOpener> gate_opener;
  std::unique_ptr<AdmissionRevocationWriter> revocation_writer;
  std::unique_ptr<AdmissionLoop> admission;
  std::function<std::vector<PendingPodRecord>()> gated;
  std::function<CreationAdmission(Pod)> admit_at_creation;
  if (gating && live) {
    gate_opener = std::make_unique<ApiGateOpener>(live->MakeGateLifter(), leadership);
    AdmissionLoopOptions admission_options = AdmissionLoopOptionsFrom(config);
    // Gated gangs get reclaim from the admission loop, under the reclaim controller's mode and
    // hold (docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang).
    admission_options.reclaim.mode = reclaim_options.mode;
    admission_options.reclaim.victim_order = &service.victim_order();
    admission_options.reclaim.plan_max_steps = reclaim_options.plan_max_steps;
    admission_options.reclaim.plan_time_cap_ms = reclaim_options.plan_time_cap_ms;
    admission_options.reclaim.refusal_backoff_ms = reclaim_options.refusal_backoff_ms;
    admission_options.reclaim.max_refusal_backoff_ms = reclaim_options.max_refusal_backoff_ms;
    admission = std::make_unique<AdmissionLoop>(&cache, &metrics, gate_opener.get(), evictor.get(),
                                                admission_options);
    admission->FollowLeadership(leadership);
    // Its reclaims evict within the reclaim controller's limits, and their victims' Events are
    // written by the controller's events thread (docs/reclaim-plan.md, gate mode, step 2).
    admission->ReclaimThrough(reclaim.evictions());
    // A gang that lost its core: its bare admitted members lose their admission
    // (docs/workloads-live.md#revoking-an-admission).
    revocation_writer =
        std::make_unique<ApiAdmissionRevocationWriter>(live->MakeAdmissionRevoker(), leadership);
    admission->RevokeThrough(revocation_writer.get());
    if (event_sink) admission->AttachEvents(event_sink.get());
    gated = [loop = admission.get()] { return loop->Gated(); };
    admit_at_creation = [loop = admission.get()](Pod pod) {
      return loop->AdmitAtCreation(std::move(pod));
    };
  }

  RouterOptions extender_routes{config.path_prefix,
                                Listener::kExtender,
                                &reclaim.board(),
                                leadership,
                                SplitSchedulerNames(config.gate_scheduler_names),
                                &gating,
                                gated,
                                admit_at_creation,
                                decode};
  extender_routes.filter_pacer = pacer.get();
  auto server =
      StartListener(config, config.port, config.tls_cert_file, config.tls_key_file,
                    config.client_ca_file, config.listen_address,
                    MakeRouter(&service, &metrics, std::move(extender_routes)), "extender");
  if (!server) return 1;
  std::unique_ptr<http::Server> webhook;
  if (config.webhook_port != 0) {
    // The webhook is reached through a Service, so it listens on every interface.
    webhook = StartListener(config, config.webhook_port, config.webhook_tls_cert_file,
                            config.webhook_tls_key_file, "", "0.0.0.0",
                            MakeRouter(&service, &metrics,
                                       {"",
                                        Listener::kWebhook,
                                        nullptr,
                                        leadership,
                                        SplitSchedulerNames(config.gate_scheduler_names),
                                        &gating,
                                        {},
                                        admit_at_creation,
                                        decode}),
                            "webhook");
    if (!webhook) return 1;
  }
  reclaim.Start();
  if (admission) admission->Start();
  Log(LogLevel::kInfo, "serving",
      {{"mode", use_live ? "live" : "embedded"},
       {"quota_semantics", config.quota_semantics},
       {"admission_rules", config.admission_rules},
       {"reclaim", config.reclaim},
       {"admission_mode", gating ? "gate" : "filter"},
       {"scoring", config.scoring},
       {"leader_election", use_live ? config.leader_election : "off"}});

  int signal = 0;
  sigwait(&signals, &signal);
  Log(LogLevel::kInfo, "shutting down", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
  if (admission) admission->Stop();
  reclaim.Stop();
  if (webhook) webhook->Shutdown(config.shutdown_grace);
  server->Shutdown(config.shutdown_grace);
  if (live) live->Stop();
  Log(LogLevel::kInfo, "stopped");
  return 0;
}

}  // namespace capext
