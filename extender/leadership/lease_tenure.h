// LeaseTenure: the pure rule by which a sidecar judges, on its own monotonic clock, whether its
// kube-scheduler holds the leader Lease and until when this replica may act
// (docs/architecture.md#two-replicas-one-actor):
//   - a read whose record differs from the previous successful read's (resourceVersion) was
//     written after that previous read was sent, at `p`; if it names our scheduler as holder,
//     this replica acts until p + tenure, tenure = min(renew_deadline, the record's
//     leaseDurationSeconds - margin), margin = lease_duration - renew_deadline;
//   - a changed record whose holder is not ours, or whose holder or leaseTransitions changed, may
//     stand for another replica's renewal written before the read returned at `r`: this replica
//     acts only after r + renew_deadline (another sidecar's tenure ends by then);
//   - the first read proves nothing about our scheduler's renewals and bounds any previous
//     holder's tenure by its return time + renew_deadline;
//   - a record that no longer names our scheduler ends the tenure at once; failed reads change
//     nothing (the tenure runs out by itself).
// Timestamps inside the Lease (renewTime, acquireTime) are never used.
// Thread-safety: a value type; the caller serialises access.
#pragma once

#include <chrono>
#include <string>

#include "extender/kube/lease_record.h"

namespace capext {

class LeaseTenure {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;

  struct Settings {
    std::string identity;  // our scheduler's holderIdentity is this, or this + "_" + anything
    std::string lease;     // "namespace/name", for messages
    std::chrono::milliseconds lease_duration{15000};  // kube-scheduler's leaseDuration
    std::chrono::milliseconds renew_deadline{10000};  // REQUIRES: < lease_duration
  };

  explicit LeaseTenure(Settings settings) : settings_(std::move(settings)) {}

  // A read sent at `sent` returned `record` at `received` (sent <= received).
  void Observe(const kube::LeaseRecord& record, TimePoint sent, TimePoint received);
  // A read failed: remembered for Reason() only.
  void ObserveFailure(std::string error) { last_error_ = std::move(error); }

  // The end of this replica's tenure as judged at `now`: TimePoint::min() when it does not act.
  TimePoint ActsUntil(TimePoint now) const;
  bool Leads(TimePoint now) const { return ActsUntil(now) > now; }
  // Why this replica does not act at `now`; "" when it does.
  std::string Reason(TimePoint now) const;

  // True when `holder` is our scheduler's identity ("<identity>" or "<identity>_<suffix>").
  bool IsOurs(const std::string& holder) const;
  bool has_read() const { return has_read_; }
  const kube::LeaseRecord& last() const { return last_; }
  const Settings& settings() const { return settings_; }

 private:
  std::chrono::milliseconds TenureOf(const kube::LeaseRecord& record) const;

  Settings settings_;
  bool has_read_ = false;
  kube::LeaseRecord last_;
  TimePoint last_sent_{};                      // when the last successful read was sent
  TimePoint own_until_ = TimePoint::min();     // our scheduler's last proven renewal + tenure
  TimePoint others_until_ = TimePoint::min();  // the latest end of another sidecar's tenure
  std::string last_error_;                     // of the last read, if it failed
};

}  // namespace capext
