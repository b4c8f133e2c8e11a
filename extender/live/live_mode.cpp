#include "extender/live/live_mode.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/quantity.h"
#include "extender/http/thread_name.h"
#include "extender/kube/api_discovery.h"
#include "extender/kube/api_event_sink.h"
#include "extender/kube/api_writes.h"
#include "extender/kube/kube_config.h"
#include "extender/kube/rest_client.h"
#include "extender/leadership/scheduler_lease_follower.h"
#include "extender/live/cache_sink.h"
#include "extender/live/group_sink.h"
#include "extender/live/live_binder.h"
#include "extender/live/live_informers.h"
#include "extender/live/out_of_sync_log.h"
#include "extender/log.h"

namespace capext {
namespace {

std::string Describe(const kube::ApiWriteResult& r) {
  return r.http_status == 0 ? r.message
                            : fmt::format("HTTP {} {}: {}", r.http_status, r.reason, r.message);
}

// The timeout of ordinary writes; each is cut to the tenure left (Leadership::TimeLeft).
constexpr std::chrono::milliseconds kWriteTimeout{30000};
constexpr char kNotActing[] = "not sent: this replica does not act (another replica leads)";

// Evictions and nudges are rare: the reclaim loop waits for each on its own thread.
class LiveEvictor final : public Evictor {
 public:
  LiveEvictor(kube::RestClient* client, const Leadership* leadership)
      : evictor_(client), leadership_(leadership) {}
  EvictOutcome Evict(const Pod& victim, const std::string& reason) override {
    const std::chrono::milliseconds timeout = leadership_->TimeLeft(kWriteTimeout);
    if (timeout.count() <= 0) {
      EvictOutcome not_sent{false, false, kNotActing, 0};
      not_sent.not_sent = true;
      return not_sent;
    }
    kube::ApiWriteResult result =
        evictor_.Evict(victim.ns, victim.name, victim.uid, std::nullopt, timeout);
    Log(result.ok ? LogLevel::kInfo : LogLevel::kWarn, "eviction",
        {{"pod", victim.Key()},
         {"reason", reason},
         {"result", result.ok ? "evicted" : Describe(result)}});
    return EvictOutcome{result.ok, result.refused_by_disruption_budget,
                        result.ok ? "" : Describe(result), result.retry_after_seconds};
  }

 private:
  kube::Evictor evictor_;
  const Leadership* leadership_;
};

class LiveNudger final : public RequeueNudger {
 public:
  LiveNudger(kube::RestClient* client, const Leadership* leadership)
      : annotator_(client), leadership_(leadership) {}
  bool Nudge(const Pod& pod) override {
    const std::chrono::milliseconds timeout = leadership_->TimeLeft(kWriteTimeout);
    if (timeout.count() <= 0) return false;
    kube::ApiWriteResult result =
        annotator_.MarkForRetry(pod.ns, pod.name, std::chrono::system_clock::now(), timeout);
    if (!result.ok)
      Log(LogLevel::kWarn, "requeue nudge failed",
          {{"pod", pod.Key()}, {"error", Describe(result)}});
    return result.ok;
  }

 private:
  kube::PodAnnotator annotator_;
  const Leadership* leadership_;
};

// The reclaim record "<node>@<time>" on the pending pod
// (docs/capacity-semantics.md#8-the-reclaim-controller).
class LiveReclaimRecorder final : public ReclaimRecorder {
 public:
  LiveReclaimRecorder(kube::RestClient* client, const Leadership* leadership)
      : annotator_(client), leadership_(leadership) {}
  std::optional<std::string> Record(const Pod& pod, const std::string& node) override {
    const std::string record = node + "@" + kube::Rfc3339Millis(std::chrono::system_clock::now());
    return Write(pod, record) ? std::optional<std::string>(record) : std::nullopt;
  }
  bool Clear(const Pod& pod) override { return Write(pod, std::nullopt); }

