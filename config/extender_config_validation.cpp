// ValidateExtenderConfig: rules that involve a policy registry or more than one field. Single
// values were already type-checked when read (config_fields.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "config/extender_config.h"
#include "config/name_suggestion.h"
#include "policies/admission_rules.h"
#include "policies/node_scorers.h"
#include "policies/policies.h"
#include "policies/victim_orders.h"

namespace capext {
namespace {

class Checker {
 public:
  explicit Checker(std::vector<ValidationFinding>* diagnostics) : diagnostics_(diagnostics) {}

  void Fail(std::string key, std::string message) {
    diagnostics_->push_back({Severity::kError, 0, std::move(key), std::move(message)});
  }

  void OneOf(const char* key, const std::string& value, const std::vector<std::string>& names,
             std::string_view what) {
    if (std::find(names.begin(), names.end(), value) != names.end()) return;
    Fail(key, fmt::format("unknown {} \"{}\"{}; known: {}", what, value, DidYouMean(value, names),
                          fmt::join(names, ", ")));
  }

  void Port(const char* key, int port) {
    if (port < 0 || port > 65535) Fail(key, fmt::format("port {} is outside 0..65535", port));
  }

  void Positive(const char* key, std::chrono::milliseconds d) {
    if (d.count() <= 0) Fail(key, "must be longer than 0");
  }

