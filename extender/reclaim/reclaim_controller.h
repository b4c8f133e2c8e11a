// ReclaimController: our own preemption (docs/capacity-semantics.md#8-the-reclaim-controller).
// Every interval it looks at the pending pods of quota namespaces whose verdict may have changed
// (below), in priority order, and for each one that fits nowhere plans with PlanReclaim (victim
// selection on every node, the candidate order to choose), evicts the victims (Eviction API in live
// mode: a refusal, e.g. 429 from a PDB, makes it try the next candidate node), records a nomination
// that holds the room against every other pod until the pod binds or the TTL expires, and nudges
// kube-scheduler once the victims are gone. It also nudges pods that kube-scheduler marked
// unschedulable but that fit now (a quota raised, usage dropped: kubernetes#127290), never a pod
// that still cannot fit.
// Safety: a global evictions-per-second budget and a per-namespace per-minute budget, shared with
// gate mode's admission loop (ReclaimEvictions, reclaim_evictions.h); never a second reclaim for a
// pod in flight; a dry-run mode that only logs the plan. A pass does nothing at all (no plan,
// eviction, expiry or nudge) while the cache is out of sync (SchedulerCache::SyncReport,
// docs/capacity-semantics.md#12-deciding-on-a-cache-that-is-out-of-sync): it says why on the board
// (/pending), in capacity_extender_reclaim_held and in the log.
//
// A pending member of a starting gang whose waiting members are several is planned for as one
// placement across nodes instead (docs/reclaim-plan.md, SearchReclaimPlan): the victims on any
// nodes, every member nominated on its planned node, every member's reclaim in flight (none is
// planned again while the hold lasts); a hold that ends unbound counts its victims as wasted
// evictions (capacity_extender_reclaim_wasted_evictions_total, for every reclaim).
//
// Every pod it looks at gets a verdict (pod_verdict.h), kept on the PendingBoard (GET /pending)
// and, when an EventRecorder is attached, turned into a Warning Event on the pod. Events are
// written by a thread of their own (FlushEvents), so a slow API server never delays a reclaim,
// and on their own schedule: a pod that is not planned again still has its series refreshed.
//
// Event-driven: a pod is planned again only when something that can change its verdict changed.
// The ClusterState's ChangeJournal (core/change_journal.h) says what changed since the last pass;
// a PendingIndex (pending_index.h) keeps every pending quota pod with the rule below, set from
// its last verdict, and queues the pods a change concerns. Its own changes (spec, status,
// deletion, binding, a reservation, our nomination of it starting or ending) always wake a pod.
// Beyond that, the rule is derived from what the plugins its verdict waits on declare
// (docs/architecture.md#declared-changes-and-wake-rules, core/declared_changes.h; "its tree": the
// used, spec and nominations of every quota of the root quota tree holding its namespace,
// quota_tree_reach.h; with flat quotas, its own quota alone):
//   Fits                     every admission rule of the profile (any could start refusing it:
//                            AdmissionChanges), and the one node it fits on (node fit: a pod that
//                            fits one unchanged node still fits); a timer for the next requeue
//                            nudge while it carries the unschedulable condition.
//   QuotaExceeded and        only what the rule that refused it declares (the built-in max rule:
//     Unresolvable           its tree, since only a max on its path can change that).
//   QuotaExceeded, other;    every admission rule of the profile, the victim rule
//   Unschedulable;           (kVictimRuleChanges: who borrows, the candidates on every node), the
//   a dry-run plan           victim order (VictimOrder::Declared) and node fit (any node); a
//                            dry-run plan also the choice among candidates
//                            (kCandidateOrderChanges: PodDisruptionBudgets).
//   AwaitingScheduler        nothing else: only kube-scheduler marking it unschedulable (its own
//                            status) changes this.
//   WaitingForReclaim        nothing else: our nomination of it ending (bound, expired) is a
//                            change of its own.
//   ReclaimRefused/Backoff   a timer at the end of its backoff (the verdict is fixed until then);
//     after refusals
//   ReclaimRefused by the    a timer at the next pass.
//     eviction rate limit
// With the built-in rules this is: Fits, its tree, any quota namespace and its node; refused
// for good by a max, its tree; otherwise its tree, any quota namespace and any node.
// Which changes reach whom:
//   - a namespace's used or nominations, a quota's min or max: its whole root tree (an ancestor's
//     used and max decide every descendant's pods; the exact reach would need each pod's blocking
//     level), and a used or nominations change in a quota namespace also the cluster-wide rule;
//   - a quota's min (anywhere in a tree), or a change of the set of quotas or of roots: the
//     cluster-wide rule (the sum of mins is over the roots; a min decides who borrows, so who may
//     be a victim) — a max alone does not;
//   - the tree's shape (a quota added or removed, a parent changed): every pod subscribed to a
//     tree, since namespaces move between trees (rare: worth no finer rule);
//   - a quota added or removed also re-reads its namespace's pending pods.
// Any PriorityClass change wakes every pod (priorities of pods and victims move); a journal that
// overflowed (more changes than it keeps between two passes) re-derives everything from the state.
// A pass plans at most `max_pods_per_pass` pods, longest queued first (then in priority order);
// the rest wait for the next pass (capacity_extender_reclaim_backlog). With nothing changing, a
// pass costs nothing per pending pod: the expiry of reservations and nominations, the reclaims in
// flight, and the journal's new entries.
// The events thread learns which pods were bound or went away from the journal too (a cursor of
// its own), so their Events stop at its next flush even when they are not planned.
//
// Two replicas, one actor (architecture.md): every write it makes on its own (the reclaim record,
// evictions, requeue nudges, Events) is sent only while its Leadership leads, checked just before
// each one. A follower plans and publishes verdicts (GET /pending) but writes nothing; when it
// becomes the actor it plans every pending pod again. Before evicting for a pod, the actor records
// the reclaim on the pod (ReclaimRecorder); every replica turns a record it did not write into
// its own nomination and an in-flight reclaim (AdoptRecords), so the room stays held and no
// victim is chosen twice across a change of actor. A reclaim in flight is nudged once its
// victims are gone and the pod fits on its node; when its nomination expires first, the actor
// removes the record.
//
// Thread-safety: RunOnce is called from one thread (the controller's own, or a test), and
// FlushEvents from one thread; InFlight and board() from any thread.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/candidate_order.h"
#include "core/fairness_snapshot.h"
#include "core/node_fit.h"
#include "core/quota_admission.h"
#include "core/reclaim_planner.h"
#include "core/victim_selection.h"
#include "extender/leadership/leadership.h"
#include "extender/metrics.h"
#include "extender/reclaim/event_recorder.h"
#include "extender/reclaim/pending_board.h"
#include "extender/reclaim/pending_index.h"
#include "extender/reclaim/reclaim_evictions.h"
#include "extender/scheduler_cache.h"

