#include "extender/live/live_informers.h"

#include <utility>

#include "extender/kube/informer_set.h"
#include "extender/live/group_sink.h"
#include "extender/log.h"

namespace capext {
namespace {

ResourceSync ToResourceSync(const kube::Informer& informer, const kube::SyncState& state) {
  return ResourceSync{informer.resource(), state.listed, state.in_sync, state.since, state.cause};
}

}  // namespace

LiveInformers::LiveInformers(kube::RestClient* client, kube::InformerSink* sink,
                             kube::InformerOptions base, std::chrono::milliseconds max_out_of_sync)
    : client_(client), sink_(sink), base_(std::move(base)), max_out_of_sync_(max_out_of_sync) {
  for (auto& options : kube::LiveModeInformers(kube::DiscoveredApis{}, base_))
    fixed_.push_back(std::make_unique<kube::Informer>(client_, std::move(options), sink_));
}

LiveInformers::~LiveInformers() {
  Stop();
}

void LiveInformers::Start() {
  std::lock_guard lock(mutex_);
  for (auto& informer : fixed_)
    informer->Start();
}

bool LiveInformers::ApplyQuotaGroups(const kube::DiscoveredApis& apis) {
  std::map<std::string, kube::GroupVersion> served;
  for (const auto& gv : apis.elastic_quota_groups)
    served[gv.group] = gv;
  std::lock_guard lock(mutex_);
  if (stopped_) return false;
  bool changed = false;
  for (auto it = quota_.begin(); it != quota_.end();) {
    auto now = served.find(it->first);
    if (now != served.end() && now->second.version == it->second.gv.version) {
      it->second.missing_once = false;
      ++it;
      continue;
    }
    if (now == served.end() && !it->second.missing_once) {
      it->second.missing_once = true;
      Log(LogLevel::kWarn,
          "ElasticQuota API missing from discovery: its quotas are kept, and dropped if the next "
          "discovery does not list it either",
          {{"api", it->second.gv.ToString()}});
      ++it;
      continue;
    }
    Log(LogLevel::kWarn, "ElasticQuota API no longer served: its quotas are dropped",
        {{"api", it->second.gv.ToString()}});
    it->second.informer->Stop();
    sink_->Replace(kube::ElasticQuotaResource(it->first), {});
    it = quota_.erase(it);
    changed = true;
  }
  for (const auto& gv : apis.elastic_quota_groups) {
    if (quota_.count(gv.group)) continue;
    auto informer =
        std::make_unique<kube::Informer>(client_, kube::ElasticQuotaInformer(gv, base_), sink_);
    informer->Start();
    Log(LogLevel::kInfo, "watching ElasticQuotas", {{"api", gv.ToString()}});
    quota_[gv.group] = QuotaInformer{gv, std::move(informer)};
    changed = true;
  }
  return changed;
}

bool LiveInformers::ApplyDeviceApi(const kube::DiscoveredApis& apis) {
  const std::string served = apis.device_api ? apis.device_api->ToString() : "";
  std::lock_guard lock(mutex_);
  if (stopped_ || served == device_api_) return false;
  for (auto& informer : device_) {
    informer->Stop();
    sink_->Replace(informer->resource(), {});
  }
  device_.clear();
  if (!device_api_.empty()) {
    Log(LogLevel::kWarn, "DRA API no longer served at this version: its objects are dropped",
        {{"api", device_api_}});
  }
  device_api_ = served;
  if (!apis.device_api) return true;
  for (auto& options : kube::DeviceInformers(*apis.device_api, base_)) {
    device_.push_back(std::make_unique<kube::Informer>(client_, std::move(options), sink_));
    device_.back()->Start();
  }
  Log(LogLevel::kInfo, "watching ResourceClaims, ResourceClaimTemplates and DeviceClasses",
      {{"api", device_api_}});
  return true;
}

void LiveInformers::ApplyGroupApis(const kube::DiscoveredApis& apis) {
  const std::pair<const char*, const std::optional<kube::GroupVersion>*> wanted[] = {
      {kPodGroupsResource, &apis.pod_group}, {kWorkloadsResource, &apis.workload}};
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  for (const auto& [resource, gv] : wanted) {
    auto it = groups_.find(resource);
    if (gv->has_value() && it == groups_.end()) {
      kube::InformerOptions options = base_;
      options.resource = resource;
      options.path = (*gv)->ApiPath() + "/" + resource;
      options.protobuf_watch = false;  // custom resources: JSON only
      auto informer = std::make_unique<kube::Informer>(client_, options, sink_);
      informer->Start();
      Log(LogLevel::kInfo, "watching pod groups",
          {{"api", (*gv)->ToString()}, {"resource", resource}});
      groups_[resource] = std::move(informer);
    } else if (!gv->has_value() && it != groups_.end()) {
      Log(LogLevel::kWarn, "pod-group API no longer served: its objects are dropped",
          {{"resource", resource}});
      it->second->Stop();
      groups_.erase(it);
      sink_->Replace(resource, {});
    }
  }
}

void LiveInformers::Stop() {
  std::lock_guard lock(mutex_);
  stopped_ = true;
  for (auto& informer : fixed_)
    informer->Stop();
  for (auto& [group, quota] : quota_)
    quota.informer->Stop();
  for (auto& informer : device_)
    informer->Stop();
  for (auto& [resource, informer] : groups_)
    informer->Stop();
}

CacheSyncReport LiveInformers::Report(std::chrono::steady_clock::time_point now) const {
  CacheSyncReport report{now, max_out_of_sync_, {}};
  std::lock_guard lock(mutex_);
  for (const auto& informer : fixed_)
    report.resources.push_back(ToResourceSync(*informer, informer->Sync(now)));
  for (const auto& [group, quota] : quota_)
    report.resources.push_back(ToResourceSync(*quota.informer, quota.informer->Sync(now)));
  for (const auto& informer : device_)
    report.resources.push_back(ToResourceSync(*informer, informer->Sync(now)));
  for (const auto& [resource, informer] : groups_)
    report.resources.push_back(ToResourceSync(*informer, informer->Sync(now)));
  return report;
}

std::vector<std::string> LiveInformers::UnsyncedResources() const {
  std::vector<std::string> out;
  std::lock_guard lock(mutex_);
  for (const auto& informer : fixed_) {
    if (!informer->HasSynced()) out.push_back(informer->resource());
  }
  for (const auto& [group, quota] : quota_) {
    if (!quota.informer->HasSynced()) out.push_back(quota.informer->resource());
  }
  for (const auto& informer : device_) {
    if (!informer->HasSynced()) out.push_back(informer->resource());
  }
  for (const auto& [resource, informer] : groups_) {
    if (!informer->HasSynced()) out.push_back(informer->resource());
  }
  return out;
}

std::vector<kube::GroupVersion> LiveInformers::QuotaGroups() const {
  std::vector<kube::GroupVersion> out;
  std::lock_guard lock(mutex_);
  for (const auto& [group, quota] : quota_)
    out.push_back(quota.gv);
  return out;
}

}  // namespace capext
