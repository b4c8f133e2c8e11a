#include "extender/live/group_sink.h"

#include <set>

#include "config/pod_group_codec.h"
#include "extender/log.h"

namespace capext {

Status GroupObjectSink::Decode(const std::string& resource, std::string_view json,
                               std::string* object_key, std::vector<PodGroupSpec>* specs) {
  Status s;
  specs->clear();
  if (resource == kPodGroupsResource) {
    PodGroupSpec spec;
    s = DecodePodGroupObject(json, &spec);
    if (s.ok()) {
      *object_key = spec.key.ns + "/" + spec.key.name;
      specs->push_back(std::move(spec));
    }
  } else {
    std::string ns, name;
    s = DecodeWorkloadObject(json, specs, &ns, &name);
    if (s.ok()) *object_key = ns + "/" + name;
  }
  if (!s.ok()) {
    Log(LogLevel::kWarn, "group object skipped", {{"resource", resource}, {"error", s.message()}});
  }
  return s;
}

void GroupObjectSink::Set(ClusterState& state, const std::string& resource,
                          const std::string& object_key, std::vector<PodGroupSpec> specs) {
  auto& stated = stated_[resource];
  std::set<GroupKey> now;
  for (const auto& spec : specs)
    now.insert(spec.key);
  if (auto it = stated.find(object_key); it != stated.end()) {
    for (const auto& key : it->second) {
      if (!now.count(key)) state.DeletePodGroup(key);
    }
  }
  std::vector<GroupKey> keys(now.begin(), now.end());
  for (const auto& spec : specs)
    state.UpsertPodGroup(spec);
  if (keys.empty()) {
    stated.erase(object_key);
  } else {
    stated[object_key] = std::move(keys);
  }
}

void GroupObjectSink::Replace(ClusterState& state, const std::string& resource,
                              const std::vector<std::string>& objects_json) {
  std::map<std::string, std::vector<PodGroupSpec>> listed;
  for (const auto& json : objects_json) {
    std::string key;
    std::vector<PodGroupSpec> specs;
    if (Decode(resource, json, &key, &specs).ok()) listed[key] = std::move(specs);
  }
  std::vector<std::string> gone;
  for (const auto& [key, keys] : stated_[resource]) {
    if (!listed.count(key)) gone.push_back(key);
  }
  for (const auto& key : gone)
    Set(state, resource, key, {});
  for (auto& [key, specs] : listed)
    Set(state, resource, key, std::move(specs));
}

void GroupObjectSink::Apply(ClusterState& state, const std::string& resource,
                            kube::WatchEventType type, std::string_view object_json) {
  std::string key;
  std::vector<PodGroupSpec> specs;
  if (!Decode(resource, object_json, &key, &specs).ok()) return;
  if (type == kube::WatchEventType::kDeleted) specs.clear();
  Set(state, resource, key, std::move(specs));
}

}  // namespace capext
