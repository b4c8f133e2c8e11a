#include "extender/live/cache_sink.h"

#include <set>

#include "config/object_codec.h"
#include "config/object_protobuf_decoder.h"
#include "config/object_stream_decoder.h"
#include "extender/log.h"

namespace capext {
namespace {

// "scheduling.x-k8s.io" for "elasticquotas", <group> for "elasticquotas.<group>", else "".
std::string QuotaGroupOf(const std::string& resource) {
  if (resource == "elasticquotas") return kElasticQuotaGroup;
  if (resource.rfind("elasticquotas.", 0) == 0) return resource.substr(14);
  return "";
}

// Decodes one object of `resource` through the DOM. A failure is logged here, where the object
// can be described, and returned: the caller skips the object.
Status DecodeWithDom(const std::string& resource, std::string_view text,
                     const DecodeOptions& options, KubeObject* out) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    Log(LogLevel::kWarn, "watch object is not JSON; skipped", {{"resource", resource}});
    return Status::Invalid("watch object is not JSON");
  }
  static const std::map<std::string, std::string> kKinds = {
      {"pods", "Pod"},
      {"nodes", "Node"},
      {"priorityclasses", "PriorityClass"},
      {"poddisruptionbudgets", "PodDisruptionBudget"},
      {"resourceclaims", "ResourceClaim"},
      {"resourceclaimtemplates", "ResourceClaimTemplate"},
      {"deviceclasses", "DeviceClass"}};
  auto kind_it = kKinds.find(resource);
  std::string default_kind;
  if (kind_it != kKinds.end()) {
    default_kind = kind_it->second;
  } else if (!QuotaGroupOf(resource).empty()) {
    default_kind = "ElasticQuota";
  } else {
    return Status::NotFound("no decoder for resource " + resource);  // not watched: not logged
  }
  bool skipped = false;
  std::string kind;
  Status s = DecodeKubeObject(doc, options, default_kind, out, &skipped, &kind);
  if (s.ok() && skipped) s = Status::Invalid("unexpected kind " + kind);
  if (!s.ok()) {
    Log(LogLevel::kWarn, "cannot decode object; skipped",
        {{"resource", resource},
         {"object", DescribeObject(doc, default_kind)},
         {"error", s.message()}});
  }
  return s;
}

// The stored quota (in use or waiting as a duplicate) with the namespace and name of `quota` but
// of the other API group: the core keys quotas by namespace and name only, so `quota` must
// neither replace nor delete it.
const ElasticQuota* SameNameOtherGroup(const ClusterState& state, const ElasticQuota& quota) {
  const ElasticQuota* in_use = state.QuotaFor(quota.ns);
  if (in_use != nullptr && in_use->name == quota.name) {
    return in_use->api_group != quota.api_group ? in_use : nullptr;
  }
  for (const auto& d : state.quota_set().duplicates()) {
    if (d.ns == quota.ns && d.name == quota.name && d.api_group != quota.api_group) return &d;
  }
  return nullptr;
}

// Pods and nodes, nearly every event, go through the streaming decoder (no DOM); anything it
// does not decode (another kind, a malformed object: logged by the DOM path) and the rare kinds
// go through the DOM. A failure has been logged; the caller skips the object.
Status Decode(const std::string& resource, std::string_view text, const DecodeOptions& options,
              KubeObject* out) {
  std::string kind;
  if (resource == "pods") {
    Pod pod;
    if (DecodePodJson(text, options, &pod, &kind).ok() && kind == "Pod") {
      *out = std::move(pod);
      return {};
    }
  } else if (resource == "nodes") {
    Node node;
    if (DecodeNodeJson(text, &node, &kind).ok() && kind == "Node") {
      *out = std::move(node);
      return {};
    }
  }
  return DecodeWithDom(resource, text, options, out);
}

// A pod's or a node's message from a protobuf watch (the informer asks for protobuf for those
// two resources only). A failure is logged here and returned: the caller skips the object.
Status DecodeProtobuf(const std::string& resource, std::string_view message,
                      const DecodeOptions& options, KubeObject* out) {
  Status s;
  if (resource == "pods") {
    Pod pod;
    s = DecodePodProtobuf(message, options, &pod);
    if (s.ok()) *out = std::move(pod);
  } else if (resource == "nodes") {
    Node node;
    s = DecodeNodeProtobuf(message, &node);
    if (s.ok()) *out = std::move(node);
  } else {
    s = Status::Invalid("no protobuf decoder for resource " + resource);
  }
  if (!s.ok()) {
    Log(LogLevel::kWarn, "cannot decode object; skipped",
        {{"resource", resource}, {"encoding", "protobuf"}, {"error", s.message()}});
  }
  return s;
}

