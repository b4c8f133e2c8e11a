// ExtenderConfig: every setting of `capacity-extender serve`. Each has a flag (--kebab-case) and
// a key in the YAML config file (--config FILE; camelCase keys, documented with defaults in
// deploy/config/extender-config.yaml). Flags win over the file. Unknown keys, wrong types and
// bad policy names are errors that name the file, line and key.
// Thread-safety: a value type.
#pragma once

#include "policies/node_scorers.h"
#include "policies/policies.h"
#include "policies/victim_orders.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/validation_finding.h"
#include "core/device_claim.h"
#include "core/status.h"

namespace capext {

struct ExtenderConfig {
  // Listener.
  std::string listen_address = "127.0.0.1";  // listenAddress / --listen-address
  int port = 8888;                           // port / --port
  std::string path_prefix;                   // pathPrefix / --path-prefix (e.g. "/scheduler")
  std::string tls_cert_file;                 // tlsCertFile / --tls-cert
  std::string tls_key_file;                  // tlsKeyFile / --tls-key
  std::string client_ca_file;                // clientCAFile / --client-ca
  int webhook_port = 0;                      // webhookPort / --webhook-port (0 = off; HTTPS only)
  std::string webhook_tls_cert_file;         // webhookTLSCertFile / --webhook-tls-cert
  std::string webhook_tls_key_file;          // webhookTLSKeyFile / --webhook-tls-key
  int64_t body_limit = 16 * 1024 * 1024;     // bodyLimit / --body-limit (a quantity: "16Mi")
  int threads = 2;                           // threads / --threads
  std::chrono::milliseconds request_timeout{4000};  // requestTimeout / --request-timeout
  std::chrono::milliseconds shutdown_grace{10000};  // shutdownGrace / --shutdown-grace

  // Cluster source.
  std::string snapshot;    // snapshot / --snapshot (embedded mode)
  std::string kubeconfig;  // kubeconfig / --kubeconfig (live mode; in-cluster when empty and
                           // KUBERNETES_SERVICE_HOST is set)
  std::chrono::milliseconds resync_period{600000};  // resyncPeriod / --resync-period
  // discoveryInterval / --discovery-interval: how often live mode asks which ElasticQuota API
  // groups are served (a CRD installed or removed later is picked up without a restart).
  std::chrono::milliseconds discovery_interval{30000};
  bool ignore_not_ready = false;  // ignoreNotReady / --ignore-not-ready
  // maxOutOfSync / --max-out-of-sync: /readyz is not ready while a watched resource has been out
  // of sync with the API server for longer than this
  // (docs/architecture.md#staying-in-sync-with-the-api-server).
  std::chrono::milliseconds max_out_of_sync{5000};
  // watchIdleTimeout / --watch-idle-timeout: a watch that delivers nothing for this long is
  // deemed stuck and resumed (each watch asks the server to end it after 2/3 to 8/9 of this).
  std::chrono::milliseconds watch_idle_timeout{90000};
  // watchEncoding / --watch-encoding: "protobuf" (pods and nodes are watched in protobuf, as
  // kube's own components watch them; JSON when the server answers in it) or "json"
  // (docs/architecture.md#watching-in-protobuf).
  std::string watch_encoding = "protobuf";
  // missingQuotaAPI / --missing-quota-api: what /filter does while no ElasticQuota API is
  // served: "refuse" every pod, or "allow" them by node fit alone
  // (docs/capacity-semantics.md#12-deciding-on-a-cache-that-is-out-of-sync).
  std::string missing_quota_api = "refuse";

