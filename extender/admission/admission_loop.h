// AdmissionLoop: gate mode's actor (docs/workloads-live.md#the-admission-loop). On the replica
// that acts (its Leadership; a follower only plans and publishes verdicts), it plans with core's
// PlanAdmissions over the cache, holds the quota of every member of every admitted unit, in the
// plan's order (ClusterState::Hold), then lifts their gates, a few patches at once (one JSON patch
// per pod: test the gate, remove it, stamp admitted-at); a failed patch releases that pod's hold.
// Groups that timed out have the members the plan names evicted (Eviction API) and their holds
// released; members without a controller are reported once, except those of a gang that lost its
// core, whose admission is revoked (ClusterState::RevokeAdmission, then one JSON patch removing
// admitted-at; an Event; retried with backoff). Every gated pod's verdict is kept for /pending and,
// when an EventSink is attached, written as an Event on the pod once per change of its reason (not
// per round).
//
// A gated gang whose unit waits on the quota or the nodes gets a reclaim plan across nodes
// (docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang,
// admission_reclaim.cpp): its members are nominated on their planned nodes, the victims evicted
// through the reclaim controller's ReclaimEvictions (its rate limits, lease check and victim
// Events), and the gates lifted by a later round once the room is free. With fair sharing, the
// units the sum of all mins blocks (the fairness barrier, units within min; single pods too) are
// planned the same way, with reclaim between borrowers
// (docs/fair-sharing.md#gate-mode-the-admission-loop-reclaims-for-the-barrier).
//
// Never on a cache out of sync (SchedulerCache::SyncReport): such a round plans, lifts, evicts
// and publishes nothing, and the next interval asks again.
//
// Event-driven: a round runs when the cluster state changed since the last one (its change
// journal's sequence moved) or when a second has passed with pods still gated, held or timing
// (timeouts need the clock, not a change).
//
// Thread-safety: RunOnce from one thread (the loop's own, or a test); Gated() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "config/pod_mutation.h"
#include "core/admission_queue.h"
#include "core/fair_victim_eligibility.h"
#include "core/fairness_snapshot.h"
#include "extender/leadership/leadership.h"
#include "extender/metrics.h"
#include "extender/reclaim/event_sink.h"
#include "extender/reclaim/pending_board.h"
#include "extender/reclaim/reclaim_controller.h"
#include "extender/scheduler_cache.h"

