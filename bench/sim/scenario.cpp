#include "bench/sim/scenario.h"

#include <charconv>

#include <fmt/format.h>

#include "config/device_codec.h"
#include "config/json_fields.h"
#include "config/yaml_json.h"

namespace capext {
namespace {

Status ReadKeyList(const rapidjson::Value& v, const std::string& path,
                   std::vector<std::string>* out) {
  if (!v.IsArray()) return Status::Error(path + ": expected a list of namespace/name");
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsString()) return Status::Error(fmt::format("{}[{}]: expected a string", path, i));
    out->emplace_back(v[i].GetString());
  }
  return {};
}

Status ReadKeyMap(const rapidjson::Value& v, const std::string& path,
                  std::map<std::string, std::string>* out) {
  if (!v.IsObject()) return Status::Error(path + ": expected a map of namespace/name to text");
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    if (!m->value.IsString()) {
      return Status::Error(fmt::format("{}.{}: expected a string", path, m->name.GetString()));
    }
    (*out)[m->name.GetString()] = m->value.GetString();
  }
  return {};
}

// The label that names a pod's group (docs/workloads.md).
constexpr const char* kPodGroupLabel = "scheduling.x-k8s.io/pod-group";

bool IsPodGroup(const rapidjson::Value& v) {
  const rapidjson::Value* kind = json::Member(v, "kind");
  const rapidjson::Value* api = json::Member(v, "apiVersion");
  return kind != nullptr && kind->IsString() && std::string(kind->GetString()) == "PodGroup" &&
         api != nullptr && api->IsString() &&
         std::string(api->GetString()).starts_with("scheduling.x-k8s.io/");
}

Status ParsePodGroup(const rapidjson::Value& v, const std::string& path, ScenarioPodGroup* out) {
  const rapidjson::Value* meta = json::Member(v, "metadata");
  if (meta == nullptr || !meta->IsObject())
    return Status::Error(path + ".metadata: expected a map");
  if (Status s = json::ReadString(*meta, "name", path + ".metadata.name", &out->name); !s.ok())
    return s;
  if (Status s = json::ReadString(*meta, "namespace", path + ".metadata.namespace", &out->ns);
      !s.ok())
    return s;
  if (out->name.empty() || out->ns.empty()) {
    return Status::Error(path + ".metadata: a PodGroup needs a name and a namespace");
  }
  const rapidjson::Value* spec = json::Member(v, "spec");
  const rapidjson::Value* min = spec != nullptr ? json::Member(*spec, "minMember") : nullptr;
  if (min == nullptr || !min->IsInt() || min->GetInt() < 0) {
    return Status::Error(path + ".spec.minMember: expected a count >= 0");
  }
  out->min_member = min->GetInt();
  if (const rapidjson::Value* t = json::Member(*spec, "scheduleTimeoutSeconds")) {
    if (!t->IsInt() || t->GetInt() < 0) {
      return Status::Error(path + ".spec.scheduleTimeoutSeconds: expected seconds >= 0");
    }
    out->schedule_timeout_ms = int64_t{t->GetInt()} * 1000;
  }
  return {};
}

