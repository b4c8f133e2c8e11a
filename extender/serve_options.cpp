#include "extender/serve_options.h"

#include "extender/leadership/leadership.h"

namespace capext {

std::string EventReportingInstance(const std::string& controller) {
  const std::string host = HostName();
  if (host.empty()) return controller;
  return (controller + "-" + host).substr(0, 128);
}

FairReclaimOptions FairReclaimOptionsFrom(const ExtenderConfig& config) {
  FairReclaimOptions options;
  options.enabled = config.fair_sharing;
  options.min_run_time_ms = config.fair_share_min_run_time.count();
  return options;
}

ServiceOptions ServiceOptionsFrom(const ExtenderConfig& config) {
  ServiceOptions options;
  options.reservation_ttl_ms = config.reservation_ttl.count();
  options.reserve_at_filter = config.reserve_at == "filter";
  options.ignore_not_ready = config.ignore_not_ready;
  options.gang_schedule_timeout_ms = config.gang_schedule_timeout.count();
  options.bind_deadline = config.bind_deadline;
  options.max_binds_in_flight = static_cast<std::size_t>(config.max_binds_in_flight);
  options.fair_reclaim = FairReclaimOptionsFrom(config);
  return options;
}

AdmissionLoopOptions AdmissionLoopOptionsFrom(const ExtenderConfig& config) {
  AdmissionLoopOptions options;
  options.plan.default_group_timeout_ms = config.gang_schedule_timeout.count();
  options.plan.fair_sharing = config.fair_sharing;
  options.hold_ttl_ms = config.reservation_ttl.count();
  options.admit_at_creation = config.admit_at_creation;
  options.reclaim.nomination_ttl_ms = config.nomination_ttl.count();
  options.reclaim.fair = FairReclaimOptionsFrom(config);
  options.reporting_instance = EventReportingInstance("capacity-extender");
  return options;
}

}  // namespace capext