namespace capext {

// Makes kube-scheduler retry a pending pod (live: a no-op annotation update).
class RequeueNudger {
 public:
  virtual ~RequeueNudger() = default;
  virtual bool Nudge(const Pod& pod) = 0;
};

// Records an in-flight reclaim on its pending pod, so that a replica taking over knows it (live:
// the annotation scheduling.capacity-extender.io/reclaim, "<node>@<time>"), and removes it.
class ReclaimRecorder {
 public:
  virtual ~ReclaimRecorder() = default;
  // The record written, or nullopt when the write failed (logged by the recorder).
  virtual std::optional<std::string> Record(const Pod& pod, const std::string& node) = 0;
  virtual bool Clear(const Pod& pod) = 0;
};

// The node of a reclaim record ("<node>@<time>"); "" when malformed.
std::string ReclaimRecordNode(std::string_view record);

enum class ReclaimMode { kOff, kDryRun, kOn };

struct ReclaimControllerOptions {
  ReclaimMode mode = ReclaimMode::kOn;
  int64_t interval_ms = 1000;
  int64_t nomination_ttl_ms = 120'000;
  double max_evictions_per_second = 5;
  int max_evictions_per_namespace_per_minute = 30;
  bool requeue_nudge = true;
  int64_t requeue_nudge_interval_ms = 5000;
  // Live mode: only pods kube-scheduler marked PodScheduled=False/Unschedulable, or that our
  // filter has seen, are considered (a new pod is kube-scheduler's to try first).
  bool require_unschedulable_condition = false;
  int max_candidate_attempts = 3;  // nodes tried per pod when evictions are refused
  // After every candidate of a pod was refused (a PDB), the pod waits this long before the next
  // attempt, doubling per consecutive refusal up to the max; a longer Retry-After from the API
  // server wins. Refused evictions take nothing from the eviction rate limits.
  int64_t refusal_backoff_ms = 5'000;
  int64_t max_refusal_backoff_ms = 300'000;
  // How often the events thread writes what the EventRecorder has due.
  int64_t event_flush_interval_ms = 500;
  // Pods planned per pass at most; the others wait for the next pass, longest waiting first.
  std::size_t max_pods_per_pass = 500;
  // Entries of the ClusterState's change journal (enabled by the controller).
  std::size_t journal_capacity = ChangeJournal::kDefaultCapacity;
  std::size_t reclaim_history = 100;  // reclaims kept for /pending
  // A gang's plan across nodes (docs/reclaim-plan.md#the-budget): its budget of steps, and the
  // wall-clock cap on one search. Either running out: no plan, approximate.
  int64_t plan_max_steps = 250'000;
  int64_t plan_time_cap_ms = 200;
  // Reclaim between borrowers (config fairSharing, fairShareMinRunTime;
  // docs/fair-sharing.md#how-the-reclaim-search-uses-it): a pending pod whose quota would borrow
  // is planned by SearchReclaimPlan with fairness, falling back to the one-node path without a
  // plan.
  bool fair_sharing = false;
  int64_t fair_share_min_run_time_ms = 300'000;
};

class ReclaimController {
 public:
  ReclaimController(SchedulerCache* cache, Metrics* metrics, const VictimOrder& victim_order,
                    Evictor* evictor, RequeueNudger* nudger, ReclaimControllerOptions options);
  ~ReclaimController();

