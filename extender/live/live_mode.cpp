#include "extender/live/live_mode.h"

#include <condition_variable>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/quantity.h"
#include "extender/kube/api_discovery.h"
#include "extender/kube/api_event_sink.h"
#include "extender/kube/api_writes.h"
#include "extender/kube/informer_set.h"
#include "extender/kube/kube_config.h"
#include "extender/kube/rest_client.h"
#include "extender/leadership/scheduler_lease_follower.h"
#include "extender/live/cache_sink.h"
#include "extender/log.h"

namespace capext {
namespace {

std::string Describe(const kube::ApiWriteResult& r) {
  return r.http_status == 0 ? r.message
                            : fmt::format("HTTP {} {}: {}", r.http_status, r.reason, r.message);
}

// Binding through the API client: completes on the client thread, no thread per bind. A binding
// is given the extender's own request deadline: kube-scheduler stops waiting soon after it.
class LiveBinder final : public PodBinder {
 public:
  LiveBinder(kube::RestClient* client, std::chrono::milliseconds timeout)
      : binder_(client), timeout_(timeout) {}
  void Bind(const BindRequest& r, BindDone done) override {
    binder_.BindAsync(
        r.ns, r.name, r.uid, r.node,
        [done = std::move(done)](kube::ApiWriteResult result) {
          done(
              BindOutcome{result.ok, result.http_status, result.ok ? "" : Describe(result), false});
        },
        timeout_);
  }

 private:
  kube::Binder binder_;
  std::chrono::milliseconds timeout_;
};

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

// The reclaim record "<node>@<time>" on the pending pod (capacity-semantics 8).
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

