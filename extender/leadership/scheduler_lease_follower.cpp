#include "extender/leadership/scheduler_lease_follower.h"

#include <fmt/format.h>

#include "extender/http/thread_name.h"
#include "extender/kube/lease_record.h"
#include "extender/log.h"

namespace capext {

SchedulerLeaseFollower::SchedulerLeaseFollower(kube::RestClient* client, Options options)
    : client_(client),
      options_(std::move(options)),
      tenure_(LeaseTenure::Settings{options_.identity,
                                    options_.lease_namespace + "/" + options_.lease_name,
                                    options_.lease_duration, options_.renew_deadline}) {}

SchedulerLeaseFollower::~SchedulerLeaseFollower() {
  Stop();
}

void SchedulerLeaseFollower::Start() {
  Log(LogLevel::kInfo, "following kube-scheduler's leader lease",
      {{"lease", options_.lease_namespace + "/" + options_.lease_name},
       {"identity", options_.identity},
       {"lease_duration_ms", std::to_string(options_.lease_duration.count())},
       {"renew_deadline_ms", std::to_string(options_.renew_deadline.count())},
       {"check_interval_ms", std::to_string(options_.check_interval.count())}});
  thread_ = std::jthread([this](std::stop_token stop) {
    http::NameThisThread("ce-lease");
    Run(stop);
  });
}

void SchedulerLeaseFollower::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  std::lock_guard lock(mutex_);
  stopped_ = true;
  NoteLeadingLocked(Clock::now());
}

void SchedulerLeaseFollower::Run(std::stop_token stop) {
  std::mutex wait_mutex;
  std::unique_lock wait_lock(wait_mutex);
  while (!stop.stop_requested()) {
    const Clock::time_point next = Clock::now() + options_.check_interval;
    ReadOnce(stop);
    // Between reads the tenure can only run out: note it when it does.
    while (!stop.stop_requested() && Clock::now() < next) {
      {
        std::lock_guard lock(mutex_);
        NoteLeadingLocked(Clock::now());
      }
      const auto step =
          std::min<Clock::duration>(next - Clock::now(), std::chrono::milliseconds(100));
      wake_.wait_for(wait_lock, stop, step, [] { return false; });
    }
  }
}

void SchedulerLeaseFollower::ReadOnce(std::stop_token stop) {
  kube::LeaseRecord record;
  const Clock::time_point sent = Clock::now();
  // A read slower than the renew deadline could not extend the tenure anyway.
  Status s = kube::ReadLease(client_, options_.lease_namespace, options_.lease_name, &record, stop,
                             options_.renew_deadline);
  const Clock::time_point received = Clock::now();
  std::lock_guard lock(mutex_);
  if (s.ok()) {
    const bool holder_changed = tenure_.has_read() && (record.holder != tenure_.last().holder ||
                                                       record.exists != tenure_.last().exists);
    tenure_.Observe(record, sent, received);
    if (holder_changed) {
      Log(LogLevel::kInfo, "the leader lease changed hands",
          {{"lease", tenure_.settings().lease},
           {"holder",
            record.exists ? (record.holder.empty() ? "none" : record.holder) : "no lease"},
           {"lease_transitions", std::to_string(record.transitions)}});
    }
  } else {
    Log(LogLevel::kWarn, "cannot read the leader lease", {{"error", s.message()}});
    tenure_.ObserveFailure(s.message());
  }
  NoteLeadingLocked(received);
}

void SchedulerLeaseFollower::NoteLeadingLocked(Clock::time_point now) const {
  const bool leads = !stopped_ && tenure_.Leads(now);
  if (leads == leading_) return;
  leading_ = leads;
  ++transitions_;
  if (leads) {
    Log(LogLevel::kInfo, "this replica now acts (its kube-scheduler holds the leader lease)",
        {{"holder", tenure_.last().holder},
         {"acts_for_ms", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            tenure_.ActsUntil(now) - now)
                                            .count())}});
  } else {
    Log(LogLevel::kWarn, "this replica stopped acting", {{"reason", tenure_.Reason(now)}});
  }
}

Leadership::Clock::time_point SchedulerLeaseFollower::ActsUntil() const {
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Clock::now();
  NoteLeadingLocked(now);
  if (stopped_) return Clock::time_point::min();
  return tenure_.ActsUntil(now);
}

LeadershipReport SchedulerLeaseFollower::Report() const {
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Clock::now();
  NoteLeadingLocked(now);
  LeadershipReport s;
  s.mode = "follow-scheduler";
  s.leads = !stopped_ && tenure_.Leads(now);
  s.identity = options_.identity;
  s.lease = tenure_.settings().lease;
  s.holder = tenure_.last().holder;
  s.lease_transitions = tenure_.last().transitions;
  s.transitions = transitions_;
  s.reason = stopped_ ? "stopped" : tenure_.Reason(now);
  return s;
}

}  // namespace capext