 private:
  bool Write(const Pod& pod, const std::optional<std::string>& record) {
    const std::chrono::milliseconds timeout = leadership_->TimeLeft(kWriteTimeout);
    if (timeout.count() <= 0) return false;
    kube::ApiWriteResult result = annotator_.SetReclaimRecord(pod.ns, pod.name, record, timeout);
    if (!result.ok) {
      Log(LogLevel::kWarn,
          record ? "cannot record the reclaim on the pod" : "cannot remove the reclaim record",
          {{"pod", pod.Key()}, {"error", Describe(result)}});
    }
    return result.ok;
  }
  kube::PodAnnotator annotator_;
  const Leadership* leadership_;
};

// Events are written only while this replica acts (the reclaim controller checks before each
// flush; this catches the end of a tenure within one).
class LiveEventSink final : public EventSink {
 public:
  LiveEventSink(kube::RestClient* client, const Leadership* leadership)
      : sink_(client), leadership_(leadership) {}
  EventWriteResult Create(const EventObject& event) override {
    if (!leadership_->Leads()) return {EventWriteCode::kFailed, kNotActing};
    return sink_.Create(event);
  }
  EventWriteResult PatchSeries(const std::string& ns, const std::string& name, int32_t count,
                               int64_t last_observed_us) override {
    if (!leadership_->Leads()) return {EventWriteCode::kFailed, kNotActing};
    return sink_.PatchSeries(ns, name, count, last_observed_us);
  }

 private:
  kube::ApiEventSink sink_;
  const Leadership* leadership_;
};

std::string GroupList(const std::vector<kube::GroupVersion>& groups) {
  std::string out;
  for (const auto& g : groups)
    out += (out.empty() ? "" : ",") + g.ToString();
  return out.empty() ? "none" : out;
}

class LiveModeImpl final : public LiveMode {
 public:
  LiveModeImpl(const ExtenderConfig& config, SchedulerCache* cache, Metrics* metrics)
      : config_(config), cache_(cache), metrics_(metrics), sink_(cache, metrics) {}
  ~LiveModeImpl() override { Stop(); }

  Status Init() {
    kube::KubeConfig kube_config;
    if (Status s = kube::LoadKubeConfig(config_.kubeconfig, &kube_config); !s.ok()) return s;
    Log(LogLevel::kInfo, "connecting to the API server",
        {{"server", kube_config.server}, {"from", kube_config.origin}});
    const std::string identity =
        config_.leader_identity.empty() ? HostName() : config_.leader_identity;
    kube::RestClientOptions client_options;
    // Tells the replicas apart in the API server's audit log.
    if (!identity.empty()) client_options.user_agent = "capacity-extender/" + identity;
    if (Status s = kube::RestClient::Create(kube_config, client_options, &client_); !s.ok())
      return s;
    // Bindings on a client of their own: never queued behind a relist, a status patch or an
    // Event, nor those behind binds. /bind bounds the calls (maxBindsInFlight).
    kube::RestClientOptions bind_options;
    bind_options.max_connections = static_cast<std::size_t>(config_.bind_connections);
    bind_options.max_queued = static_cast<std::size_t>(config_.max_binds_in_flight);
    bind_options.request_timeout = kBindingAnswerTimeout;
    bind_options.user_agent = client_options.user_agent;
    bind_options.thread_name = "ce-bind";
    if (Status s = kube::RestClient::Create(kube_config, bind_options, &bind_client_); !s.ok())
      return s;
    if (config_.leader_election == "follow-scheduler") {
      if (identity.empty()) {
        return Status::Invalid(
            "leaderElection: follow-scheduler needs leaderIdentity (the hostname is unknown)");
      }
      SchedulerLeaseFollower::Options lease;
      const std::size_t slash = config_.leader_lease.find('/');
      lease.lease_namespace = config_.leader_lease.substr(0, slash);
      lease.lease_name = config_.leader_lease.substr(slash + 1);
      lease.identity = identity;
      lease.lease_duration = config_.lease_duration;
      lease.renew_deadline = config_.lease_renew_deadline;
      lease.check_interval = config_.lease_check_interval;
      auto follower = std::make_unique<SchedulerLeaseFollower>(client_.get(), lease);
      follower->Start();
      follower_ = follower.get();
      leadership_ = std::move(follower);
    } else {
      leadership_ = std::make_unique<SoleReplica>();
    }
    kube::DiscoveredApis apis;
    if (Status s = kube::DiscoverApis(client_.get(), &apis); !s.ok()) return s;
    std::string groups;
    for (const auto& g : apis.groups)
      groups += (groups.empty() ? "" : ",") + g;
    Log(LogLevel::kInfo, "API groups found",
        {{"groups", groups},
         {"elasticquota", apis.elastic_quota_groups.empty()
                              ? "none (CRD not installed)"
                              : GroupList(apis.elastic_quota_groups)}});
    kube::InformerOptions base;
    base.resync_period = config_.resync_period;
    base.watch_idle_timeout = config_.watch_idle_timeout;
    base.protobuf_watch = config_.watch_encoding == "protobuf";
    informers_ =
        std::make_unique<LiveInformers>(client_.get(), &sink_, base, config_.max_out_of_sync);
    started_ = std::chrono::steady_clock::now();
    informers_->Start();
    ApplyQuotaGroups(apis);
    informers_->ApplyDeviceApi(apis);
    ApplyGroupApis(apis);
    cache_->set_sync_source(informers_.get());
    last_discovery_ = std::chrono::steady_clock::now();
    background_ = std::jthread([this](std::stop_token stop) {
      http::NameThisThread("ce-live");
      Background(stop);
    });
    return {};
  }

