// GroupObjectSink: PodGroup and Workload objects
// (docs/workloads-live.md#where-group-objects-come-from) from their informers into the cluster
// state's PodGroupSpecs. A Replace (first list, relist, resync, or an empty one when the API stops
// being served) removes the specs of that resource the list no longer has; a Workload's podGroups
// entries are remembered per object, so an entry removed from a Workload drops its spec. Malformed
// objects are logged and skipped. Thread-safety: called under the cache's write lock by CacheSink
// (one writer).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_state.h"
#include "core/status.h"
#include "extender/kube/informer_sink.h"

namespace capext {

// The informer resource names live mode uses for the two group APIs.
inline constexpr char kPodGroupsResource[] = "podgroups";
inline constexpr char kWorkloadsResource[] = "workloads";

class GroupObjectSink {
 public:
  static bool Handles(std::string_view resource) {
    return resource == kPodGroupsResource || resource == kWorkloadsResource;
  }
  void Replace(ClusterState& state, const std::string& resource,
               const std::vector<std::string>& objects_json);
  void Apply(ClusterState& state, const std::string& resource, kube::WatchEventType type,
             std::string_view object_json);

 private:
  // Decodes one object: its "ns/name" and the specs it states; the error when it is malformed
  // (logged here, and the object skipped).
  Status Decode(const std::string& resource, std::string_view json, std::string* object_key,
                std::vector<PodGroupSpec>* specs);
  // Makes the object's specs exactly `specs`.
  void Set(ClusterState& state, const std::string& resource, const std::string& object_key,
           std::vector<PodGroupSpec> specs);

  // resource -> object "ns/name" -> the group keys it stated.
  std::map<std::string, std::map<std::string, std::vector<GroupKey>>> stated_;
};

}  // namespace capext