  bool Init(std::string* error) {
    kube::KubeConfig kube_config;
    if (Status s = kube::LoadKubeConfig(config_.kubeconfig, &kube_config); !s.ok()) {
      *error = s.message();
      return false;
    }
    Log(LogLevel::kInfo, "connecting to the API server",
        {{"server", kube_config.server}, {"from", kube_config.origin}});
    const std::string identity =
        config_.leader_identity.empty() ? HostName() : config_.leader_identity;
    kube::RestClientOptions client_options;
    // Tells the replicas apart in the API server's audit log.
    if (!identity.empty()) client_options.user_agent = "capacity-extender/" + identity;
    if (Status s = kube::RestClient::Create(kube_config, client_options, &client_); !s.ok()) {
      *error = s.message();
      return false;
    }
    if (config_.leader_election == "follow-scheduler") {
      if (identity.empty()) {
        *error = "leaderElection: follow-scheduler needs leaderIdentity (the hostname is unknown)";
        return false;
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
    if (Status s = kube::DiscoverApis(client_.get(), &apis); !s.ok()) {
      *error = s.message();
      return false;
    }
    std::string groups;
    for (const auto& g : apis.groups)
      groups += (groups.empty() ? "" : ",") + g;
    Log(LogLevel::kInfo, "API groups found",
        {{"groups", groups},
         {"elasticquota", apis.elastic_quota_groups.empty()
                              ? "none (CRD not installed)"
                              : GroupList(apis.elastic_quota_groups)}});
    base_.resync_period = config_.resync_period;
    informers_ = std::make_unique<kube::InformerSet>(client_.get(), &sink_, apis);
    for (auto& options : kube::LiveModeInformers(kube::DiscoveredApis{}, base_))
      informers_->Add(std::move(options));
    started_ = std::chrono::steady_clock::now();
    informers_->Start();
    ApplyQuotaGroups(apis);
    ApplyDeviceApi(apis);
    last_discovery_ = std::chrono::steady_clock::now();
    background_ = std::jthread([this](std::stop_token stop) { Background(stop); });
    return true;
  }

  void Stop() override {
    if (background_.joinable()) {
      background_.request_stop();
      wake_.notify_all();
      background_.join();
    }
    if (follower_ != nullptr) follower_->Stop();  // this replica no longer acts
    if (informers_) informers_->Stop();
    for (auto& [group, quota] : quota_informers_)
      quota.informer->Stop();
    quota_informers_.clear();
    for (auto& informer : device_informers_)
      informer->Stop();
    device_informers_.clear();
    informers_.reset();
    // Calls still in flight (a binding past the drain) complete now, with "cancelled", while
    // the service they answer through still exists. The binder, evictor and nudger must not be
    // used after Stop().
    client_.reset();
  }

  std::unique_ptr<PodBinder> MakeBinder() override {
    return std::make_unique<LiveBinder>(client_.get(), config_.request_timeout);
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
  std::unique_ptr<ReclaimRecorder> MakeReclaimRecorder() override {
    return std::make_unique<LiveReclaimRecorder>(client_.get(), leadership_.get());
  }
  const Leadership* leadership() const override { return leadership_.get(); }

 private:
  struct QuotaInformer {
    kube::GroupVersion gv;
    std::unique_ptr<kube::Informer> informer;
  };

  // Starts an informer for every ElasticQuota group newly served; stops the informer of a group
  // no longer served and forgets its quotas. Main thread at Init, then the background thread.
  void ApplyQuotaGroups(const kube::DiscoveredApis& apis) {
    for (const auto& note : apis.unusable) {
      if (reported_unusable_.insert(note).second) Log(LogLevel::kWarn, note);
    }
    std::map<std::string, kube::GroupVersion> served;
    for (const auto& gv : apis.elastic_quota_groups)
      served[gv.group] = gv;
    bool changed = false;
    for (auto it = quota_informers_.begin(); it != quota_informers_.end();) {
      auto now = served.find(it->first);
      if (now != served.end() && now->second.version == it->second.gv.version) {
        ++it;
        continue;
      }
      Log(LogLevel::kWarn, "ElasticQuota API no longer served: its quotas are dropped",
          {{"api", it->second.gv.ToString()}});
      it->second.informer->Stop();
      sink_.Replace(kube::ElasticQuotaResource(it->first), {});
      it = quota_informers_.erase(it);
      changed = true;
    }
    for (const auto& gv : apis.elastic_quota_groups) {
      if (quota_informers_.count(gv.group)) continue;
      auto informer = std::make_unique<kube::Informer>(
          client_.get(), kube::ElasticQuotaInformer(gv, base_), &sink_);
      informer->Start();
      Log(LogLevel::kInfo, "watching ElasticQuotas", {{"api", gv.ToString()}});
      quota_informers_[gv.group] = QuotaInformer{gv, std::move(informer)};
      changed = true;
    }
    if (changed || quota_informers_.empty()) {
      std::lock_guard lock(groups_mutex_);
      quota_groups_.clear();
      for (const auto& [group, quota] : quota_informers_)
        quota_groups_.push_back(quota.gv);
    }
    if (quota_informers_.empty() && !warned_no_quota_api_) {
      Log(LogLevel::kWarn,
          "the cluster serves no ElasticQuota API (is the CRD installed?): not ready; discovery "
          "runs again every discoveryInterval",
          {{"interval_ms", std::to_string(config_.discovery_interval.count())}});
    }
    warned_no_quota_api_ = quota_informers_.empty();
  }

  // Starts the DRA informers when resource.k8s.io is first served, moves them when the version
  // read changes, and stops them (forgetting the objects) when it is no longer served
  // (docs/devices.md 8). Main thread at Init, then the background thread.
  void ApplyDeviceApi(const kube::DiscoveredApis& apis) {
    const std::string now = apis.device_api ? apis.device_api->ToString() : "";
    if (now == device_api_) return;
    for (auto& informer : device_informers_) {
      informer->Stop();
      sink_.Replace(informer->resource(), {});
    }
    device_informers_.clear();
    if (!device_api_.empty()) {
      Log(LogLevel::kWarn, "DRA API no longer served at this version: its objects are dropped",
          {{"api", device_api_}});
    }
    device_api_ = now;
    if (!apis.device_api) return;
    for (auto& options : kube::DeviceInformers(*apis.device_api, base_)) {
      auto informer = std::make_unique<kube::Informer>(client_.get(), std::move(options), &sink_);
      informer->Start();
      device_informers_.push_back(std::move(informer));
    }
    Log(LogLevel::kInfo, "watching ResourceClaims, ResourceClaimTemplates and DeviceClasses",
        {{"api", device_api_}});
  }

  // Ready once every informer listed once and at least one ElasticQuota API is served.
  void UpdateReadiness() {
    std::vector<std::string> unsynced = informers_->UnsyncedResources();
    for (const auto& [group, quota] : quota_informers_) {
      if (!quota.informer->HasSynced()) unsynced.push_back(quota.informer->resource());
    }
    for (const auto& informer : device_informers_) {
      if (!informer->HasSynced()) unsynced.push_back(informer->resource());
    }
    std::string reason;
    if (quota_informers_.empty()) {
      reason = fmt::format(
          "no ElasticQuota API is served: neither {}/v1alpha1 nor {}/v1alpha1 lists "
          "elasticquotas (install the ElasticQuota CRD); quotas cannot be enforced",
          kube::kElasticQuotaGroup, kube::kLegacyElasticQuotaGroup);
    } else if (!unsynced.empty()) {
      std::string names;
      for (const auto& n : unsynced)
        names += (names.empty() ? "" : ", ") + n;
      reason = "cluster cache not synced yet: waiting for the first list of " + names;
    }
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

  // Readiness, periodic re-discovery, then status.used write-back every interval.
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
          ApplyDeviceApi(apis);
        } else {
          Log(LogLevel::kWarn, "API discovery failed; keeping the known groups",
              {{"error", s.message()}});
        }
      }
      UpdateReadiness();
      // Only the actor writes status.used (architecture.md, "Two replicas, one actor").
      if (cache_->ready() && config_.status_updates && leadership_->Leads()) WriteStatus();
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
      for (const auto& [ns, q] : state.quota_set().quotas()) {
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
    std::vector<kube::GroupVersion> groups;
    {
      std::lock_guard lock(groups_mutex_);
      groups = quota_groups_;
    }
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
  kube::InformerOptions base_;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<Leadership> leadership_;      // after client_: destroyed before it
  SchedulerLeaseFollower* follower_ = nullptr;  // leadership_, when it follows a lease
  std::unique_ptr<kube::InformerSet> informers_;
  std::map<std::string, QuotaInformer> quota_informers_;  // by group; main/background thread
  std::set<std::string> reported_unusable_;
  bool warned_no_quota_api_ = false;
  // The DRA informers and the version they read ("" = none); main/background thread.
  std::vector<std::unique_ptr<kube::Informer>> device_informers_;
  std::string device_api_;
  bool logged_sync_ = false;
  std::mutex groups_mutex_;
  std::vector<kube::GroupVersion> quota_groups_;
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

std::unique_ptr<LiveMode> LiveMode::Start(const ExtenderConfig& config, SchedulerCache* cache,
                                          Metrics* metrics, std::string* error) {
  auto live = std::make_unique<LiveModeImpl>(config, cache, metrics);
  if (!live->Init(error)) return nullptr;
  return live;
}

}  // namespace capext