  void Stop() override {
    if (background_.joinable()) {
      background_.request_stop();
      wake_.notify_all();
      background_.join();
    }
    if (follower_ != nullptr) follower_->Stop();  // this replica no longer acts
    cache_->set_sync_source(nullptr);
    if (informers_) informers_->Stop();
    informers_.reset();
    // Calls still in flight (a binding past the drain) complete now, with "cancelled", while
    // the service they answer through still exists. The binder, evictor and nudger must not be
    // used after Stop(); the binder refuses on its own from here (a retry that waited for a
    // cancelled Binding would otherwise bind again from inside the client's destruction).
    stopping_->store(true);
    bind_client_.reset();
    client_.reset();
  }

  std::unique_ptr<PodBinder> MakeBinder(FilterPacer* pacer) override {
    return MakeLiveBinder(bind_client_.get(), metrics_, stopping_, pacer);
  }
  std::unique_ptr<Evictor> MakeEvictor() override {
    return std::make_unique<LiveEvictor>(client_.get(), leadership_.get());
  }
  std::unique_ptr<RequeueNudger> MakeNudger() override {
    return std::make_unique<LiveNudger>(client_.get(), leadership_.get());
  }
  std::unique_ptr<EventSink> MakeEventSink() override {
    return std::make_unique<LiveEventSink>(client_.get(), leadership_.get());
  }
  kube::GateSupport ProbeSchedulingGates() override {
    return kube::ProbeSchedulingGates(client_.get(), "default");
  }
  std::unique_ptr<kube::GateLifter> MakeGateLifter() override {
    return std::make_unique<kube::GateLifter>(client_.get());
  }
  std::unique_ptr<kube::AdmissionRevoker> MakeAdmissionRevoker() override {
    return std::make_unique<kube::AdmissionRevoker>(client_.get());
  }
  std::unique_ptr<ReclaimRecorder> MakeReclaimRecorder() override {
    return std::make_unique<LiveReclaimRecorder>(client_.get(), leadership_.get());
  }
  const Leadership* leadership() const override { return leadership_.get(); }