void Upsert(ClusterState& state, KubeObject&& obj) {
  std::visit(
      [&](auto&& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Pod>) state.UpsertPod(std::move(o));
        if constexpr (std::is_same_v<T, Node>) state.UpsertNode(std::move(o));
        if constexpr (std::is_same_v<T, ElasticQuota>) {
          if (const ElasticQuota* other = SameNameOtherGroup(state, o)) {
            Log(LogLevel::kWarn, "second ElasticQuota in a namespace is ignored",
                {{"quota", o.Key()},
                 {"group", o.api_group},
                 {"kept", other->Key()},
                 {"kept_group", other->api_group}});
          } else if (!state.UpsertQuota(o)) {
            Log(LogLevel::kWarn, "second ElasticQuota in a namespace is ignored",
                {{"quota", o.Key()}, {"group", o.api_group}});
          }
        }
        if constexpr (std::is_same_v<T, PriorityClass>) state.UpsertPriorityClass(o);
        if constexpr (std::is_same_v<T, PodDisruptionBudget>) state.UpsertPdb(o);
        // docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted: a malformed claim is
        // logged once per version and kept, so that its pods wait with the reason.
        if constexpr (std::is_same_v<T, ResourceClaim>) {
          if (!o.malformed.empty()) {
            Log(LogLevel::kWarn, "malformed ResourceClaim; its pods wait",
                {{"claim", o.Key()}, {"error", o.malformed}});
          }
          state.UpsertResourceClaim(std::move(o));
        }
        if constexpr (std::is_same_v<T, KubeClaimTemplate>) {
          if (!o.tmpl.malformed.empty()) {
            Log(LogLevel::kWarn, "malformed ResourceClaimTemplate; its pods wait",
                {{"template", o.tmpl.Key()}, {"error", o.tmpl.malformed}});
          }
          state.UpsertResourceClaimTemplate(std::move(o.tmpl));
        }
        if constexpr (std::is_same_v<T, DeviceClass>) state.UpsertDeviceClass(std::move(o));
      },
      std::move(obj));
}

void Remove(ClusterState& state, const KubeObject& obj) {
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Pod>) state.DeletePod(StoreKeyOf(o));
        if constexpr (std::is_same_v<T, Node>) state.DeleteNode(o.name);
        if constexpr (std::is_same_v<T, ElasticQuota>) {
          if (SameNameOtherGroup(state, o) == nullptr) state.DeleteQuota(o.ns, o.name);
        }
        if constexpr (std::is_same_v<T, PriorityClass>) state.DeletePriorityClass(o.name);
        if constexpr (std::is_same_v<T, PodDisruptionBudget>) state.DeletePdb(o.ns, o.name);
        if constexpr (std::is_same_v<T, ResourceClaim>) state.DeleteResourceClaim(o.ns, o.name);
        if constexpr (std::is_same_v<T, KubeClaimTemplate>)
          state.DeleteResourceClaimTemplate(o.tmpl.ns, o.tmpl.name);
        if constexpr (std::is_same_v<T, DeviceClass>) state.DeleteDeviceClass(o.name);
      },
      obj);
}

}  // namespace

