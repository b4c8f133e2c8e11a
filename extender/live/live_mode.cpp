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
#include "extender/live/cache_sink.h"
#include "extender/live/group_sink.h"
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

// Evictions and nudges are rare: the reclaim loop waits for each on its own thread.
class LiveEvictor final : public Evictor {
 public:
  explicit LiveEvictor(kube::RestClient* client) : evictor_(client) {}
  EvictOutcome Evict(const Pod& victim, const std::string& reason) override {
    kube::ApiWriteResult result = evictor_.Evict(victim.ns, victim.name, victim.uid);
    Log(result.ok ? LogLevel::kInfo : LogLevel::kWarn, "eviction",
        {{"pod", victim.Key()},
         {"reason", reason},
         {"result", result.ok ? "evicted" : Describe(result)}});
    return EvictOutcome{result.ok, result.refused_by_disruption_budget,
                        result.ok ? "" : Describe(result), result.retry_after_seconds};
  }

 private:
  kube::Evictor evictor_;
};

class LiveNudger final : public RequeueNudger {
 public:
  explicit LiveNudger(kube::RestClient* client) : annotator_(client) {}
  bool Nudge(const Pod& pod) override {
    kube::ApiWriteResult result =
        annotator_.MarkForRetry(pod.ns, pod.name, std::chrono::system_clock::now());
    if (!result.ok)
      Log(LogLevel::kWarn, "requeue nudge failed",
          {{"pod", pod.Key()}, {"error", Describe(result)}});
    return result.ok;
  }

 private:
  kube::PodAnnotator annotator_;
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
    if (Status s = kube::RestClient::Create(kube_config, {}, &client_); !s.ok()) {
      *error = s.message();
      return false;
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
    ApplyGroupApis(apis);
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
    if (informers_) informers_->Stop();
    for (auto& [group, quota] : quota_informers_)
      quota.informer->Stop();
    quota_informers_.clear();
    for (auto& [resource, informer] : group_informers_)
      informer->Stop();
    group_informers_.clear();
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
    return std::make_unique<LiveEvictor>(client_.get());
  }
  std::unique_ptr<RequeueNudger> MakeNudger() override {
    return std::make_unique<LiveNudger>(client_.get());
  }
  std::unique_ptr<EventSink> MakeEventSink() override {
    return std::make_unique<kube::ApiEventSink>(client_.get());
  }
  kube::GateSupport ProbeSchedulingGates() override {
    return kube::ProbeSchedulingGates(client_.get(), "default");
  }
  std::unique_ptr<kube::GateLifter> MakeGateLifter() override {
    return std::make_unique<kube::GateLifter>(client_.get());
  }

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

  // docs/workloads-live.md "Where group objects come from": an informer for PodGroups and one
  // for Workloads while their API is served; one no longer served is stopped and its specs
  // dropped (an empty Replace). Neither holds readiness back. Main thread at Init, then the
  // background thread.
  void ApplyGroupApis(const kube::DiscoveredApis& apis) {
    const std::pair<const char*, const std::optional<kube::GroupVersion>*> wanted[] = {
        {kPodGroupsResource, &apis.pod_group}, {kWorkloadsResource, &apis.workload}};
    for (const auto& [resource, gv] : wanted) {
      auto it = group_informers_.find(resource);
      if (gv->has_value() && it == group_informers_.end()) {
        kube::InformerOptions options = base_;
        options.resource = resource;
        options.path = (*gv)->ApiPath() + "/" + resource;
        auto informer = std::make_unique<kube::Informer>(client_.get(), options, &sink_);
        informer->Start();
        Log(LogLevel::kInfo, "watching pod groups",
            {{"api", (*gv)->ToString()}, {"resource", resource}});
        group_informers_[resource] = std::move(informer);
      } else if (!gv->has_value() && it != group_informers_.end()) {
        Log(LogLevel::kWarn, "pod-group API no longer served: its objects are dropped",
            {{"resource", resource}});
        it->second->Stop();
        group_informers_.erase(it);
        sink_.Replace(resource, {});
      }
    }
  }

  // Ready once every informer listed once and at least one ElasticQuota API is served.
  void UpdateReadiness() {
    std::vector<std::string> unsynced = informers_->UnsyncedResources();
    for (const auto& [group, quota] : quota_informers_) {
      if (!quota.informer->HasSynced()) unsynced.push_back(quota.informer->resource());
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
          ApplyGroupApis(apis);
        } else {
          Log(LogLevel::kWarn, "API discovery failed; keeping the known groups",
              {{"error", s.message()}});
        }
      }
      UpdateReadiness();
      if (cache_->ready() && config_.status_updates) WriteStatus();
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
      kube::ApiWriteResult r =
          kube::StatusPatcher(client_.get(), *gv).PatchUsed(row.ns, row.name, row.used);
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
  std::unique_ptr<kube::InformerSet> informers_;
  std::map<std::string, QuotaInformer> quota_informers_;  // by group; main/background thread
  std::map<std::string, std::unique_ptr<kube::Informer>> group_informers_;  // by resource
  std::set<std::string> reported_unusable_;
  bool warned_no_quota_api_ = false;
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