 private:
  // Watches every ElasticQuota group served, and says so when none is. Main thread at Init,
  // then the background thread.
  void ApplyQuotaGroups(const kube::DiscoveredApis& apis) {
    for (const auto& note : apis.unusable) {
      if (reported_unusable_.insert(note).second) Log(LogLevel::kWarn, note);
    }
    informers_->ApplyQuotaGroups(apis);
    const bool none = !informers_->ServesQuotas();
    if (none && !warned_no_quota_api_) {
      Log(LogLevel::kWarn,
          config_.missing_quota_api == "allow"
              ? "the cluster serves no ElasticQuota API (is the CRD installed?): pods are placed "
                "by node fit alone until it does (missingQuotaAPI: allow); discovery runs again "
                "every discoveryInterval"
              : "the cluster serves no ElasticQuota API (is the CRD installed?): every pod is "
                "refused until it does (missingQuotaAPI: refuse); not ready; discovery runs "
                "again every discoveryInterval",
          {{"interval_ms", std::to_string(config_.discovery_interval.count())}});
    }
    warned_no_quota_api_ = none;
  }

  // docs/workloads-live.md#where-group-objects-come-from: PodGroup and Workload informers
  // while their API is served (LiveInformers::ApplyGroupApis). Main thread at Init, then the
  // background thread.
  void ApplyGroupApis(const kube::DiscoveredApis& apis) { informers_->ApplyGroupApis(apis); }

  // /filter decides once every informer listed once, and, under missingQuotaAPI: refuse, once an
  // ElasticQuota API is served
  // (docs/capacity-semantics.md#12-deciding-on-a-cache-that-is-out-of-sync).
  void UpdateReadiness() {
    std::vector<std::string> unsynced = informers_->UnsyncedResources();
    SchedulerCache::QuotaApi api;
    api.served = informers_->ServesQuotas();
    api.refuse = config_.missing_quota_api != "allow";
    if (!api.served) {
      api.message = fmt::format(
          "no ElasticQuota API is served (install deploy/crd): neither {}/v1alpha1 nor "
          "{}/v1alpha1 lists elasticquotas; {}",
          kube::kElasticQuotaGroup, kube::kLegacyElasticQuotaGroup,
          api.refuse ? "every pod is refused until one is (missingQuotaAPI: refuse)"
                     : "pods are placed by node fit alone, no quota is enforced "
                       "(missingQuotaAPI: allow)");
    }
    std::string reason;
    if (!api.served && api.refuse) {
      reason = api.message;
    } else if (!unsynced.empty()) {
      std::string names;
      for (const auto& n : unsynced)
        names += (names.empty() ? "" : ", ") + n;
      reason = "cluster cache not synced yet: waiting for the first list of " + names;
    }
    cache_->set_quota_api(api);
    cache_->set_not_ready_reason(reason);
    const bool ready = reason.empty();
    if (ready && !cache_->ready() && !logged_sync_) {
      logged_sync_ = true;
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - started_)
                          .count();
      Log(LogLevel::kInfo, "cluster cache synced", {{"sync_ms", std::to_string(ms)}});
    }
    cache_->set_ready(ready);
  }