  // Verdicts become Events through `recorder`, written to `sink`. REQUIRES: before Start();
  // both outlive the controller.
  void RecordEvents(EventRecorder* recorder, EventSink* sink);
  // Acts only while `leadership` leads (without one: always). REQUIRES: before Start(); it
  // outlives the controller.
  void FollowLeadership(const Leadership* leadership);
  // Records reclaims on their pods through `recorder` (without one: no records, e.g. embedded
  // mode with its single replica). REQUIRES: before Start(); it outlives the controller.
  void RecordReclaimsWith(ReclaimRecorder* recorder);

  // One pass. Returns the number of reclaims started.
  int RunOnce();
  // Forgets the Events (and board records) of pods no longer pending, then writes what is due.
  // Without an EventRecorder, does nothing.
  EventFlushStats FlushEvents();

  // Runs RunOnce every interval (and FlushEvents on a thread of its own) until Stop().
  void Start();
  void Stop();

  // Pods whose reclaim is in flight: pod key -> node (for /explain and logs).
  std::map<std::string, std::string> InFlight() const;
  // Where every reclaim evicts, with the controller's limits (reclaim_evictions.h): gate mode's
  // admission loop evicts through it too. Its victim Events are written by FlushEvents.
  ReclaimEvictions* evictions() { return &evictions_; }
  const PendingBoard& board() const { return board_; }

  // What the last RunOnce did. Read from the thread that calls RunOnce (tests, benchmarks).
  struct PassStats {
    std::vector<std::string> planned;  // "ns/name" of each pod planned, in planning order
    std::size_t plan_calls = 0;        // PlanReclaim calls (a refused candidate plans again)
    std::size_t backlog = 0;           // pods still queued after the pass
    std::size_t tracked = 0;           // pending quota pods known
    bool rederived = false;            // the pass re-read every pending pod from the state
  };
  const PassStats& last_pass() const { return last_pass_; }
  // The wake rule of a tracked pod (tests), or nullopt.
  std::optional<WakeRule> WakeRuleOf(const std::string& uid) const;

