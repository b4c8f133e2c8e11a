// CacheSink: the one writer from informers into the SchedulerCache. Decodes each object (JSON
// text: pods and nodes with the streaming decoder, other kinds with the object codec's DOM path;
// a pod's or node's message from a protobuf watch with the protobuf decoder)
// and applies it; a Replace (first list, relist after 410, resync)
// also removes every cached object of that resource that the list no longer has. Objects that
// fail to decode are logged and skipped (they can never crash the cache). ElasticQuotas come from
// one informer per API group (resource "elasticquotas" or "elasticquotas.<group>"): a Replace
// removes only quotas of its own group, and a quota whose namespace and name are already taken
// by a quota of the other group is reported and ignored (one quota per namespace). PodGroups and
// Workloads ("podgroups", "workloads") become PodGroupSpecs through a GroupObjectSink.
// Thread-safety: any thread (the API client's thread, live mode's discovery); serialised by the
// cache's lock.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/object_codec.h"
#include "extender/kube/informer_sink.h"
#include "extender/live/group_sink.h"
#include "extender/metrics.h"
#include "extender/quota_tree_log.h"
#include "extender/scheduler_cache.h"

namespace capext {

class CacheSink final : public kube::InformerSink {
 public:
  CacheSink(SchedulerCache* cache, Metrics* metrics) : cache_(cache), metrics_(metrics) {}
  void Replace(const std::string& resource, std::vector<std::string> objects_json) override;
  void Apply(const std::string& resource, kube::WatchEventType type, kube::ObjectEncoding encoding,
             std::string_view object) override;

 private:
  // Applies one decoded watch event's object (kDeleted removes it).
  void Write(const std::string& resource, kube::WatchEventType type, KubeObject&& obj);

  SchedulerCache* cache_;
  Metrics* metrics_;
  QuotaTreeLog tree_log_;   // used under the cache's write lock
  GroupObjectSink groups_;  // PodGroups and Workloads; used under the cache's write lock
};

}  // namespace capext