  // Readiness, periodic re-discovery, the out-of-sync log, then status.used write-back every
  // interval while every resource is in sync.
  void Background(std::stop_token stop) {
    std::mutex mutex;
    std::unique_lock lock(mutex);
    while (!stop.stop_requested()) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_discovery_ >= config_.discovery_interval) {
        last_discovery_ = now;
        kube::DiscoveredApis apis;
        if (Status s = kube::DiscoverApis(client_.get(), &apis); s.ok()) {
          ApplyQuotaGroups(apis);
          informers_->ApplyDeviceApi(apis);
          ApplyGroupApis(apis);
        } else {
          Log(LogLevel::kWarn, "API discovery failed; keeping the known groups",
              {{"error", s.message()}});
        }
      }
      UpdateReadiness();
      const CacheSyncReport report = cache_->SyncReport();
      out_of_sync_log_.Observe(report);
      // Only the actor writes status.used (docs/architecture.md#two-replicas-one-actor), and a
      // usage computed from a stale cache is not written as the truth.
      if (cache_->ready() && config_.status_updates && report.AllInSync() && leadership_->Leads())
        WriteStatus();
      wake_.wait_for(lock, std::min(config_.status_update_interval, std::chrono::milliseconds(200)),
                     [&] { return stop.stop_requested(); });
    }
  }

  void WriteStatus() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_status_ < config_.status_update_interval) return;
    last_status_ = now;
    struct Row {
      std::string ns, name, group;
      std::map<std::string, std::string> used;
    };
    // Every governed resource (zero included) is written whenever the object's status differs
    // from the computed usage: also after the quota was re-created or someone else wrote it.
    std::vector<Row> rows = cache_->Read([&](const ClusterState& state) {
      std::vector<Row> out;
      const QuotaTree& tree = state.ledger().tree();
      // Named references, not a structured binding: the lambdas below use them, and clang before 16
      // cannot capture a structured binding (test.sh's ASan+UBSan build uses clang 14).
      for (const auto& entry : state.quota_set().quotas()) {
        const auto& ns = entry.first;
        const auto& q = entry.second;
        // A parent's status.used is its subtree's usage.
        const ResourceList& used = state.ledger().NodeUsed(tree.QuotaNodeOf(ns));
        Row row{ns, q.name, q.api_group, {}};
        bool differs = !q.status_used.has_value();
        auto add = [&](ResourceName n) {
          row.used[std::string(n.str())] = QuantityFromDecisionAmount(n, used.Get(n)).ToString();
          if (q.status_used && q.status_used->Find(n) != used.Get(n)) differs = true;
        };
        if (q.min)
          for (const auto& e : q.min->entries())
            add(e.first);
        if (q.max)
          for (const auto& e : q.max->entries())
            add(e.first);
        if (differs) out.push_back(std::move(row));
      }
      return out;
    });
    const std::vector<kube::GroupVersion> groups = informers_->QuotaGroups();
    for (const auto& row : rows) {
      // The status goes to the API group the quota object came from.
      const kube::GroupVersion* gv = nullptr;
      for (const auto& g : groups) {
        if (g.group == row.group) gv = &g;
      }
      if (gv == nullptr) continue;
      const std::chrono::milliseconds timeout = leadership_->TimeLeft(kWriteTimeout);
      if (timeout.count() <= 0) break;  // the tenure ended: the next actor writes them
      kube::ApiWriteResult r =
          kube::StatusPatcher(client_.get(), *gv).PatchUsed(row.ns, row.name, row.used, timeout);
      if (r.ok) {
        metrics_->Count("capacity_extender_status_patches_total");
      } else {
        Log(LogLevel::kWarn, "status.used patch failed",
            {{"quota", row.ns + "/" + row.name}, {"group", row.group}, {"error", Describe(r)}});
      }
    }
  }

  ExtenderConfig config_;
  SchedulerCache* cache_;
  Metrics* metrics_;
  CacheSink sink_;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<kube::RestClient> bind_client_;  // Bindings only
  std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
  std::unique_ptr<Leadership> leadership_;      // after client_: destroyed before it
  SchedulerLeaseFollower* follower_ = nullptr;  // leadership_, when it follows a lease
  std::unique_ptr<LiveInformers> informers_;
  OutOfSyncLog out_of_sync_log_;  // background thread
  std::set<std::string> reported_unusable_;
  bool warned_no_quota_api_ = false;
  bool logged_sync_ = false;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_discovery_{};
  std::chrono::steady_clock::time_point last_status_{};
  std::condition_variable wake_;
  std::jthread background_;
};

}  // namespace

bool LiveMode::InClusterAvailable() {
  return kube::RunningInCluster();
}

StatusOr<std::unique_ptr<LiveMode>> LiveMode::Start(const ExtenderConfig& config,
                                                    SchedulerCache* cache, Metrics* metrics) {
  auto live = std::make_unique<LiveModeImpl>(config, cache, metrics);
  if (Status s = live->Init(); !s.ok()) return s;
  return std::unique_ptr<LiveMode>(std::move(live));
}

}  // namespace capext
