// LiveMode: the extender's truth from a real API server
// (docs/architecture.md#embedded-and-live-mode). Connects with
// --kubeconfig or in-cluster config, discovers the ElasticQuota groups (again every
// discoveryInterval), mirrors pods, nodes, elasticquotas, priorityclasses and
// poddisruptionbudgets into the SchedulerCache through one writer (LiveInformers: list + watch,
// resume, relist on 410, retries that probe the server, periodic resync), marks the cache ready
// once every informer listed once (and, under missingQuotaAPI: refuse, an ElasticQuota API is
// served), gives the cache its sync report (cache_sync.h) and logs resources out of sync, and
// writes ElasticQuota status.used back (merge patch on the status subresource, only when it
// changed, at most once per interval per quota, never while the cache is out of sync).
// With leaderElection: follow-scheduler it follows kube-scheduler's leader Lease
// (SchedulerLeaseFollower); every write it makes on its own (status.used, and through the
// evictor, nudger, reclaim recorder and event sink it makes) is sent only while leadership()
// leads, with its timeout cut to the tenure left (docs/architecture.md#two-replicas-one-actor).
// Thread-safety: Start/Stop from the main thread; the binder/evictor/nudger/event sink are
// thread-safe.
#pragma once

#include <memory>
#include <string>

#include "config/extender_config.h"
#include "extender/filter_pacer.h"
#include "extender/kube/gate_writes.h"
#include "extender/leadership/leadership.h"
#include "extender/metrics.h"
#include "extender/pod_binder.h"
#include "extender/reclaim/reclaim_controller.h"
#include "extender/scheduler_cache.h"

namespace capext {

class LiveMode {
 public:
  static bool InClusterAvailable();
  // Fails when the connection cannot be configured or discovery fails.
  static StatusOr<std::unique_ptr<LiveMode>> Start(const ExtenderConfig& config,
                                                   SchedulerCache* cache, Metrics* metrics);
  virtual ~LiveMode() = default;
  // Stops the informers and the API client (calls in flight complete as cancelled). The
  // binder, evictor and nudger must not be used afterwards. Idempotent.
  virtual void Stop() = 0;
  // `pacer` (nullptr: none) hears every change of the Binding queue (MakeLiveBinder).
  virtual std::unique_ptr<PodBinder> MakeBinder(FilterPacer* pacer) = 0;
  virtual std::unique_ptr<Evictor> MakeEvictor() = 0;
  virtual std::unique_ptr<RequeueNudger> MakeNudger() = 0;
  // Writes the reclaim controller's Events (events.k8s.io/v1) to the API server.
  virtual std::unique_ptr<EventSink> MakeEventSink() = 0;
  // Gate mode (docs/workloads-live.md): whether the API server keeps spec.schedulingGates (a
  // dry-run create in namespace `default`), and the patcher that lifts our gate.
  virtual kube::GateSupport ProbeSchedulingGates() = 0;
  virtual std::unique_ptr<kube::GateLifter> MakeGateLifter() = 0;
  // And the patcher that revokes the admission of a gang's member once the gang lost its core.
  virtual std::unique_ptr<kube::AdmissionRevoker> MakeAdmissionRevoker() = 0;
  // Records reclaims on their pods (annotation scheduling.capacity-extender.io/reclaim).
  virtual std::unique_ptr<ReclaimRecorder> MakeReclaimRecorder() = 0;
  // Whether this replica acts. Valid until the LiveMode is destroyed.
  virtual const Leadership* leadership() const = 0;
};

}  // namespace capext