  // Policies (names from the policies/ tables; the defaults are their first entries).
  std::string quota_semantics{QuotaSemanticsPolicies().default_entry().name};  // quotaSemantics
  std::string admission_rules;  // admissionRules: extra admission rules, '+'-separated ("" = none)
  std::string victim_order{VictimOrderPolicies().default_entry().name};  // victimOrder
  std::string scoring{NodeScoringPolicies().default_entry().name};       // scoring
  std::string gpu_model_annotation;  // gpuModelAnnotation / --gpu-model-annotation ("" = off)
  // deviceClassMappings (config file only; docs/devices.md#4-the-quota-resource-of-a-deviceclass):
  // DeviceClass -> quota resource.
  std::vector<DeviceClassMapping> device_class_mappings;

  // Binding (docs/architecture.md#how-a-bind-travels).
  // bindDeadline / --bind-deadline: no Binding is sent later than this after its /bind arrived;
  // kube-scheduler's httpTimeout (5s in deploy/) minus a margin for the Binding's round trip.
  std::chrono::milliseconds bind_deadline{4000};
  int max_binds_in_flight = 2048;  // maxBindsInFlight / --max-binds-in-flight
  int bind_connections = 16;       // bindConnections / --bind-connections
  // Pacing /filter (docs/architecture.md#pacing-filter-while-bindings-queue): while more
  // Bindings than filterHoldQueuedBinds / --filter-hold-queued-binds wait for a connection, /filter
  // answers wait, each up to filterHoldLimit / --filter-hold-limit (0s: never; at most half of
  // bindDeadline, which stays inside kube-scheduler's httpTimeout).
  int filter_hold_queued_binds = 16;
  std::chrono::milliseconds filter_hold_limit{1000};

  // Accounting and reclaim.
  // reserveAt / --reserve-at: "bind" (/bind reserves the pod's quota) or "filter" (/filter holds
  // it when the pod passes, for a kube-scheduler that binds itself;
  // docs/capacity-semantics.md#6-accounting-used-reservations-nominations, "Or at /filter").
  std::string reserve_at = "bind";
  std::chrono::milliseconds reservation_ttl{60000};  // reservationTTL / --reservation-ttl
  std::chrono::milliseconds nomination_ttl{120000};  // nominationTTL / --nomination-ttl
  std::string reclaim = "on";                        // reclaim / --reclaim (on|dry-run|off)
  std::chrono::milliseconds reclaim_interval{1000};  // reclaimInterval / --reclaim-interval
  double max_evictions_per_second = 5;               // maxEvictionsPerSecond
  int max_evictions_per_namespace_per_minute = 30;   // maxEvictionsPerNamespacePerMinute
  bool cross_node_reclaim = false;                   // crossNodeReclaim / --cross-node-reclaim
  // reclaimMaxPodsPerPass / --reclaim-max-pods-per-pass: pods the reclaim loop plans per pass at
  // most (those whose verdict may have changed); the rest wait for the next pass.
  int reclaim_max_pods_per_pass = 500;
  // A plan across nodes (docs/reclaim-plan.md#the-budget): planMaxSteps / --plan-max-steps, its
  // budget of steps; planTimeCap / --plan-time-cap, the wall-clock cap on one search. Either
  // running out: no plan, approximate.
  int plan_max_steps = 250'000;
  std::chrono::milliseconds plan_time_cap{200};

  // Pod groups and admission (docs/workloads.md).
  // admissionMode / --admission-mode: "filter" (the binary's default: /filter decides, safe
  // without a webhook) or "gate" (the /mutate webhook gates new pods of quota namespaces and the
  // admission loop lifts the gate; falls back to filter when the API server drops
  // spec.schedulingGates).
  std::string admission_mode = "filter";
  // gangScheduleTimeout / --gang-schedule-timeout: a group admitted but not complete within this
  // long (unless its PodGroup sets scheduleTimeoutSeconds) has its admitted members evicted.
  std::chrono::milliseconds gang_schedule_timeout{120000};
  // gateSchedulerNames / --gate-scheduler-names: comma-separated spec.schedulerName values whose
  // pods /mutate gates (an empty schedulerName is default-scheduler); pods of other schedulers
  // pass untouched.
  std::string gate_scheduler_names = "default-scheduler";
  // admitAtCreation / --admit-at-creation: in gate mode, /mutate admits a new single pod at its
  // creation, without a gate, when no pod waits in the admission queue and its quota admits it
  // now (docs/workloads-live.md#admission-at-creation); false: every such pod is gated.
  bool admit_at_creation = true;
  // fairSharing / --fair-sharing: gate mode's admission loop lifts the gates of borrowing pods in
  // order of their quota's weighted share, lowest first
  // (docs/fair-sharing.md#5-admission-order-gate-mode).
  bool fair_sharing = false;
  // fairShareMinRunTime / --fair-share-min-run-time: with fairSharing, the reclaim controller may
  // also evict a borrower's pod for a borrower below its fair share, never one that started less
  // than this long ago (docs/fair-sharing.md#6-reclaim-between-borrowers).
  std::chrono::milliseconds fair_share_min_run_time{300000};

