#include "config/config_fields.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/quantity.h"

namespace capext {
namespace {

using EC = ExtenderConfig;

// Help texts follow deploy/config/extender-config.yaml, which documents every key.
const std::vector<ConfigField>& Table() {
  static const std::vector<ConfigField> table = {
      {"listen-address", "listenAddress", "ADDR", "Listener",
       "address of the extender verbs (kube-scheduler runs in the same pod: loopback)",
       &EC::listen_address},
      {"port", "port", "PORT", "Listener", "port of the extender verbs (0 = any free port)",
       &EC::port},
      {"path-prefix", "pathPrefix", "PATH", "Listener",
       "prefix of every path, e.g. /scheduler (kube-scheduler appends the verb to urlPrefix)",
       &EC::path_prefix},
      {"tls-cert", "tlsCertFile", "FILE", "Listener",
       "PEM serving certificate: serve HTTPS instead of HTTP (needs --tls-key)",
       &EC::tls_cert_file},
      {"tls-key", "tlsKeyFile", "FILE", "Listener", "PEM private key of --tls-cert",
       &EC::tls_key_file},
      {"client-ca", "clientCAFile", "FILE", "Listener",
       "PEM CA bundle: require and verify client certificates (mutual TLS; needs --tls-cert)",
       &EC::client_ca_file},
      {"webhook-port", "webhookPort", "PORT", "Listener",
       "HTTPS port of the ElasticQuota admission webhook on all interfaces (0 = off)",
       &EC::webhook_port},
      {"webhook-tls-cert", "webhookTLSCertFile", "FILE", "Listener",
       "PEM serving certificate of the webhook (required with --webhook-port)",
       &EC::webhook_tls_cert_file},
      {"webhook-tls-key", "webhookTLSKeyFile", "FILE", "Listener",
       "PEM private key of --webhook-tls-cert", &EC::webhook_tls_key_file},
      {"body-limit", "bodyLimit", "SIZE", "Listener",
       "largest request body accepted, a quantity (16Mi) or bytes", &EC::body_limit},
      {"threads", "threads", "N", "Listener", "HTTP worker threads", &EC::threads},
      {"request-timeout", "requestTimeout", "DURATION", "Listener",
       "per-request deadline, under kube-scheduler's 5s httpTimeout", &EC::request_timeout},
      {"shutdown-grace", "shutdownGrace", "DURATION", "Listener",
       "on SIGTERM, how long in-flight requests may drain", &EC::shutdown_grace},

      {"snapshot", "snapshot", "FILE", "Cluster state",
       "serve this snapshot file instead of a live cluster (embedded mode)", &EC::snapshot},
      {"kubeconfig", "kubeconfig", "FILE", "Cluster state",
       "kubeconfig of the live cluster (empty: in-cluster config when in a pod; with neither "
       "this nor --snapshot, the bundled example cluster)",
       &EC::kubeconfig},
      {"resync-period", "resyncPeriod", "DURATION", "Cluster state",
       "full relist of every watched kind", &EC::resync_period},
      {"discovery-interval", "discoveryInterval", "DURATION", "Cluster state",
       "how often the served ElasticQuota API groups are discovered again (CRDs installed later)",
       &EC::discovery_interval},
      {"ignore-not-ready", "ignoreNotReady", "", "Cluster state",
       "answer /filter before the cluster cache's first sync (default: an Error, which makes "
       "kube-scheduler retry the pod) instead of deciding on a partial cluster",
       &EC::ignore_not_ready},
      {"max-out-of-sync", "maxOutOfSync", "DURATION", "Cluster state",
       "/readyz answers 503 while a watched resource has been out of sync with the API server "
       "(watch broken, relist under way, list failing, watch silent) for longer than this",
       &EC::max_out_of_sync},
      {"watch-idle-timeout", "watchIdleTimeout", "DURATION", "Cluster state",
       "a watch that delivers nothing (no event, no bookmark, not its end) for this long is "
       "deemed stuck and resumed; each watch asks the API server to end it after 2/3 to 8/9 of "
       "this",
       &EC::watch_idle_timeout},
      {"watch-encoding", "watchEncoding", "ENCODING", "Cluster state",
       "protobuf (pods and nodes are watched in protobuf, as kube-scheduler watches them; JSON "
       "if the API server answers in JSON) or json",
       &EC::watch_encoding},
      {"missing-quota-api", "missingQuotaAPI", "MODE", "Cluster state",
       "while no ElasticQuota API is served: refuse (every /filter answers an Error naming the "
       "missing CRD) or allow (pods are placed by node fit alone)",
       &EC::missing_quota_api},

      {"bind-deadline", "bindDeadline", "DURATION", "Binding",
       "no Binding is sent later than this after its /bind arrived (a bind still waiting is "
       "answered with an error kube-scheduler retries): kube-scheduler's httpTimeout minus a "
       "margin for the Binding's round trip",
       &EC::bind_deadline},
      {"max-binds-in-flight", "maxBindsInFlight", "N", "Binding",
       "binds reserved and waiting for the API server at most; past it /bind answers at once "
       "with an error kube-scheduler retries",
       &EC::max_binds_in_flight},
      {"bind-connections", "bindConnections", "N", "Binding",
       "live mode: keep-alive connections of the Binding client (its own thread)",
       &EC::bind_connections},
      {"filter-hold-queued-binds", "filterHoldQueuedBinds", "N", "Binding",
       "live mode: while more Bindings than this wait for a connection, /filter answers wait "
       "(up to filterHoldLimit) until the queue is back at it, so kube-scheduler starts binds no "
       "faster than the API server takes them",
       &EC::filter_hold_queued_binds},
      {"filter-hold-limit", "filterHoldLimit", "DURATION", "Binding",
       "the longest a /filter answer waits for the Binding queue (0s: never); at most half of "
       "bindDeadline, as kube-scheduler's httpTimeout applies to /filter too",
       &EC::filter_hold_limit},

      {"quota-semantics", "quotaSemantics", "NAME", "Policies",
       "capacity-extender or scheduler-plugins (the reference plugin's arithmetic)",
       &EC::quota_semantics},
      {"admission-rules", "admissionRules", "NAMES", "Policies",
       "admission rules run after the built-in ones, '+'-separated, by their names in the "
       "registry (none by default)",
       &EC::admission_rules},
      {"victim-order", "victimOrder", "NAME", "Policies", "order in which victims are chosen",
       &EC::victim_order},
      {"scoring", "scoring", "NAME", "Policies", "least-allocated, most-allocated or none",
       &EC::scoring},
      {"gpu-model-annotation", "gpuModelAnnotation", "KEY", "Policies",
       "pod annotation naming the GPU model: quota nvidia.com/gpu per model (empty = off)",
       &EC::gpu_model_annotation},

      {"reserve-at", "reserveAt", "VERB", "Reservations and reclaim",
       "bind (a pod's quota is reserved by /bind) or filter (held when /filter passes it, for "
       "a scheduler that binds itself)",
       &EC::reserve_at},
      {"reservation-ttl", "reservationTTL", "DURATION", "Reservations and reclaim",
       "a bind's quota reservation (or /filter's hold) expires if the watch never shows the pod "
       "bound",
       &EC::reservation_ttl},
      {"nomination-ttl", "nominationTTL", "DURATION", "Reservations and reclaim",
       "reclaim holds a pending pod's request on its node and quota this long",
       &EC::nomination_ttl},
      {"reclaim", "reclaim", "MODE", "Reservations and reclaim",
       "on, dry-run (log and count what would be evicted) or off", &EC::reclaim},
      {"reclaim-interval", "reclaimInterval", "DURATION", "Reservations and reclaim",
       "how often the reclaim loop looks at pending pods", &EC::reclaim_interval},
      {"reclaim-max-pods-per-pass", "reclaimMaxPodsPerPass", "N", "Reservations and reclaim",
       "pending pods planned per pass at most (those whose verdict may have changed); the rest "
       "wait for the next pass, longest waiting first",
       &EC::reclaim_max_pods_per_pass},
      {"plan-max-steps", "planMaxSteps", "N", "Reservations and reclaim",
       "a reclaim plan across nodes (a gang's) searches at most this many steps (nodes, units and "
       "members looked at); past it: no plan, approximate",
       &EC::plan_max_steps},
      {"plan-time-cap", "planTimeCap", "DURATION", "Reservations and reclaim",
       "wall-clock cap on one reclaim plan's search; past it: no plan, approximate",
       &EC::plan_time_cap},
      {"max-evictions-per-second", "maxEvictionsPerSecond", "RATE", "Reservations and reclaim",
       "cluster-wide eviction rate limit", &EC::max_evictions_per_second},
      {"max-evictions-per-namespace-per-minute", "maxEvictionsPerNamespacePerMinute", "N",
       "Reservations and reclaim", "eviction limit per victim namespace",
       &EC::max_evictions_per_namespace_per_minute},
      {"cross-node-reclaim", "crossNodeReclaim", "", "Reservations and reclaim",
       "reclaim may evict on several nodes for one pod", &EC::cross_node_reclaim},

      {"admission-mode", "admissionMode", "MODE", "Pod groups and admission",
       "filter (/filter admits pods and gangs) or gate (the /mutate webhook gates new pods of "
       "quota namespaces; the admission loop lifts the gate)",
       &EC::admission_mode},
      {"gang-schedule-timeout", "gangScheduleTimeout", "DURATION", "Pod groups and admission",
       "a group admitted but not complete this long has its admitted members evicted (a "
       "PodGroup's scheduleTimeoutSeconds wins)",
       &EC::gang_schedule_timeout},
      {"gate-scheduler-names", "gateSchedulerNames", "NAMES", "Pod groups and admission",
       "comma-separated schedulerName values whose new pods /mutate gates (empty schedulerName = "
       "default-scheduler)",
       &EC::gate_scheduler_names},
      {"admit-at-creation", "admitAtCreation", "", "Pod groups and admission",
       "gate mode: /mutate admits a new single pod without a gate when no pod waits in the "
       "admission queue and its quota admits it now (--admit-at-creation=false gates every pod)",
       &EC::admit_at_creation},
      {"fair-sharing", "fairSharing", "", "Pod groups and admission",
       "gate mode: borrowing pods are admitted in order of their quota's share divided by its "
       "weight, lowest first (annotation scheduling.capacity-extender.io/fair-share-weight)",
       &EC::fair_sharing},
      {"fair-share-min-run-time", "fairShareMinRunTime", "DURATION", "Pod groups and admission",
       "with fair sharing, reclaim between borrowers never evicts a pod that started less than "
       "this long ago",
       &EC::fair_share_min_run_time},

      {"status-updates", "statusUpdates", "", "Writing back",
       "patch ElasticQuota status.used (--status-updates=false to stop)", &EC::status_updates},
      {"status-update-interval", "statusUpdateInterval", "DURATION", "Writing back",
       "at most one status patch per quota per interval", &EC::status_update_interval},
      {"requeue-nudge", "requeueNudge", "", "Writing back",
       "annotate a pending pod so kube-scheduler retries it at once", &EC::requeue_nudge},
      {"requeue-nudge-interval", "requeueNudgeInterval", "DURATION", "Writing back",
       "at most one nudge per pod per interval", &EC::requeue_nudge_interval},
      {"events", "events", "", "Writing back",
       "live mode: Warning Events on pending quota pods (QuotaExceeded, WaitingForReclaim, "
       "ReclaimRefused, ReclaimBackoff)",
       &EC::events},
      {"event-refresh-interval", "eventRefreshInterval", "DURATION", "Writing back",
       "while a pod's verdict stays the same, its Event's series count grows once per interval",
       &EC::event_refresh_interval},
      {"max-events-per-second", "maxEventsPerSecond", "RATE", "Writing back",
       "cluster-wide Event writes (creates and series patches) per second",
       &EC::max_events_per_second},
      {"event-burst", "eventBurst", "N", "Writing back",
       "Event writes allowed at once above maxEventsPerSecond", &EC::event_burst},
      {"max-events-per-namespace-per-minute", "maxEventsPerNamespacePerMinute", "N", "Writing back",
       "Event writes per namespace per minute", &EC::max_events_per_namespace_per_minute},
      {"event-burst-per-namespace", "eventBurstPerNamespace", "N", "Writing back",
       "Event writes allowed at once in one namespace", &EC::event_burst_per_namespace},

      {"leader-election", "leaderElection", "MODE", "Replicas",
       "off (act always: one replica) or follow-scheduler (evict, nudge, write status.used and "
       "Events only while this pod's kube-scheduler holds --leader-lease)",
       &EC::leader_election},
      {"leader-lease", "leaderLease", "NS/NAME", "Replicas",
       "kube-scheduler's leader Lease (its leaderElection resourceNamespace/resourceName)",
       &EC::leader_lease},
      {"leader-identity", "leaderIdentity", "ID", "Replicas",
       "this replica's scheduler holds the lease when holderIdentity is ID or starts with ID_ "
       "(empty: the hostname, which the sidecar shares with its kube-scheduler)",
       &EC::leader_identity},
      {"lease-duration", "leaseDuration", "DURATION", "Replicas",
       "kube-scheduler's leaderElection.leaseDuration: how long another scheduler waits before "
       "taking over",
       &EC::lease_duration},
      {"lease-renew-deadline", "leaseRenewDeadline", "DURATION", "Replicas",
       "stop acting this long after the last renewal seen; the rest of leaseDuration is the "
       "margin before another replica can act",
       &EC::lease_renew_deadline},
      {"lease-check-interval", "leaseCheckInterval", "DURATION", "Replicas",
       "how often the lease is read", &EC::lease_check_interval},

      {"log-format", "logFormat", "FORMAT", "Logs", "logfmt or json", &EC::log_format},
      {"log-level", "logLevel", "LEVEL", "Logs", "debug, info, warn or error", &EC::log_level},
  };
  return table;
}

bool ParseInteger(std::string_view text, int64_t* out) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  auto [p, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && p == end && begin != end;
}

bool ParseBool(std::string_view text, ValueSource source, bool* out) {
  // Go's strconv.ParseBool for flags; YAML 1.2 core-schema spellings in the file.
  const bool flag = source == ValueSource::kFlag;
  if (text == "true" || text == "True" || text == "TRUE" ||
      (flag && (text == "1" || text == "t"))) {
    *out = true;
    return true;
  }
  if (text == "false" || text == "False" || text == "FALSE" ||
      (flag && (text == "0" || text == "f"))) {
    *out = false;
    return true;
  }
  return false;
}

// A quoted YAML scalar is a string: Kubernetes' decoder refuses "8888" for an integer field.
std::string GotText(std::string_view text, ValueSource source) {
  return source == ValueSource::kYamlQuoted ? fmt::format("got the string \"{}\"", text)
                                            : fmt::format("got \"{}\"", text);
}

struct FieldSetter {
  std::string_view text;
  ValueSource source;
  ExtenderConfig* config;

