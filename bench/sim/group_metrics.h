// GroupMetrics: what a simulation measures about pod groups (docs/workloads.md), per tenant, as
// members start and stop. Definitions (docs/workloads.md#6-measuring-groups-in-the-simulator,
// also in the report, sim_report_json.cpp):
//  - a group is *started* the first time at least minMember of its members run at once (its
//    "complete" of docs/workloads.md); time to start = that instant - the group's arrival;
//  - a *run* of a group is a stretch of time with at least one member running (members that
//    stop and start at one instant do not end it: no time passes); a run that has had minMember
//    members running at once is *finishing* from its first member's completion on: its
//    remaining members end work the job did, they wait for nothing;
//  - a group is *partially running* while 1 <= running members < minMember and its run is not
//    finishing: its running members hold capacity for a job that cannot work (members bound
//    before the others, or left below the minimum by evictions). partial cpu/gpu = the integral
//    over time of those members' cpu and GPUs (cpu-milli x ms, gpu units x ms); members binding
//    one after another at one instant are not partially running (no time passes);
//  - member evictions: evictions of a group's members; per start: over the groups started.
// Time moves forward only (AdvanceTo); every change applies at the current time. A tenant's
// partial integrals are brought up to date when its partial level changes and at Finish, not on
// every step of time: counters() is complete after Finish.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

namespace capext {

struct GroupCounters {
  int64_t submitted = 0;  // groups (minMember >= 2) that arrived
  int64_t started = 0;    // reached minMember running members at least once
  int64_t member_evictions = 0;
  int64_t partial_now = 0;   // groups partially running at the end
  int64_t ever_partial = 0;  // groups partially running for some time (> 0 ms)
  __int128 partial_cpu_milli_ms = 0;
  __int128 partial_gpu_ms = 0;          // in the gpu dimension's units
  std::vector<int64_t> start_waits_ms;  // sorted by Finish()
};

class GroupMetrics {
 public:
  // `tenants`: the number of tenants (indices of the counters).
  explicit GroupMetrics(std::size_t tenants)
      : counters_(tenants),
        partial_cpu_(tenants, 0),
        partial_gpu_(tenants, 0),
        settled_ms_(tenants, 0) {}

  // Registers group g (ids 0.. in call order) of `tenant` with its minimum and arrival.
  int AddGroup(int tenant, int32_t min_member, int64_t arrival_ms);
  void AdvanceTo(int64_t t);
  // A member of group g started / stopped, holding `cpu` and `gpu`: evicted, or else completed
  // (its work done; a deletion counts so).
  void MemberStarted(int g, int64_t cpu, int64_t gpu);
  void MemberStopped(int g, int64_t cpu, int64_t gpu, bool evicted);
  void Finish(int64_t end_ms);

  // Complete after Finish (the partial integrals are brought up to date lazily).
  const std::vector<GroupCounters>& counters() const { return counters_; }
  std::size_t groups() const { return groups_.size(); }

 private:
  struct Group {
    int tenant = 0;
    int32_t min_member = 0;
    int64_t arrival_ms = 0;
    int32_t running = 0;
    int64_t cpu = 0, gpu = 0;  // of the running members
    bool started = false;
    bool was_partial = false;
    bool run_complete = false;  // this run has had min_member running at once
    bool finishing = false;     // ... and a member of it has completed since
    int64_t idle_since = -1;    // when the last member stopped (running == 0)
    bool Partial() const { return running > 0 && running < min_member && !finishing; }
  };
  void Leave(int gi);  // removes g's partial level before a change
  void Enter(int gi);  // adds it back after
  // Adds tenant's partial integrals over [settled_ms_[tenant], now_), its level constant there.
  void Settle(int tenant);

  int64_t now_ = 0;
  std::vector<Group> groups_;
  std::vector<GroupCounters> counters_;
  std::vector<int64_t> partial_cpu_, partial_gpu_;  // per tenant, current level
  std::vector<int64_t> settled_ms_;  // per tenant: its partial integrals cover [0, this)
  std::set<int> partial_;            // groups partially running now
};

}  // namespace capext
