#include "bench/sim/scenario.h"

#include <charconv>

#include <fmt/format.h>

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

Status ParseEvent(const rapidjson::Value& v, std::size_t index, Scenario* out) {
  const std::string path = fmt::format("events[{}]", index);
  if (!v.IsObject()) return Status::Error(path + ": expected a map");
  ScenarioEvent event;
  if (const rapidjson::Value* create = json::Member(v, "create")) {
    event.kind = ScenarioEvent::Kind::kCreate;
    Status s = DecodePod(*create, DecodeOptions{}, &event.pod);
    if (!s.ok()) return s.WithContext(path + ".create");
    if (event.pod.uid.empty()) event.pod.uid = event.pod.Key();
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
    return Status::Error(path + ": expected one of create, delete, advance");
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
    } else {
      s = Status::Error(kpath + ": unknown expectation (bound, evicted, untouched, pending)");
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
  if (out->name.empty()) out->name = path;
  if (const rapidjson::Value* cluster = json::Member(root, "cluster")) {
    if (!cluster->IsArray()) return Status::Error(path + ": cluster: expected a list of objects");
    for (rapidjson::SizeType i = 0; i < cluster->Size(); ++i) {
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