// createGroup: {podGroup: ns/name, replicas: N, template: a Pod without a name} -> the pods
// <name>-0 .. <name>-(N-1) of namespace ns, each labelled with the group.
Status ParseCreateGroup(const rapidjson::Value& v, const std::string& path, ScenarioEvent* event) {
  if (!v.IsObject())
    return Status::Error(path + ": expected a map with podGroup, replicas, template");
  std::string group;
  if (const rapidjson::Value* g = json::Member(v, "podGroup"); g != nullptr && g->IsString()) {
    group = g->GetString();
  }
  const std::size_t slash = group.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == group.size() ||
      group.find('/', slash + 1) != std::string::npos) {
    return Status::Error(path + ".podGroup: expected namespace/name");
  }
  const std::string ns = group.substr(0, slash), name = group.substr(slash + 1);
  const rapidjson::Value* replicas = json::Member(v, "replicas");
  if (replicas == nullptr || !replicas->IsInt() || replicas->GetInt() < 1 ||
      replicas->GetInt() > 10'000) {
    return Status::Error(path + ".replicas: expected a count from 1 to 10000");
  }
  const rapidjson::Value* tmpl = json::Member(v, "template");
  if (tmpl == nullptr || !tmpl->IsObject()) {
    return Status::Error(path + ".template: expected a Pod (without a name)");
  }
  if (const rapidjson::Value* meta = json::Member(*tmpl, "metadata");
      meta != nullptr && meta->IsObject()) {
    if (json::Member(*meta, "name") != nullptr) {
      return Status::Error(path + ".template.metadata.name: the pods are named <group>-<index>");
    }
    if (const rapidjson::Value* tns = json::Member(*meta, "namespace");
        tns != nullptr && (!tns->IsString() || ns != tns->GetString())) {
      return Status::Error(path + ".template.metadata.namespace: must be the group's namespace");
    }
  }
  event->kind = ScenarioEvent::Kind::kCreateGroup;
  event->target = group;
  for (int i = 0; i < replicas->GetInt(); ++i) {
    rapidjson::Document doc;
    auto& a = doc.GetAllocator();
    doc.CopyFrom(*tmpl, a);
    if (!doc.HasMember("metadata")) doc.AddMember("metadata", rapidjson::kObjectType, a);
    rapidjson::Value& meta = doc["metadata"];
    if (!meta.IsObject()) return Status::Error(path + ".template.metadata: expected a map");
    const std::string pod_name = fmt::format("{}-{}", name, i);
    meta.RemoveMember("name");
    meta.AddMember("name", rapidjson::Value(pod_name.c_str(), a), a);
    meta.RemoveMember("namespace");
    meta.AddMember("namespace", rapidjson::Value(ns.c_str(), a), a);
    if (!meta.HasMember("labels")) meta.AddMember("labels", rapidjson::kObjectType, a);
    if (!meta["labels"].IsObject()) {
      return Status::Error(path + ".template.metadata.labels: expected a map");
    }
    meta["labels"].RemoveMember(kPodGroupLabel);
    meta["labels"].AddMember(rapidjson::StringRef(kPodGroupLabel),
                             rapidjson::Value(name.c_str(), a), a);
    Pod pod;
    Status s = DecodePod(doc, DecodeOptions{}, &pod);
    if (!s.ok()) return s.WithContext(path + ".template");
    if (pod.uid.empty()) pod.uid = pod.Key();
    event->pods.push_back(std::move(pod));
  }
  return {};
}

Status ParseEvent(const rapidjson::Value& v, std::size_t index, Scenario* out) {
  const std::string path = fmt::format("events[{}]", index);
  if (!v.IsObject()) return Status::Error(path + ": expected a map");
  ScenarioEvent event;
  if (const rapidjson::Value* create = json::Member(v, "create"); create && IsPodGroup(*create)) {
    event.kind = ScenarioEvent::Kind::kCreatePodGroup;
    if (Status s = ParsePodGroup(*create, path + ".create", &event.pod_group); !s.ok()) return s;
  } else if (create != nullptr) {
    event.kind = ScenarioEvent::Kind::kCreate;
    Pod pod;
    Status s = DecodePod(*create, DecodeOptions{}, &pod);
    if (!s.ok()) return s.WithContext(path + ".create");
    if (pod.uid.empty()) pod.uid = pod.Key();
    event.pods.push_back(std::move(pod));
  } else if (const rapidjson::Value* group = json::Member(v, "createGroup")) {
    if (Status s = ParseCreateGroup(*group, path + ".createGroup", &event); !s.ok()) return s;
  } else if (const rapidjson::Value* del = json::Member(v, "delete")) {
    if (!del->IsString()) return Status::Error(path + ".delete: expected namespace/name");
    event.kind = ScenarioEvent::Kind::kDelete;
    event.target = del->GetString();
  } else if (const rapidjson::Value* advance = json::Member(v, "advance")) {
    event.kind = ScenarioEvent::Kind::kAdvance;
    if (!advance->IsString() || !ParseDurationMs(advance->GetString(), &event.advance_ms)) {
      return Status::Error(path + ".advance: expected a duration such as 30s");
    }
  } else {
    return Status::Error(path + ": expected one of create, createGroup, delete, advance");
  }
  out->events.push_back(std::move(event));
  return {};
}

Status ParseExpectation(const rapidjson::Value& v, const std::string& path,
                        ScenarioExpectation* e) {
  if (!v.IsObject()) return Status::Error(path + ": expected a map");
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    const std::string key = m->name.GetString();
    const std::string kpath = path + "." + key;
    Status s;
    if (key == "bound") {
      s = ReadKeyMap(m->value, kpath, &e->bound);
    } else if (key == "pending") {
      s = ReadKeyMap(m->value, kpath, &e->pending);
    } else if (key == "evicted") {
      s = ReadKeyList(m->value, kpath, &e->evicted);
    } else if (key == "untouched") {
      s = ReadKeyList(m->value, kpath, &e->untouched);
    } else if (key == "gated") {
      s = ReadKeyMap(m->value, kpath, &e->gated);
    } else {
      s = Status::Error(kpath +
                        ": unknown expectation (bound, evicted, untouched, pending, gated)");
    }
    if (!s.ok()) return s;
  }
  return {};
}

}  // namespace

