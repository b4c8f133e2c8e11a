// The options serve derives from the extender config for the verbs (ServiceOptions) and gate
// mode's admission loop (AdmissionLoopOptions), in one place so a test can check every setting
// reaches its component (the README and deploy/config/extender-config.yaml document each setting).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "config/extender_config.h"
#include "core/fair_victim_eligibility.h"
#include "extender/admission/admission_loop.h"
#include "extender/verbs/extender_service.h"

namespace capext {

// fairSharing and fairShareMinRunTime as the reclaim plan search takes them
// (docs/fair-sharing.md#6-reclaim-between-borrowers): the one place they are built, for the
// reclaim controller, POST /explain and `capacity-extender explain`, so that explain shows the plan
// the controller would make. now_ms is 0: each caller sets its decision's clock.
FairReclaimOptions FairReclaimOptionsFrom(const ExtenderConfig& config);

// reservationTTL, ignoreNotReady, bindDeadline, maxBindsInFlight, and gangScheduleTimeout (how
// long filter mode's group holds last when the PodGroup sets no timeout), and the fair reclaim
// options for /explain.
ServiceOptions ServiceOptionsFrom(const ExtenderConfig& config);

// gangScheduleTimeout (a group's timeout when its PodGroup sets none: docs/workloads-live.md
// "The admission loop", Timeouts), reservationTTL (how long an in-flight gate removal's
// explicit hold lasts unless the watch shows admitted-at first), nominationTTL, and fairSharing
// with fairShareMinRunTime (the order of the queue and the plans' reclaim between borrowers).
AdmissionLoopOptions AdmissionLoopOptionsFrom(const ExtenderConfig& config);

// reportingInstance of our Events: "<controller>-<hostname>" as client-go names it (the pod
// name in a cluster), within the API server's 128 characters.
std::string EventReportingInstance(const std::string& controller);

}  // namespace capext