void CacheSink::Replace(const std::string& resource, std::vector<std::string> objects_json) {
  if (GroupObjectSink::Handles(resource)) {
    cache_->Write([&](ClusterState& state) {
      groups_.Replace(state, resource, objects_json);
      return 0;
    });
    metrics_->Count("capacity_extender_informer_lists_total", "resource", resource);
    return;
  }
  std::vector<KubeObject> objects;
  objects.reserve(objects_json.size());
  for (const auto& text : objects_json) {
    KubeObject obj;
    if (Decode(resource, text, cache_->decode_options(), &obj).ok()) {
      objects.push_back(std::move(obj));
    }
  }
  cache_->Write([&](ClusterState& state) {
    // Remove what the list no longer has, then apply every listed object.
    std::set<std::string> keep;
    for (const auto& obj : objects) {
      std::visit(
          [&](const auto& o) {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, Pod>) keep.insert(StoreKeyOf(o));
            if constexpr (std::is_same_v<T, Node> || std::is_same_v<T, PriorityClass> ||
                          std::is_same_v<T, DeviceClass>)
              keep.insert(o.name);
            if constexpr (std::is_same_v<T, ResourceClaim>) keep.insert(o.Key());
            if constexpr (std::is_same_v<T, KubeClaimTemplate>) keep.insert(o.tmpl.Key());
            if constexpr (std::is_same_v<T, ElasticQuota> ||
                          std::is_same_v<T, PodDisruptionBudget>) {
              keep.insert(o.ns + "/" + o.name);
            }
          },
          obj);
    }
    if (resource == "pods") {
      std::vector<std::string> gone;
      for (const auto& [uid, pod] : state.pods()) {
        if (!keep.count(pod.store_key())) gone.push_back(pod.store_key());
      }
      for (const auto& uid : gone)
        state.DeletePod(uid);
    } else if (resource == "nodes") {
      std::vector<std::string> gone;
      for (const auto& [name, node] : state.nodes()) {
        if (!keep.count(name)) gone.push_back(name);
      }
      for (const auto& name : gone)
        state.DeleteNode(name);
    } else if (const std::string group = QuotaGroupOf(resource); !group.empty()) {
      std::vector<std::pair<std::string, std::string>> gone;
      for (const auto& [ns, q] : state.quota_set().quotas()) {
        if (q.api_group == group && !keep.count(ns + "/" + q.name)) gone.emplace_back(ns, q.name);
      }
      for (const auto& d : state.quota_set().duplicates()) {
        if (d.api_group == group && !keep.count(d.ns + "/" + d.name)) {
          gone.emplace_back(d.ns, d.name);
        }
      }
      for (const auto& [ns, name] : gone)
        state.DeleteQuota(ns, name);
    } else if (resource == "priorityclasses") {
      std::vector<std::string> gone;
      for (const auto& [name, pc] : state.priority_classes()) {
        if (!keep.count(name)) gone.push_back(name);
      }
      for (const auto& name : gone)
        state.DeletePriorityClass(name);
    } else if (resource == "poddisruptionbudgets") {
      std::vector<std::pair<std::string, std::string>> gone;
      for (const auto& pdb : state.pdbs()) {
        if (!keep.count(pdb.ns + "/" + pdb.name)) gone.emplace_back(pdb.ns, pdb.name);
      }
      for (const auto& [ns, name] : gone)
        state.DeletePdb(ns, name);
    } else if (resource == "resourceclaims") {
      std::vector<ResourceClaim> gone;
      for (const auto& [key, claim] : state.devices().claims()) {
        if (!keep.count(key)) gone.push_back(claim);
      }
      for (const auto& c : gone)
        state.DeleteResourceClaim(c.ns, c.name);
    } else if (resource == "resourceclaimtemplates") {
      std::vector<ResourceClaimTemplate> gone;
      for (const auto& [key, tmpl] : state.devices().templates()) {
        if (!keep.count(key)) gone.push_back(tmpl);
      }
      for (const auto& t : gone)
        state.DeleteResourceClaimTemplate(t.ns, t.name);
    } else if (resource == "deviceclasses") {
      std::vector<std::string> gone;
      for (const auto& [name, entry] : state.devices().classes()) {
        if (!keep.count(name)) gone.push_back(name);
      }
      for (const auto& name : gone)
        state.DeleteDeviceClass(name);
    }
    for (auto& obj : objects)
      Upsert(state, std::move(obj));
    if (!QuotaGroupOf(resource).empty()) tree_log_.Report(state.ledger().tree());
    return 0;
  });
  metrics_->Count("capacity_extender_informer_lists_total", "resource", resource);
}

void CacheSink::Apply(const std::string& resource, kube::WatchEventType type,
                      kube::ObjectEncoding encoding, std::string_view object) {
  if (encoding == kube::ObjectEncoding::kProtobuf) {
    metrics_->Count("capacity_extender_informer_protobuf_events_total", "resource", resource);
    KubeObject obj;
    if (!DecodeProtobuf(resource, object, cache_->decode_options(), &obj).ok()) return;
    return Write(resource, type, std::move(obj));
  }
  const std::string_view object_json = object;
  if (GroupObjectSink::Handles(resource)) {
    cache_->Write([&](ClusterState& state) {
      groups_.Apply(state, resource, type, object_json);
      return 0;
    });
    metrics_->Count("capacity_extender_informer_events_total", "resource", resource);
    return;
  }
  KubeObject obj;
  if (!Decode(resource, object_json, cache_->decode_options(), &obj).ok()) return;
  Write(resource, type, std::move(obj));
}

void CacheSink::Write(const std::string& resource, kube::WatchEventType type, KubeObject&& obj) {
  cache_->Write([&](ClusterState& state) {
    if (type == kube::WatchEventType::kDeleted) {
      Remove(state, obj);
    } else {
      Upsert(state, std::move(obj));
    }
    if (!QuotaGroupOf(resource).empty()) tree_log_.Report(state.ledger().tree());
    return 0;
  });
  metrics_->Count("capacity_extender_informer_events_total", "resource", resource);
}

}  // namespace capext