namespace capext {

// Lifts our scheduling gate from an admitted pod (live: kube::GateLifter). Open is called from
// up to AdmissionLoopOptions::max_lifts_in_flight threads at once.
struct GateOpenOutcome {
  bool ok = false;
  std::string error;    // why not, for the log
  bool reread = false;  // the cached pod was stale: it was read again (counted)
};
class GateOpener {
 public:
  virtual ~GateOpener() = default;
  virtual GateOpenOutcome Open(const Pod& pod, int64_t admitted_ms) = 0;
};

// Revokes the admission of a member whose gang lost its core (live: kube::AdmissionRevoker
// through ApiAdmissionRevocationWriter; docs/workloads-live.md#revoking-an-admission).
enum class RevocationWriteKind { kRevoked, kNothingToRevoke, kChanged, kFailed };
struct RevocationWriteOutcome {
  RevocationWriteKind kind = RevocationWriteKind::kFailed;
  std::string error;    // why not, for the log
  bool reread = false;  // the cached pod was stale: it was read again
};
class AdmissionRevocationWriter {
 public:
  virtual ~AdmissionRevocationWriter() = default;
  // Removes the pod's admitted-at annotation, when it still says `admitted_ms`.
  virtual RevocationWriteOutcome Revoke(const Pod& pod, int64_t admitted_ms) = 0;
};

// Gate mode's reclaim for gated gangs
// (docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang). Without
// `victim_order` (or with mode kOff, or without ReclaimThrough) gated gangs get no reclaim.
struct GateReclaimOptions {
  ReclaimMode mode = ReclaimMode::kOn;
  const VictimOrder* victim_order = nullptr;
  int64_t nomination_ttl_ms = 120'000;  // config nominationTTL: how long the freed room is held
  int64_t plan_max_steps = 250'000;     // the plan's budget of steps
  int64_t plan_time_cap_ms = 200;       // the wall-clock cap on one search
  // After a refused eviction the gang is not planned again for this long, doubling per
  // consecutive refusal up to the max (a longer Retry-After wins): the reclaim controller's.
  int64_t refusal_backoff_ms = 5'000;
  int64_t max_refusal_backoff_ms = 300'000;
  // fairSharing and fairShareMinRunTime (FairReclaimOptionsFrom): with `fair.enabled`, every plan
  // is searched with reclaim between borrowers, and the units the sum of all mins blocks (the
  // round's fairness barrier, units within min) are planned too, single pods included
  // (docs/fair-sharing.md#gate-mode-the-admission-loop-reclaims-for-the-barrier). now_ms and
  // cache are the loop's own.
  FairReclaimOptions fair;
};

struct AdmissionLoopOptions {
  AdmissionOptions plan;
  int64_t interval_ms = 200;     // how often the loop looks for changes
  int64_t tick_ms = 1000;        // a round at least this often while anything is gated
  int64_t hold_ttl_ms = 60'000;  // an explicit hold ends this long after admission unless
                                 // the pod's admitted-at annotation took over (a creation hold
                                 // unless the pod was stored)
  // admitAtCreation: /mutate may admit a new pod instead of gating it
  // (docs/workloads-live.md#admission-at-creation).
  bool admit_at_creation = true;
  int max_events_per_round = 20;  // Event writes per round; the rest wait for the next
  // Gate removals sent at once (docs/workloads-live.md#the-admission-loop): the API client's
  // pool of keep-alive connections. 1 sends them one after the other, in the plan's order.
  int max_lifts_in_flight = 4;
  // A failed revocation is retried after this, doubling per consecutive failure up to the max.
  int64_t revoke_retry_ms = 1000;
  int64_t max_revoke_retry_ms = 60'000;
  std::string reporting_instance = "capacity-extender";
  GateReclaimOptions reclaim;
};

class AdmissionLoop {
 public:
  AdmissionLoop(SchedulerCache* cache, Metrics* metrics, GateOpener* opener, Evictor* evictor,
                AdmissionLoopOptions options);
  ~AdmissionLoop();
  void AttachEvents(EventSink* sink) { events_ = sink; }
  // Acts only while `leadership` leads (without one: always); a follower plans and publishes
  // its verdicts for /pending but writes nothing. REQUIRES: before Start().
  void FollowLeadership(const Leadership* leadership) { leadership_ = leadership; }
  // Gated gangs' reclaims evict through `evictions` (the reclaim controller's: one set of rate
  // limits, one writer of victim Events). Without it, gated gangs get no reclaim. REQUIRES:
  // before Start(); it outlives the loop.
  void ReclaimThrough(ReclaimEvictions* evictions) { evictions_ = evictions; }
  // Members of a gang that lost its core, without a controller, have their admission revoked
  // through `writer` (docs/workloads-live.md#revoking-an-admission). Without it, they keep their
  // admission (reported only). REQUIRES: before Start(); it outlives the loop.
  void RevokeThrough(AdmissionRevocationWriter* writer) { revoker_ = writer; }

  // One round at the cache's clock. Returns the number of pods whose gate was lifted.
  int RunOnce();
  // admission_at_creation.cpp (docs/workloads-live.md#admission-at-creation): whether /mutate
  // admits `pod` (decoded from the review, namespace set; a single pod without other gates or
  // claims) at its creation, its quota held by a creation hold, or gates it. Thread-safe: called
  // from the webhook's threads, under the cache's write lock.
  CreationAdmission AdmitAtCreation(Pod pod);
  void Start();
  void Stop();

  // The gated pods' verdicts of the last round, for GET /pending and /ui: verdict kGated, `gate`
  // the reason ("QuotaExceeded", "QuotaNever", "GangWaiting", "NoPlacement", "OtherGates",
  // "FairShare"), the message /filter's words with the unit's prefix, verdict_ms when this message
  // was first given. By creation time, then namespace/name.
  std::vector<PendingPodRecord> Gated() const;