 private:
  struct InFlightReclaim {
    std::string pod_key;
    std::string node;
    std::vector<std::string> victim_uids;
    std::vector<std::string> victim_keys;
    int64_t started_ms = 0;
    bool nudged = false;
    bool recorded_elsewhere = false;  // adopted from the pod's record: the victims are unknown
    // Cut short after evicting some victims: planned again from then, once they are gone
    // (0 = not cut short; docs/capacity-semantics.md#8-the-reclaim-controller).
    int64_t resume_at_ms = 0;
    bool gang = false;  // the asking member of a plan across nodes: its members are the unit
  };
  struct RefusalBackoff {
    int64_t until_ms = 0;
    int64_t backoff_ms = 0;  // the last wait; the next one doubles it
    PodVerdict verdict;      // shown while it waits
    bool resume = false;     // its reclaim was cut short: the next plan keeps the room it holds
    // The next wait: `first_ms`, then twice the last one, at most `max_ms`.
    int64_t Next(int64_t first_ms, int64_t max_ms) {
      backoff_ms = backoff_ms == 0 ? first_ms : std::min(backoff_ms * 2, max_ms);
      return backoff_ms;
    }
  };
  // PlanReclaim for `pod` with the victims copied out of the lock, plus the quota check alone.
  // The one place that calls into core's planner.
  struct Plan {
    ReclaimDecision decision = ReclaimDecision::kNoCandidate;
    std::string node, reason;
    std::vector<NormalizedPod> victims;
    Status quota;
    const AdmissionRule* quota_rule = nullptr;  // the rule that refused it (quota not ok), or none
    DeclaredChanges admission = 0;              // AdmissionChanges of the state's profile
    DeclaredChanges victim_changes = 0;  // the victim rule's and the profile's victim order's
    std::string fit_node;                // kFitsNow: the first node (by name) that takes it
  };
  Plan PlanFor(const NormalizedPod& pod, const std::vector<std::string>& excluded_nodes,
               bool replan_own_nomination = false);
  // The verdict of a pod for which nothing is evicted now.
  PodVerdict NoEviction(const NormalizedPod& pod, const Plan& plan, bool dry_run) const;
  // What wakes a pod whose last plan was `plan` (derived as the file comment says).
  static WakeRule WakeRuleFor(const Plan& plan);
  PodVerdict ReclaimFor(const NormalizedPod& pod, int64_t now_ms, bool* started, WakeRule* wake);
  // reclaim_controller_plan.cpp: for a pending member of a starting gang whose waiting members
  // are several, one plan across nodes for all of them (docs/reclaim-plan.md): evicts its
  // victims, nominates every member on its planned node, and returns the verdict. With fair
  // sharing, a single pod whose quota would borrow too, when the plan takes victims. nullopt for
  // any other pod (the one-node path of ReclaimFor). `resuming`: the gang's plan was cut short
  // after some evictions and is made again, the rooms its members hold counted as theirs.
  std::optional<PodVerdict> ReclaimForGang(const NormalizedPod& pod, int64_t now_ms, bool resuming,
                                           bool* started, WakeRule* wake);
  // Releases our nomination of every member of `pod`'s plan, and queues their records for
  // removal: a plan cut short that can no longer be completed holds nothing.
  void ReleaseGangHolds(const NormalizedPod& pod);
  // After a refusal (every candidate refused, or a reclaim cut short): the pod's next backoff
  // (doubling from refusal_backoff_ms) or the server's Retry-After, whichever is longer; returns
  // when it ends.
  int64_t NextRetryAt(const std::string& uid, int retry_after_seconds, int64_t now_ms);
  // Publishes the verdict, unless the pod stopped being a pending quota pod meanwhile.
  void Publish(const NormalizedPod& pod, const std::string& quota, PodVerdict verdict,
               int64_t now_ms);
  void PublishLocked(const NormalizedPod& pod, const std::string& quota, PodVerdict verdict,
                     int64_t now_ms);
  void TrackInFlight(int64_t now_ms, bool acts);
  // A pass that does nothing because the cache is out of sync: board, gauge, log.
  void Hold(const std::string& reason, int64_t now_ms);
  void MaybeNudge(const NormalizedPod& pod, int64_t now_ms, WakeRule* wake);
  // Whether this replica may write now (Leadership; always without one).
  bool Acts() const;
  // A follower's verdict and wake rule: the plan, without acting on it.
  PodVerdict FollowerVerdict(const NormalizedPod& pod, WakeRule* wake);