 private:
  std::vector<ValidationFinding>* diagnostics_;
};

}  // namespace

void ValidateExtenderConfig(const ExtenderConfig& c, std::vector<ValidationFinding>* diagnostics) {
  Checker check(diagnostics);

  check.OneOf("quotaSemantics", c.quota_semantics, QuotaSemanticsPolicies().Names(),
              QuotaSemanticsPolicies().what());
  QuotaSemantics with_rules;
  if (Status s = WithAdmissionRules({}, c.admission_rules, &with_rules); !s.ok())
    check.Fail("admissionRules", s.message());
  check.OneOf("victimOrder", c.victim_order, VictimOrderPolicies().Names(),
              VictimOrderPolicies().what());
  check.OneOf("scoring", c.scoring, NodeScoringPolicies().Names(), NodeScoringPolicies().what());
  check.OneOf("reclaim", c.reclaim, {"on", "dry-run", "off"}, "reclaim mode");
  check.OneOf("admissionMode", c.admission_mode, {"filter", "gate"}, "admission mode");
  check.OneOf("reserveAt", c.reserve_at, {"bind", "filter"}, "reserveAt verb");
  check.OneOf("missingQuotaAPI", c.missing_quota_api, {"refuse", "allow"}, "missingQuotaAPI mode");
  check.OneOf("watchEncoding", c.watch_encoding, {"protobuf", "json"}, "watch encoding");
  check.OneOf("logFormat", c.log_format, {"logfmt", "json"}, "log format");
  check.OneOf("logLevel", c.log_level, {"debug", "info", "warn", "error"}, "log level");

  check.Port("port", c.port);
  check.Port("webhookPort", c.webhook_port);
  if (c.webhook_port > 0 && c.webhook_port == c.port) {
    check.Fail("webhookPort", fmt::format("port {} is also the extender's port", c.port));
  }
  if (!c.path_prefix.empty() && c.path_prefix.front() != '/') {
    check.Fail("pathPrefix", fmt::format("\"{}\" must start with /", c.path_prefix));
  }
  if (c.tls_cert_file.empty() != c.tls_key_file.empty()) {
    check.Fail(c.tls_cert_file.empty() ? "tlsCertFile" : "tlsKeyFile",
               "tlsCertFile and tlsKeyFile must be given together");
  }
  if (!c.client_ca_file.empty() && c.tls_cert_file.empty()) {
    check.Fail("clientCAFile", "client certificates need TLS: set tlsCertFile and tlsKeyFile");
  }
  if (c.webhook_port > 0 && (c.webhook_tls_cert_file.empty() || c.webhook_tls_key_file.empty())) {
    check.Fail("webhookPort",
               "the admission webhook is HTTPS only: set webhookTLSCertFile and webhookTLSKeyFile");
  }
  if (c.webhook_tls_cert_file.empty() != c.webhook_tls_key_file.empty()) {
    check.Fail(c.webhook_tls_cert_file.empty() ? "webhookTLSCertFile" : "webhookTLSKeyFile",
               "webhookTLSCertFile and webhookTLSKeyFile must be given together");
  }
  if (!c.snapshot.empty() && !c.kubeconfig.empty()) {
    check.Fail("snapshot",
               "snapshot (embedded mode) and kubeconfig (live mode) exclude each other");
  }

  if (c.body_limit <= 0) check.Fail("bodyLimit", "must be larger than 0");
  if (c.threads < 1 || c.threads > 1024) {
    check.Fail("threads", fmt::format("{} is outside 1..1024", c.threads));
  }
  check.Positive("requestTimeout", c.request_timeout);
  check.Positive("resyncPeriod", c.resync_period);
  check.Positive("bindDeadline", c.bind_deadline);
  if (c.max_binds_in_flight < 1 || c.max_binds_in_flight > 1'000'000) {
    check.Fail("maxBindsInFlight", fmt::format("{} is outside 1..1000000", c.max_binds_in_flight));
  }
  if (c.bind_connections < 1 || c.bind_connections > 1024) {
    check.Fail("bindConnections", fmt::format("{} is outside 1..1024", c.bind_connections));
  }
  if (c.filter_hold_queued_binds < 0 || c.filter_hold_queued_binds > 1'000'000) {
    check.Fail("filterHoldQueuedBinds",
               fmt::format("{} is outside 0..1000000", c.filter_hold_queued_binds));
  }
  if (c.filter_hold_limit.count() < 0) {
    check.Fail("filterHoldLimit", "must not be negative (0s: never hold)");
  }

  check.Positive("discoveryInterval", c.discovery_interval);
  check.Positive("maxOutOfSync", c.max_out_of_sync);
  check.Positive("watchIdleTimeout", c.watch_idle_timeout);
  check.Positive("reservationTTL", c.reservation_ttl);
  check.Positive("nominationTTL", c.nomination_ttl);
  check.Positive("reclaimInterval", c.reclaim_interval);
  check.Positive("gangScheduleTimeout", c.gang_schedule_timeout);
  if (c.reclaim_max_pods_per_pass < 1) {
    check.Fail("reclaimMaxPodsPerPass", fmt::format("{} is below 1 (reclaim: off stops planning)",
                                                    c.reclaim_max_pods_per_pass));
  }
  if (c.plan_max_steps < 1) {
    check.Fail("planMaxSteps", fmt::format("{} is below 1", c.plan_max_steps));
  }
  check.Positive("planTimeCap", c.plan_time_cap);
  check.Positive("statusUpdateInterval", c.status_update_interval);
  check.Positive("requeueNudgeInterval", c.requeue_nudge_interval);
  check.Positive("eventRefreshInterval", c.event_refresh_interval);
  if (!(c.max_events_per_second > 0)) {
    check.Fail("maxEventsPerSecond", "must be larger than 0 (events: false stops Events)");
  }
  if (c.max_events_per_namespace_per_minute < 1) {
    check.Fail("maxEventsPerNamespacePerMinute", "must be at least 1 (events: false stops Events)");
  }
  if (c.event_burst < 1) check.Fail("eventBurst", "must be at least 1");
  if (c.event_burst_per_namespace < 1) check.Fail("eventBurstPerNamespace", "must be at least 1");
  if (!(c.max_evictions_per_second > 0)) {
    check.Fail("maxEvictionsPerSecond", "must be larger than 0 (reclaim: off stops evictions)");
  }
  if (c.max_evictions_per_namespace_per_minute < 1) {
    check.Fail("maxEvictionsPerNamespacePerMinute",
               "must be at least 1 (reclaim: off stops evictions)");
  }
  check.OneOf("leaderElection", c.leader_election, {"off", "follow-scheduler"},
              "leader election mode");
  const std::size_t slash = c.leader_lease.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == c.leader_lease.size() ||
      c.leader_lease.find('/', slash + 1) != std::string::npos) {
    check.Fail("leaderLease",
               fmt::format("\"{}\" must be namespace/name (kube-scheduler's leaderElection "
                           "resourceNamespace/resourceName)",
                           c.leader_lease));
  }
  check.Positive("leaseDuration", c.lease_duration);
  check.Positive("leaseRenewDeadline", c.lease_renew_deadline);
  check.Positive("leaseCheckInterval", c.lease_check_interval);
  if (c.lease_renew_deadline >= c.lease_duration) {
    check.Fail("leaseRenewDeadline",
               fmt::format("{} ms must be shorter than leaseDuration ({} ms): the difference is "
                           "the margin before another replica may act",
                           c.lease_renew_deadline.count(), c.lease_duration.count()));
  }
  if (c.lease_check_interval * 2 > c.lease_renew_deadline) {
    check.Fail("leaseCheckInterval",
               fmt::format("{} ms must be at most half of leaseRenewDeadline ({} ms): each read "
                           "must find a renewal well before the tenure runs out",
                           c.lease_check_interval.count(), c.lease_renew_deadline.count()));
  }
}

}  // namespace capext