 private:
  bool Due(int64_t now_ms);
  bool Acts() const;
  void Admit(const AdmissionRound& round, int64_t now_ms, int* lifted);
  // Lifts one held pod's gate; on failure releases its explicit hold. Returns whether lifted.
  // Called from several threads at once (Admit's patches in flight).
  bool OpenGate(const Pod& pod, const std::string& unit, int64_t now_ms);
  void Expire(const AdmissionRound& round);
  // admission_revocation.cpp: revokes the admissions `round` lists, and retries the failed ones
  // whose time has come.
  void Revoke(const AdmissionRound& round, int64_t now_ms);
  void RevokedEvent(const Pod& pod, const std::string& note, int64_t now_ms);
  // An Event of the admission loop about one pod (reporting controller
  // capacity-extender.io/admission, action Admission); `name` is the Event's own name.
  EventObject PodEvent(const std::string& ns, const std::string& pod_name, const std::string& uid,
                       std::string name, const char* type, const char* reason,
                       const std::string& note, int64_t now_ms) const;
  // Drops from revoked_ the members the round no longer lists (the watch showed the patch).
  void ForgetRevoked(const std::set<std::string>& listed);
  void Publish(const AdmissionRound& round, int64_t now_ms, bool acts);
  // admission_reclaim.cpp: plans for the gated gangs `round` leaves waiting on the quota or the
  // nodes (and, with fair sharing, the units it leaves waiting on the shared capacity), and
  // follows the plans in flight (their members' messages on /pending).
  void Reclaim(AdmissionRound* round, int64_t now_ms, bool acts);
  void FollowPlans(AdmissionRound* round);

  // A gated unit's plan in flight (a gang's, or with fair sharing one pod's, keyed "pod ns/name"):
  // its members (store keys) and the victims it evicted.
  struct GangPlan {
    std::vector<std::string> members;
    std::vector<std::string> victims;  // "ns/name", eviction order
    std::string summary;               // the plan as the log and messages say it
    PlanView view;                     // the plan as /pending and /ui show it
    int64_t started_ms = 0;
  };

  SchedulerCache* cache_;
  Metrics* metrics_;
  GateOpener* opener_;
  Evictor* evictor_;
  EventSink* events_ = nullptr;
  ReclaimEvictions* evictions_ = nullptr;
  AdmissionRevocationWriter* revoker_ = nullptr;
  const Leadership* leadership_ = nullptr;
  AdmissionLoopOptions options_;

  uint64_t seen_sequence_ = 0;
  int64_t last_round_ms_ = 0;
  bool anything_waiting_ = true;
  bool held_ = false;                        // the last round was held: the cache was out of sync
  std::set<std::string> evicted_;            // pod uids evicted for a timeout (once each)
  std::set<std::string> reported_timeouts_;  // "group@admitted_ms" reported once
  std::map<std::string, std::string> evented_;  // pod key -> the message last written
  std::map<std::string, GangPlan> gang_plans_;  // by group Display(): plans in flight
  std::map<std::string, uint64_t> unplanned_;   // group -> journal sequence of its last no-plan
  // With fair sharing: a unit whose last search found no plan -> why (the search's words), which
  // its waiting pods say until it is planned again.
  std::map<std::string, std::string> no_plan_why_;
  // With fair sharing: when a unit without a plan is planned again even if the cluster did not
  // change (a pod reaching the minimum run time may become a victim).
  std::map<std::string, int64_t> replan_at_ms_;
  FairnessCache fairness_cache_;  // every quota's fairness per state version, for the searches
  std::map<std::string, std::string> in_flight_pods_;  // member store key -> its plan's group
  // A gang whose plan had an eviction refused: not planned again before until_ms.
  struct RefusalBackoff {
    int64_t until_ms = 0;
    int64_t backoff_ms = 0;  // the last wait; the next one doubles it
    std::string message;     // what its waiting members say meanwhile
  };
  std::map<std::string, RefusalBackoff> backoff_;  // by group Display()
  // Admissions being revoked, by pod store key, until the patch lands (or is moot).
  struct Revocation {
    int64_t admitted_ms = 0;  // the admitted-at revoked
    std::string note;         // the Event's text, with the numbers
    int64_t next_ms = 0;      // not tried again before
    int64_t backoff_ms = 0;   // the last wait; the next one doubles it
  };
  std::map<std::string, Revocation> revoking_;
  // Revocations written, until the watch shows them (the member then leaves the round's lists).
  std::set<std::string> revoked_;

  mutable std::mutex mutex_;
  std::map<std::string, PendingPodRecord> gated_;  // by store key; guarded by mutex_

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::jthread thread_;
};

}  // namespace capext