  Status operator()(std::string EC::*member) const {
    config->*member = std::string(text);
    return {};
  }
  Status operator()(int EC::*member) const {
    int64_t v = 0;
    if (source == ValueSource::kYamlQuoted || !ParseInteger(text, &v)) {
      return Status::Invalid(fmt::format("expected an integer, {}", GotText(text, source)));
    }
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      return Status::Invalid(fmt::format("integer {} is out of range", text));
    }
    config->*member = static_cast<int>(v);
    return {};
  }
  Status operator()(int64_t EC::*member) const {
    // A byte size: an integer, or a quantity such as 16Mi.
    const StatusOr<Quantity> parsed = Quantity::Parse(text);
    if (!parsed.ok()) {
      return Status::Invalid(
          fmt::format("expected a size in bytes (16Mi, 1048576): {}", parsed.status().message()));
    }
    const Quantity& q = *parsed;
    if (q.IsNegative()) {
      return Status::Invalid(fmt::format("size \"{}\" is negative", text));
    }
    config->*member = q.Value();
    return {};
  }
  Status operator()(double EC::*member) const {
    double v = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (source == ValueSource::kYamlQuoted || ec != std::errc() || p != end || !std::isfinite(v)) {
      return Status::Invalid(fmt::format("expected a number, {}", GotText(text, source)));
    }
    config->*member = v;
    return {};
  }
  Status operator()(bool EC::*member) const {
    bool v = false;
    if (source == ValueSource::kYamlQuoted || !ParseBool(text, source, &v)) {
      return Status::Invalid(fmt::format("expected true or false, {}", GotText(text, source)));
    }
    config->*member = v;
    return {};
  }
  Status operator()(std::chrono::milliseconds EC::*member) const {
    std::chrono::milliseconds v{};
    if (Status s = ParseDuration(text, &v); !s.ok()) {
      return s;
    }
    config->*member = v;
    return {};
  }
};

struct FieldFormatter {
  const ExtenderConfig& config;

