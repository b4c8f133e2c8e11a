// SchedulerLeaseFollower: Leadership by following kube-scheduler's leader Lease
// (leaderElection: follow-scheduler; docs/architecture.md#two-replicas-one-actor). A thread of its
// own reads the Lease with a GET every `check_interval` and feeds the reads to a LeaseTenure,
// which judges on this process's monotonic clock whether the holder is this pod's scheduler and
// until when this replica may act. It logs each start and stop of acting with the reason.
// Needs RBAC: coordination.k8s.io leases get, on that lease.
// Thread-safety: ActsUntil and Status from any thread; Start/Stop from one thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "extender/kube/rest_client.h"
#include "extender/leadership/leadership.h"
#include "extender/leadership/lease_tenure.h"

namespace capext {

class SchedulerLeaseFollower final : public Leadership {
 public:
  struct Options {
    std::string lease_namespace = "kube-system";
    std::string lease_name = "kube-scheduler";
    std::string identity;  // REQUIRES: not empty
    std::chrono::milliseconds lease_duration{15000};
    std::chrono::milliseconds renew_deadline{10000};
    std::chrono::milliseconds check_interval{1000};
  };

  // `client` must outlive the follower (or Stop() must come first).
  SchedulerLeaseFollower(kube::RestClient* client, Options options);
  ~SchedulerLeaseFollower() override;

  // Starts the reading thread (the first read is immediate).
  void Start();
  // Stops it (a read in flight is cancelled). Afterwards this replica no longer acts.
  void Stop();

  Clock::time_point ActsUntil() const override;
  LeadershipReport Report() const override;

 private:
  void Run(std::stop_token stop);
  void ReadOnce(std::stop_token stop);
  // Logs and counts a change of Leads(); REQUIRES: mutex_ held. Called by the thread after each
  // read and between reads, and by every ActsUntil/Report, so the count is exact when read.
  void NoteLeadingLocked(Clock::time_point now) const;

  kube::RestClient* client_;
  Options options_;
  mutable std::mutex mutex_;
  LeaseTenure tenure_;
  bool stopped_ = false;
  mutable bool leading_ = false;
  mutable int64_t transitions_ = 0;
  std::condition_variable_any wake_;
  std::jthread thread_;
};

}  // namespace capext
