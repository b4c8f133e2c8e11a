#include "bench/sim/scenario.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "bench/sim/scheduler_loop.h"
#include "config/device_codec.h"
#include "config/json_fields.h"
#include "config/yaml_json.h"
#include "policies/policies.h"

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
  if (const rapidjson::Value* mappings = json::Member(root, "deviceClassMappings")) {
    Status s = DecodeDeviceClassMappings(*mappings, &out->device_class_mappings);
    if (!s.ok()) return s.WithContext(path);
  }
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

ScenarioReport RunScenario(const Scenario& scenario, std::ostream& out) {
  ScenarioReport report;
  const auto* semantics = QuotaSemanticsPolicies().Find(scenario.quota_semantics);
  const auto* scoring = NodeScoringPolicies().Find(scenario.scoring);
  if (semantics == nullptr || scoring == nullptr) {
    out << fmt::format("FAIL {}: unknown quotaSemantics (expected {}) or scoring (expected {})\n",
                       scenario.name, QuotaSemanticsPolicies().NamesText(),
                       NodeScoringPolicies().NamesText());
    ++report.failed;
    return report;
  }
  ClusterState state(semantics->make());
  state.SetDeviceClassMappings(scenario.device_class_mappings);
  ApplySnapshot(scenario.cluster, &state);

  // The clock starts at the earliest creation time seen and moves with created pods.
  int64_t now = 0;
  for (const auto& pod : scenario.cluster.pods) {
    if (pod.creation_ms != 0 && (now == 0 || pod.creation_ms < now)) now = pod.creation_ms;
  }
  for (const auto& e : scenario.events) {
    if (e.kind == ScenarioEvent::Kind::kCreate && e.pod.creation_ms != 0 &&
        (now == 0 || e.pod.creation_ms < now)) {
      now = e.pod.creation_ms;
    }
  }

  SchedulerLoop loop(&state, scoring->make(), VictimOrderPolicies().default_entry().make(),
                     SchedulerLoopOptions{});
  loop.RunUntilQuiet(now);
  for (std::size_t i = 0; i < scenario.events.size(); ++i) {
    const ScenarioEvent& event = scenario.events[i];
    std::map<std::string, std::string> placement_before;
    for (const auto& [uid, pod] : state.pods())
      placement_before[pod.Key()] = pod.node_name;
    std::string what;
    switch (event.kind) {
      case ScenarioEvent::Kind::kCreate:
        now = std::max(now, event.pod.creation_ms);
        state.UpsertPod(event.pod);
        what = "create " + event.pod.Key();
        break;
      case ScenarioEvent::Kind::kDelete: {
        const auto slash = event.target.find('/');
        if (const Pod* pod = state.FindPodByName(event.target.substr(0, slash),
                                                 event.target.substr(slash + 1))) {
          state.DeletePod(pod->uid.empty() ? pod->Key() : pod->uid);
        }
        what = "delete " + event.target;
        break;
      }
      case ScenarioEvent::Kind::kAdvance:
        now += event.advance_ms;
        what = fmt::format("advance {}ms", event.advance_ms);
        break;
    }
    SchedulerLoop::PassResult pass = loop.RunUntilQuiet(now);
    std::set<std::string> evicted;
    for (const auto& e : pass.evicted)
      evicted.insert(e.victim.Key());

    auto it = scenario.expect.find(static_cast<int>(i));
    if (it == scenario.expect.end()) continue;
    const ScenarioExpectation& expect = it->second;
    std::vector<std::string> problems, checks;
    auto find = [&](const std::string& key) -> const Pod* {
      const auto slash = key.find('/');
      if (slash == std::string::npos) return nullptr;
      return state.FindPodByName(key.substr(0, slash), key.substr(slash + 1));
    };
    for (const auto& [key, node] : expect.bound) {
      const Pod* pod = find(key);
      checks.push_back(fmt::format("{} bound to {}", key, node));
      if (pod == nullptr) {
        problems.push_back(fmt::format("{} does not exist", key));
      } else if (pod->node_name != node) {
        auto reason = loop.pending_reasons().find(key);
        problems.push_back(fmt::format(
            "{} is {}", key,
            pod->node_name.empty()
                ? "pending: " + (reason == loop.pending_reasons().end() ? "" : reason->second)
                : "bound to " + pod->node_name));
      }
    }
    for (const auto& key : expect.evicted) {
      checks.push_back(fmt::format("{} evicted", key));
      if (evicted.count(key) == 0) problems.push_back(fmt::format("{} was not evicted", key));
    }
    for (const auto& key : expect.untouched) {
      checks.push_back(fmt::format("{} untouched", key));
      const Pod* pod = find(key);
      if (evicted.count(key) != 0 || pod == nullptr) {
        problems.push_back(fmt::format("{} was evicted", key));
      } else if (placement_before.count(key) && placement_before[key] != pod->node_name) {
        problems.push_back(
            fmt::format("{} moved from {} to {}", key, placement_before[key], pod->node_name));
      }
    }
    for (const auto& [key, text] : expect.pending) {
      checks.push_back(fmt::format("{} pending ({})", key, text));
      const Pod* pod = find(key);
      auto reason = loop.pending_reasons().find(key);
      if (pod == nullptr) {
        problems.push_back(fmt::format("{} does not exist", key));
      } else if (pod->IsBound()) {
        problems.push_back(fmt::format("{} is bound to {}", key, pod->node_name));
      } else if (reason == loop.pending_reasons().end() ||
                 reason->second.find(text) == std::string::npos) {
        problems.push_back(fmt::format("{} pending reason \"{}\" does not contain \"{}\"", key,
                                       reason == loop.pending_reasons().end() ? "" : reason->second,
                                       text));
      }
    }
    std::string summary;
    for (const auto& c : checks)
      summary += (summary.empty() ? "" : ", ") + c;
    if (problems.empty()) {
      ++report.passed;
      out << fmt::format("PASS {} event {} ({}): {}\n", scenario.name, i, what, summary);
    } else {
      ++report.failed;
      std::string detail;
      for (const auto& p : problems)
        detail += (detail.empty() ? "" : "; ") + p;
      out << fmt::format("FAIL {} event {} ({}): {} -- {}\n", scenario.name, i, what, summary,
                         detail);
    }
  }
  return report;
}

}  // namespace capext
