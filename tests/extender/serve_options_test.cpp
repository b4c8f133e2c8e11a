// serve's options from the config (extender/serve_options.h): gangScheduleTimeout reaches both
// filter mode's group holds (ServiceOptions) and the admission loop's plan (AdmissionLoopOptions).
#include "extender/serve_options.h"

#include <catch2/catch.hpp>

#include "config/extender_config.h"

namespace capext {
namespace serve_options_test {
namespace {

TEST_CASE("gangScheduleTimeout and reservationTTL reach the verbs and the admission loop",
          "[serve_options]") {
  ExtenderConfig config;
  config.gang_schedule_timeout = std::chrono::milliseconds(45'000);
  config.reservation_ttl = std::chrono::milliseconds(7'000);
  config.bind_deadline = std::chrono::milliseconds(1'500);
  config.max_binds_in_flight = 33;
  config.ignore_not_ready = true;
  const ServiceOptions service = ServiceOptionsFrom(config);
  CHECK(service.gang_schedule_timeout_ms == 45'000);
  CHECK(service.reservation_ttl_ms == 7'000);
  CHECK(service.bind_deadline == std::chrono::milliseconds(1'500));
  CHECK(service.max_binds_in_flight == 33);
  CHECK(service.ignore_not_ready);
  const AdmissionLoopOptions admission = AdmissionLoopOptionsFrom(config);
  CHECK(admission.plan.default_group_timeout_ms == 45'000);
  CHECK(admission.hold_ttl_ms == 7'000);
  CHECK(admission.reporting_instance.rfind("capacity-extender", 0) == 0);
  // The defaults differ from the values above, so the test sees the config, not a default.
  CHECK(ExtenderConfig{}.gang_schedule_timeout != config.gang_schedule_timeout);
}

TEST_CASE("reserveAt filter reaches /filter, bind by default", "[serve_options]") {
  CHECK_FALSE(ServiceOptionsFrom(ExtenderConfig{}).reserve_at_filter);
  ExtenderConfig config;
  config.reserve_at = "filter";
  CHECK(ServiceOptionsFrom(config).reserve_at_filter);
}

TEST_CASE("fairSharing reaches the admission loop's plan and its reclaim, off by default",
          "[serve_options]") {
  CHECK_FALSE(AdmissionLoopOptionsFrom(ExtenderConfig{}).plan.fair_sharing);
  CHECK_FALSE(AdmissionLoopOptionsFrom(ExtenderConfig{}).reclaim.fair.enabled);
  ExtenderConfig config;
  config.fair_sharing = true;
  config.fair_share_min_run_time = std::chrono::milliseconds(90'000);
  const AdmissionLoopOptions options = AdmissionLoopOptionsFrom(config);
  CHECK(options.plan.fair_sharing);
  // The gated units' plans reclaim between borrowers with the configured minimum run time
  // (docs/fair-sharing.md#gate-mode-the-admission-loop-reclaims-for-the-barrier).
  CHECK(options.reclaim.fair.enabled);
  CHECK(options.reclaim.fair.min_run_time_ms == 90'000);
  CHECK(ExtenderConfig{}.fair_share_min_run_time != config.fair_share_min_run_time);
}

}  // namespace
}  // namespace serve_options_test
}  // namespace capext