  // reclaim_controller_in_flight.cpp: reclaims recorded on pods.
  // Notes a pending pod's record for adoption when this replica has not seen it yet.
  void NoteRecord(const NormalizedPod& pod);
  // Turns the records noted since the last pass into nominations and in-flight reclaims.
  void AdoptRecords(int64_t now_ms);
  // The actor removes the records of reclaims that ended without a binding.
  void ClearEndedRecords();

  // reclaim_controller_index.cpp: keeping the PendingIndex in step with the state.
  // Reads the journal's changes since the last pass and wakes the pods they concern.
  void LearnChanges();
  // Tracks every pending quota pod of the state, forgets the others, and wakes them all.
  void Rederive(const ClusterState& state);
  // Tracks the pod when it is a pending quota pod (true: the caller wakes it), else forgets it.
  bool Refresh(const ClusterState& state, const std::string& uid);
  // Forgets a pod no longer pending: its index entry, backoff, nudge time, record and Events.
  void Forget(const std::string& uid);
  // Not bound, not terminal, not reserved, and its namespace has a quota.
  static bool IsPendingQuotaPod(const ClusterState& state, const NormalizedPod& pod);
  static std::set<std::string> PendingQuotaPodUids(const ClusterState& state);

  SchedulerCache* cache_;
  Metrics* metrics_;
  const VictimOrder& victim_order_;
  RequeueNudger* nudger_;
  ReclaimControllerOptions options_;
  EventRecorder* recorder_ = nullptr;
  EventSink* sink_ = nullptr;
  const Leadership* leadership_ = nullptr;
  ReclaimRecorder* records_ = nullptr;
  bool acted_last_pass_ = false;  // a follower that starts acting re-derives every pending pod
  bool rederive_ = false;
  // Reclaim records by pod uid: the last one seen or written (kept while the pod is tracked),
  // those noted for adoption, and those to remove (their reclaim ended without a binding).
  std::map<std::string, std::string> seen_records_;
  std::map<std::string, std::string> records_to_adopt_;
  std::set<std::string> records_to_clear_;
  PendingBoard board_;

  mutable std::mutex mutex_;                          // guards in_flight_ for InFlight()
  std::map<std::string, InFlightReclaim> in_flight_;  // by pod uid
  ReclaimEvictions evictions_;                        // the rate limits, the victims' Events
  std::map<std::string, int64_t> last_nudge_ms_;
  std::set<std::string> dry_run_logged_;
  std::map<std::string, RefusalBackoff> refused_;  // by pod uid: every candidate was refused

  // The RunOnce thread's view of the pending pods, and how far it read the journal.
  PendingIndex index_;
  // What of each quota in use reaches beyond its tree (its min: the sum over the roots and who
  // borrows; its parent: the tree's shape), by namespace: a quota change that leaves it alone (a
  // max) concerns only its tree's pods.
  struct ClusterShare {
    std::optional<ResourceList> min;
    std::string parent;
    bool operator==(const ClusterShare&) const = default;
  };
  std::map<std::string, ClusterShare, std::less<>> cluster_shares_;
  const ChangeJournal* journal_seen_ = nullptr;  // the journal `cursor_` belongs to
  uint64_t cursor_ = 0;
  PassStats last_pass_;
  // The RunOnce thread's: every quota's fairness for the cache's state at its current version,
  // shared by the fair plans of a pass (docs/fair-sharing.md#how-the-reclaim-search-uses-it).
  FairnessCache fairness_cache_;
  std::optional<int64_t> held_since_ms_;  // RunOnce's thread: holding since (cache out of sync)
  // The events thread's own place in the journal.
  const ChangeJournal* events_journal_seen_ = nullptr;
  uint64_t events_cursor_ = 0;

  std::thread thread_;
  std::thread events_thread_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace capext