  std::string operator()(std::string EC::*member) const { return config.*member; }
  std::string operator()(int EC::*member) const { return std::to_string(config.*member); }
  std::string operator()(int64_t EC::*member) const {
    return Quantity::FromInt(config.*member, Quantity::Format::kBinarySI).ToString();
  }
  std::string operator()(double EC::*member) const { return fmt::format("{}", config.*member); }
  std::string operator()(bool EC::*member) const { return config.*member ? "true" : "false"; }
  std::string operator()(std::chrono::milliseconds EC::*member) const {
    return FormatDuration(config.*member);
  }
};

}  // namespace

const std::vector<ConfigField>& ExtenderConfigFields() {
  return Table();
}

const ConfigField* FindConfigFieldByKey(std::string_view key) {
  for (const auto& f : Table()) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

const ConfigField* FindConfigFieldByFlag(std::string_view flag) {
  for (const auto& f : Table()) {
    if (flag == f.flag) return &f;
  }
  return nullptr;
}

std::vector<std::string> ExtenderConfigKeys() {
  std::vector<std::string> keys;
  for (const auto& f : Table())
    keys.emplace_back(f.key);
  return keys;
}

std::vector<std::string> ExtenderConfigFlags() {
  std::vector<std::string> flags;
  for (const auto& f : Table())
    flags.emplace_back(f.flag);
  return flags;
}

bool IsBoolField(const ConfigField& field) {
  return std::holds_alternative<bool EC::*>(field.member);
}

Status SetConfigField(const ConfigField& field, std::string_view text, ValueSource source,
                      ExtenderConfig* config) {
  return std::visit(FieldSetter{text, source, config}, field.member);
}

std::string FormatConfigField(const ConfigField& field, const ExtenderConfig& config) {
  return std::visit(FieldFormatter{config}, field.member);
}

}  // namespace capext
