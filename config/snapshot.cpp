#include "config/snapshot.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <rapidjson/error/en.h>

#include "config/json_fields.h"
#include "config/yaml_json.h"

namespace capext {
namespace {

void Collect(KubeObject&& obj, Snapshot* out) {
  std::visit(
      [&](auto&& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Pod>) out->pods.push_back(std::move(o));
        if constexpr (std::is_same_v<T, Node>) out->nodes.push_back(std::move(o));
        if constexpr (std::is_same_v<T, ElasticQuota>) out->quotas.push_back(std::move(o));
        if constexpr (std::is_same_v<T, PriorityClass>)
          out->priority_classes.push_back(std::move(o));
        if constexpr (std::is_same_v<T, PodDisruptionBudget>) out->pdbs.push_back(std::move(o));
        if constexpr (std::is_same_v<T, DeviceClass>) out->device_classes.push_back(std::move(o));
        if constexpr (std::is_same_v<T, ResourceClaim>)
          out->resource_claims.push_back(std::move(o));
        if constexpr (std::is_same_v<T, KubeClaimTemplate>)
          out->claim_templates.push_back(std::move(o.tmpl));
      },
      obj);
}

}  // namespace

Status AddToSnapshot(const rapidjson::Value& object, const DecodeOptions& options,
                     const std::string& where, Snapshot* out) {
  if (!object.IsObject()) return Status::Error(fmt::format("{}: expected an object", where));
  // A List (kind List, PodList, ...) carries its objects in items.
  std::string kind;
  (void)json::ReadString(object, "kind", "kind", &kind);
  if (kind == "List" || (kind.size() > 4 && kind.ends_with("List"))) {
    const rapidjson::Value* items = json::Member(object, "items");
    if (items == nullptr) return {};
    if (!items->IsArray()) return Status::Error(fmt::format("{}: items: expected array", where));
    const std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      const rapidjson::Value& item = (*items)[i];
      const std::string item_where = fmt::format("{}, items[{}]", where, i);
      if (!item_kind.empty() && item.IsObject() && !json::Member(item, "kind")) {
        // kubectl omits kind on items of typed lists; decode with the list's item kind.
        KubeObject obj;
        bool skipped = false;
        std::string k;
        Status s = DecodeKubeObject(item, options, item_kind, &obj, &skipped, &k);
        if (!s.ok()) {
          return s.WithContext(fmt::format("{} ({})", item_where, DescribeObject(item, item_kind)));
        }
        if (skipped) {
          out->notes.push_back(fmt::format("{}: skipped kind {}", item_where, k));
          continue;
        }
        Collect(std::move(obj), out);
        continue;
      }
      if (Status s = AddToSnapshot(item, options, item_where, out); !s.ok()) return s;
    }
    return {};
  }
  KubeObject obj;
  bool skipped = false;
  Status s = DecodeKubeObject(object, options, "", &obj, &skipped, &kind);
  if (!s.ok()) return s.WithContext(fmt::format("{} ({})", where, DescribeObject(object, kind)));
  if (skipped) {
    out->notes.push_back(fmt::format("{}: skipped kind {}", where, kind.empty() ? "(none)" : kind));
    return {};
  }
  Collect(std::move(obj), out);
  return {};
}

Status ParseSnapshot(const std::string& text, const std::string& source,
                     const DecodeOptions& options, Snapshot* out) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  std::vector<rapidjson::Document> docs;
  std::vector<std::size_t> positions;  // each document's number in the file
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    if (d.HasParseError()) {
      return Status::Error(fmt::format("{}: invalid JSON at offset {}: {}", source,
                                       d.GetErrorOffset(),
                                       rapidjson::GetParseError_En(d.GetParseError())));
    }
    if (d.IsArray()) {
      for (rapidjson::SizeType i = 0; i < d.Size(); ++i) {
        Status s = AddToSnapshot(d[i], options, fmt::format("{}: element {}", source, i), out);
        if (!s.ok()) return s;
      }
      return {};
    }
    docs.push_back(std::move(d));
    positions.push_back(1);
  } else if (Status s = ParseYamlDocuments(text, &docs, &positions); !s.ok()) {
    return s.WithContext(source);
  }
  for (std::size_t i = 0; i < docs.size(); ++i) {
    Status s =
        AddToSnapshot(docs[i], options, fmt::format("{}: document {}", source, positions[i]), out);
    if (!s.ok()) return s;
  }
  return {};
}

Status ReadFileToString(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(fmt::format("{}: cannot open", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Status::Error(fmt::format("{}: read error", path));
  *out = buffer.str();
  return {};
}

Status LoadSnapshotFile(const std::string& path, const DecodeOptions& options, Snapshot* out) {
  std::string text;
  if (Status s = ReadFileToString(path, &text); !s.ok()) return s;
  return ParseSnapshot(text, path, options, out);
}

void ApplySnapshot(const Snapshot& snapshot, ClusterState* state) {
  for (const auto& pc : snapshot.priority_classes)
    state->UpsertPriorityClass(pc);
  for (const auto& node : snapshot.nodes)
    state->UpsertNode(node);
  for (const auto& quota : snapshot.quotas)
    state->UpsertQuota(quota);
  for (const auto& pdb : snapshot.pdbs)
    state->UpsertPdb(pdb);
  // The DRA objects before the pods that name them (docs/devices.md).
  for (const auto& device_class : snapshot.device_classes)
    state->UpsertDeviceClass(device_class);
  for (const auto& claim : snapshot.resource_claims)
    state->UpsertResourceClaim(claim);
  for (const auto& tmpl : snapshot.claim_templates)
    state->UpsertResourceClaimTemplate(tmpl);
  for (const auto& pod : snapshot.pods)
    state->UpsertPod(pod);
}

}  // namespace capext
