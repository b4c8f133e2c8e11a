#include "extender/live/live_mode.h"

#include <condition_variable>
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
#include "extender/log.h"

namespace capext {
namespace {

std::string Describe(const kube::ApiWriteResult& r) {
  return r.http_status == 0 ? r.message
                            : fmt::format("HTTP {} {}: {}", r.http_status, r.reason, r.message);
}

class LiveBinder final : public PodBinder {
 public:
  explicit LiveBinder(kube::RestClient* client) : binder_(client) {}
  BindOutcome Bind(const BindRequest& r) override {
    kube::ApiWriteResult result = binder_.Bind(r.ns, r.name, r.uid, r.node);
    return BindOutcome{result.ok, result.http_status, result.ok ? "" : Describe(result), false};
  }
  bool blocking() const override { return true; }

 private:
  kube::Binder binder_;
};

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

class LiveModeImpl final : public LiveMode {
 public:
  LiveModeImpl(const ExtenderConfig& config, SchedulerCache* cache, Metrics* metrics)
      : config_(config), cache_(cache), metrics_(metrics), sink_(cache, metrics) {}
  ~LiveModeImpl() override { Stop(); }

  bool Init(std::string* error) {
    kube::InitializeHttpThreadPool(4);
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
         {"elasticquota",
          apis.elastic_quota ? apis.elastic_quota->ToString() : "none (CRD not installed)"}});
    elastic_quota_ = apis.elastic_quota;
    kube::InformerOptions base;
    base.resync_period = config_.resync_period;
    informers_ = std::make_unique<kube::InformerSet>(client_.get(), &sink_, apis);
    for (auto& options : kube::LiveModeInformers(apis, base))
      informers_->Add(std::move(options));
    started_ = std::chrono::steady_clock::now();
    informers_->Start();
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
  }

  std::unique_ptr<PodBinder> MakeBinder() override {
    return std::make_unique<LiveBinder>(client_.get());
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

 private:
  // Readiness, then status.used write-back every interval.
  void Background(std::stop_token stop) {
    std::mutex mutex;
    std::unique_lock lock(mutex);
    while (!stop.stop_requested()) {
      if (!cache_->ready() && informers_->HasSynced()) {
        cache_->set_ready(true);
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started_)
                            .count();
        Log(LogLevel::kInfo, "cluster cache synced", {{"sync_ms", std::to_string(ms)}});
      }
      if (cache_->ready() && config_.status_updates && elastic_quota_) WriteStatus();
      wake_.wait_for(lock, std::min(config_.status_update_interval, std::chrono::milliseconds(200)),
                     [&] { return stop.stop_requested(); });
    }
  }

  void WriteStatus() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_status_ < config_.status_update_interval) return;
    last_status_ = now;
    struct Row {
      std::string ns, name;
      std::map<std::string, std::string> used;
    };
    // Every governed resource (zero included) is written whenever the object's status differs
    // from the computed usage: also after the quota was re-created or someone else wrote it.
    std::vector<Row> rows = cache_->Read([&](const ClusterState& state) {
      std::vector<Row> out;
      for (const auto& [ns, q] : state.quota_set().quotas()) {
        const ResourceList& used = state.Used(ns);
        Row row{ns, q.name, {}};
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
    kube::StatusPatcher patcher(client_.get(), *elastic_quota_);
    for (const auto& row : rows) {
      kube::ApiWriteResult r = patcher.PatchUsed(row.ns, row.name, row.used);
      if (r.ok) {
        metrics_->Count("capacity_extender_status_patches_total");
      } else {
        Log(LogLevel::kWarn, "status.used patch failed",
            {{"quota", row.ns + "/" + row.name}, {"error", Describe(r)}});
      }
    }
  }

  ExtenderConfig config_;
  SchedulerCache* cache_;
  Metrics* metrics_;
  CacheSink sink_;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<kube::InformerSet> informers_;
  std::optional<kube::GroupVersion> elastic_quota_;
  std::chrono::steady_clock::time_point started_;
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
