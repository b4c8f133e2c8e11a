// Leadership: may this replica act on its own now? (docs/architecture.md#two-replicas-one-actor.)
// Every writer that is not answering one of kube-scheduler's requests asks it just before each
// write: reclaim evictions, reclaim records, nominations that follow evictions, requeue nudges,
// status.used patches, Events, and every background writer added later. A write is sent only
// while Leads() and bounded by TimeLeft(), so it is abandoned when the tenure ends.
//
// Implementations: SoleReplica (leaderElection: off, embedded mode: always acts) and
// SchedulerLeaseFollower (follows kube-scheduler's leader Lease). Tests inject their own.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace capext {

// What /readyz and /metrics say about this replica's leadership.
struct LeadershipReport {
  std::string mode;               // "off" or "follow-scheduler"
  bool leads = false;             // acts now
  std::string identity;           // this replica's identity ("" with mode off)
  std::string lease;              // "namespace/name" of the followed lease ("" with mode off)
  std::string holder;             // spec.holderIdentity as last read ("" = none)
  int64_t lease_transitions = 0;  // spec.leaseTransitions as last read
  int64_t transitions = 0;        // times this replica started or stopped acting
  std::string reason;             // why it does not act; "" when it does
};

class Leadership {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~Leadership() = default;

  // The end of this replica's tenure: a write may be sent before it and must be done by it.
  // Clock::time_point::max() when it has no end; a time not after now when it does not act.
  virtual Clock::time_point ActsUntil() const = 0;
  virtual LeadershipReport Report() const = 0;

  bool Leads() const { return ActsUntil() > Clock::now(); }
  // The timeout of a write sent now: `limit`, cut to the tenure left; 0 when it does not act.
  std::chrono::milliseconds TimeLeft(std::chrono::milliseconds limit) const;
};

// leaderElection: off (one replica, or kube-scheduler without leader election), and embedded
// mode: always acts.
class SoleReplica final : public Leadership {
 public:
  Clock::time_point ActsUntil() const override { return Clock::time_point::max(); }
  LeadershipReport Report() const override;
};

// This machine's hostname (the pod name in a cluster: kube-scheduler's holderIdentity starts
// with it); "" when unknown.
std::string HostName();

// The leadership part of the /readyz body: a JSON object (no trailing newline).
std::string LeadershipJson(const LeadershipReport& status);
// The leadership metrics in the Prometheus text format (capacity_extender_leader, ...).
std::string LeadershipMetrics(const LeadershipReport& status);

}  // namespace capext