  // Writing back.
  bool status_updates = true;                               // statusUpdates
  std::chrono::milliseconds status_update_interval{1000};   // statusUpdateInterval
  bool requeue_nudge = true;                                // requeueNudge
  std::chrono::milliseconds requeue_nudge_interval{5000};   // requeueNudgeInterval
  bool events = true;                                       // events (live mode)
  std::chrono::milliseconds event_refresh_interval{30000};  // eventRefreshInterval
  double max_events_per_second = 10;                        // maxEventsPerSecond
  int event_burst = 50;                                     // eventBurst
  int max_events_per_namespace_per_minute = 60;             // maxEventsPerNamespacePerMinute
  int event_burst_per_namespace = 10;                       // eventBurstPerNamespace

  // Replicas (docs/architecture.md#two-replicas-one-actor): which replica acts on its own.
  // leaderElection / --leader-election: off (always act: one replica) or follow-scheduler (act
  // only while this pod's kube-scheduler holds leaderLease).
  std::string leader_election = "off";
  std::string leader_lease = "kube-system/kube-scheduler";  // leaderLease: "namespace/name"
  std::string leader_identity;  // leaderIdentity: our scheduler's holderIdentity prefix ("" = host)
  std::chrono::milliseconds lease_duration{15000};        // leaseDuration (the scheduler's)
  std::chrono::milliseconds lease_renew_deadline{10000};  // leaseRenewDeadline
  std::chrono::milliseconds lease_check_interval{1000};   // leaseCheckInterval

  // Logs.
  std::string log_format = "logfmt";  // logFormat / --log-format (logfmt|json)
  std::string log_level = "info";     // logLevel / --log-level (debug|info|warn|error)
};

// Problems in a config file or on the command line are ValidationFindings, all of severity
// error: the file ("" for flags), the line (0 when unknown), the key or flag as the field, and
// the message. Each function below appends every problem it finds (not only the first) to
// *diagnostics; the input is good when it appended none.

// Loads the YAML config file into *config (keys not present keep their current values).
void LoadExtenderConfigFile(const std::string& path, ExtenderConfig* config,
                            std::vector<ValidationFinding>* diagnostics);

// Parses `serve` flags (after the subcommand) into *config: first --config FILE is loaded, then
// every flag overrides. Accepts "--flag value" and "--flag=value"; booleans also as bare
// "--flag". Unknown flags and bad values are problems. Sets *help when --help/-h was given (and
// then reads nothing).
void ParseServeFlags(const std::vector<std::string>& args, ExtenderConfig* config,
                     std::vector<ValidationFinding>* diagnostics, bool* help);

// Checks cross-field rules and policy names (e.g. tls cert without key, unknown scoring).
void ValidateExtenderConfig(const ExtenderConfig& config,
                            std::vector<ValidationFinding>* diagnostics);

// The --help text of `serve`, generated from the same table as the parser.
std::string ServeFlagsHelp();

// "file:line: key: message", leaving out what is unknown (no severity: all are errors).
std::string FormatDiagnostic(const ValidationFinding& d);

}  // namespace capext
