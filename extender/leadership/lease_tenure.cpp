#include "extender/leadership/lease_tenure.h"

#include <algorithm>

#include <fmt/format.h>

namespace capext {
namespace {

int64_t Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

bool LeaseTenure::IsOurs(const std::string& holder) const {
  const std::string& id = settings_.identity;
  if (id.empty() || holder.size() < id.size() || holder.compare(0, id.size(), id) != 0) {
    return false;
  }
  return holder.size() == id.size() || holder[id.size()] == '_';
}

std::chrono::milliseconds LeaseTenure::TenureOf(const kube::LeaseRecord& record) const {
  if (record.duration_seconds <= 0) return settings_.renew_deadline;
  // Keep the configured margin against the duration the scheduler actually wrote.
  const auto margin = settings_.lease_duration - settings_.renew_deadline;
  const auto written = std::chrono::milliseconds(record.duration_seconds * 1000) - margin;
  return std::min(settings_.renew_deadline, written);
}

void LeaseTenure::Observe(const kube::LeaseRecord& record, TimePoint sent, TimePoint received) {
  last_error_.clear();
  const TimePoint others_end = received + settings_.renew_deadline;
  if (!has_read_) {
    // Nothing is known of what happened before: any holder's sidecar may still be acting.
    others_until_ = others_end;
    own_until_ = TimePoint::min();
  } else if (!(record == last_)) {
    const bool ours = record.exists && IsOurs(record.holder);
    const bool was_ours = last_.exists && IsOurs(last_.holder);
    const bool foreign = !ours || !was_ours || record.transitions != last_.transitions ||
                         record.holder != last_.holder;
    if (foreign) others_until_ = std::max(others_until_, others_end);
    // Written after the previous read was sent.
    own_until_ = ours ? last_sent_ + TenureOf(record) : TimePoint::min();
  }
  has_read_ = true;
  last_ = record;
  last_sent_ = sent;
}

LeaseTenure::TimePoint LeaseTenure::ActsUntil(TimePoint now) const {
  if (now < others_until_ || now >= own_until_) return TimePoint::min();
  return own_until_;
}

std::string LeaseTenure::Reason(TimePoint now) const {
  if (Leads(now)) return "";
  const std::string& lease = settings_.lease;
  std::string reason;
  if (!has_read_) {
    reason = fmt::format("the lease {} has not been read yet", lease);
  } else if (!last_.exists) {
    reason = fmt::format(
        "lease {} not found: is kube-scheduler's leader election on? (without it, set "
        "leaderElection: off and run one replica)",
        lease);
  } else if (last_.holder.empty()) {
    reason = fmt::format("the lease {} is not held", lease);
  } else if (!IsOurs(last_.holder)) {
    reason = fmt::format("the leaseholder {} is not this replica ({})", last_.holder,
                         settings_.identity);
  } else if (TenureOf(last_) <= std::chrono::milliseconds(0)) {
    reason = fmt::format(
        "the lease {} has leaseDurationSeconds {}: no tenure is left within the margin of {} ms "
        "(leaseDuration - leaseRenewDeadline)",
        lease, last_.duration_seconds,
        (settings_.lease_duration - settings_.renew_deadline).count());
  } else if (own_until_ == TimePoint::min()) {
    reason = fmt::format("waiting to see this replica's kube-scheduler renew the lease {}", lease);
  } else if (now >= own_until_) {
    reason = fmt::format(
        "the last renewal of the lease {} seen by this replica is older than leaseRenewDeadline "
        "({} ms): stopped acting",
        lease, settings_.renew_deadline.count());
  } else {
    reason = fmt::format(
        "waiting {} ms more for the previous holder's tenure to end (leaseRenewDeadline after it "
        "was last seen)",
        Ms(others_until_ - now));
  }
  if (!last_error_.empty()) reason += "; last read failed: " + last_error_;
  return reason;
}

}  // namespace capext