bool ParseDurationMs(const std::string& text, int64_t* out_ms) {
  if (text.empty()) return false;
  int64_t total = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    int64_t value = 0;
    auto [p, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), value);
    if (ec != std::errc() || value < 0) return false;
    pos = static_cast<std::size_t>(p - text.data());
    std::size_t unit_end = pos;
    while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end])))
      ++unit_end;
    const std::string unit = text.substr(pos, unit_end - pos);
    int64_t factor = 0;
    if (unit == "ms")
      factor = 1;
    else if (unit == "s")
      factor = 1000;
    else if (unit == "m")
      factor = 60'000;
    else if (unit == "h")
      factor = 3'600'000;
    else
      return false;
    total += value * factor;
    pos = unit_end;
  }
  *out_ms = total;
  return true;
}

Status LoadScenarioFile(const std::string& path, Scenario* out) {
  std::string text;
  if (Status s = ReadFileToString(path, &text); !s.ok()) return s;
  return ParseScenarioText(text, path, out);
}

Status ParseScenarioText(const std::string& text, const std::string& path, Scenario* out) {
  std::vector<rapidjson::Document> docs;
  if (Status s = ParseYamlDocuments(text, &docs); !s.ok()) return s.WithContext(path);
  if (docs.size() != 1 || !docs[0].IsObject()) {
    return Status::Error(path + ": expected one YAML document with name, cluster, events, expect");
  }
  const rapidjson::Value& root = docs[0];
  (void)json::ReadString(root, "name", "name", &out->name);
  (void)json::ReadString(root, "description", "description", &out->description);
  (void)json::ReadString(root, "quotaSemantics", "quotaSemantics", &out->quota_semantics);
  out->quota_semantics_from_file = json::Member(root, "quotaSemantics") != nullptr;
  (void)json::ReadString(root, "scoring", "scoring", &out->scoring);
  (void)json::ReadString(root, "victimOrder", "victimOrder", &out->victim_order);
  if (const rapidjson::Value* admission = json::Member(root, "admission")) {
    const std::string mode = admission->IsString() ? admission->GetString() : "";
    if (mode != "gate" && mode != "filter") {
      return Status::Error(path + ": admission: expected gate or filter");
    }
    out->admission = mode == "gate" ? ScenarioAdmission::kGate : ScenarioAdmission::kFilter;
  }
  if (const rapidjson::Value* recreate = json::Member(root, "recreateEvicted")) {
    if (!recreate->IsBool())
      return Status::Error(path + ": recreateEvicted: expected true or false");
    out->recreate_evicted = recreate->GetBool();
  }
  if (out->name.empty()) out->name = path;
  if (const rapidjson::Value* mappings = json::Member(root, "deviceClassMappings")) {
    Status s = DecodeDeviceClassMappings(*mappings, &out->device_class_mappings);
    if (!s.ok()) return s.WithContext(path);
  }
  if (const rapidjson::Value* cluster = json::Member(root, "cluster")) {
    if (!cluster->IsArray()) return Status::Error(path + ": cluster: expected a list of objects");
    for (rapidjson::SizeType i = 0; i < cluster->Size(); ++i) {
      if (IsPodGroup((*cluster)[i])) {
        ScenarioPodGroup group;
        Status st = ParsePodGroup((*cluster)[i], fmt::format("cluster[{}]", i), &group);
        if (!st.ok()) return st.WithContext(path);
        out->pod_groups.push_back(std::move(group));
        continue;
      }
      Status st = AddToSnapshot((*cluster)[i], DecodeOptions{},
                                fmt::format("{}: cluster[{}]", path, i), &out->cluster);
      if (!st.ok()) return st;
    }
  }
  if (const rapidjson::Value* events = json::Member(root, "events")) {
    if (!events->IsArray()) return Status::Error(path + ": events: expected a list");
    for (rapidjson::SizeType i = 0; i < events->Size(); ++i) {
      if (Status s = ParseEvent((*events)[i], i, out); !s.ok()) return s.WithContext(path);
    }
  }
  if (const rapidjson::Value* expect = json::Member(root, "expect")) {
    if (!expect->IsObject()) return Status::Error(path + ": expect: expected a map");
    for (auto m = expect->MemberBegin(); m != expect->MemberEnd(); ++m) {
      int index = -1;
      std::string key = m->name.GetString();
      auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), index);
      if (ec != std::errc() || p != key.data() + key.size() || index < 0 ||
          index >= static_cast<int>(out->events.size())) {
        return Status::Error(fmt::format("{}: expect.{}: not an event index", path, key));
      }
      Status s = ParseExpectation(m->value, "expect." + key, &out->expect[index]);
      if (!s.ok()) return s.WithContext(path);
    }
  }
  return {};
}

}  // namespace capext
