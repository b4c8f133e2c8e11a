// Scenario files on a real cluster (cluster_scenario.h).
#include "tests/real_cluster/cluster_scenario.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "config/yaml_json.h"

namespace capext::test {
namespace {

using Clock = std::chrono::steady_clock;
// Two reclaim intervals (the extender's default is 1 s).
constexpr std::chrono::milliseconds kSettle{2000};

std::string ToJson(const rapidjson::Value& value) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  value.Accept(writer);
  return std::string(out.GetString(), out.GetSize());
}

const rapidjson::Value* At(const rapidjson::Value& v, std::initializer_list<const char*> path) {
  const rapidjson::Value* at = &v;
  for (const char* key : path) {
    if (!at->IsObject()) return nullptr;
    auto m = at->FindMember(key);
    if (m == at->MemberEnd() || m->value.IsNull()) return nullptr;
    at = &m->value;
  }
  return at;
}

// A scalar as text: strings as they are, numbers and booleans printed.
std::string Text(const rapidjson::Value* v) {
  if (v == nullptr) return "";
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  if (v->IsNumber()) return ToJson(*v);
  return "";
}

std::string KeyOf(const rapidjson::Value& object) {
  std::string ns = Text(At(object, {"metadata", "namespace"}));
  return (ns.empty() ? "default" : ns) + "/" + Text(At(object, {"metadata", "name"}));
}

FakeNode NodeOf(const rapidjson::Value& node) {
  FakeNode fake;
  fake.name = Text(At(node, {"metadata", "name"}));
  const rapidjson::Value* resources = At(node, {"status", "allocatable"});
  if (resources == nullptr) resources = At(node, {"status", "capacity"});
  if (resources != nullptr && resources->IsObject()) {
    for (auto m = resources->MemberBegin(); m != resources->MemberEnd(); ++m) {
      const std::string name = m->name.GetString();
      const std::string value = Text(&m->value);
      if (name == "cpu") {
        fake.cpu = value;
      } else if (name == "memory") {
        fake.memory = value;
      } else if (name == "pods") {
        fake.pods = value;
      } else {
        fake.extended[name] = value;
      }
    }
  }
  if (const rapidjson::Value* labels = At(node, {"metadata", "labels"});
      labels && labels->IsObject()) {
    for (auto m = labels->MemberBegin(); m != labels->MemberEnd(); ++m)
      fake.labels[m->name.GetString()] = Text(&m->value);
  }
  if (const rapidjson::Value* taints = At(node, {"spec", "taints"}); taints && taints->IsArray()) {
    fake.taints_json = ToJson(*taints);
  }
  return fake;
}

// The pod as it is POSTed: no uid, creationTimestamp or resourceVersion, and a zero grace
// period unless the file sets one (cluster_scenario.h says why).
std::string PodToCreate(const rapidjson::Value& pod) {
  rapidjson::Document copy;
  copy.CopyFrom(pod, copy.GetAllocator());
  if (auto m = copy.FindMember("metadata"); m != copy.MemberEnd() && m->value.IsObject()) {
    for (const char* field : {"uid", "creationTimestamp", "resourceVersion"})
      m->value.RemoveMember(field);
  }
  auto spec = copy.FindMember("spec");
  if (spec != copy.MemberEnd() && spec->value.IsObject() &&
      !spec->value.HasMember("terminationGracePeriodSeconds")) {
    spec->value.AddMember("terminationGracePeriodSeconds", 0, copy.GetAllocator());
  }
  return ToJson(copy);
}

Status ReadKeys(const rapidjson::Value& v, const std::string& where,
                std::vector<std::string>* out) {
  if (!v.IsArray()) return Status::Invalid(where + ": expected a list of namespace/name");
  for (const auto& item : v.GetArray())
    out->push_back(Text(&item));
  return {};
}

Status ReadKeyMap(const rapidjson::Value& v, const std::string& where,
                  std::map<std::string, std::string>* out) {
  if (!v.IsObject()) return Status::Invalid(where + ": expected a map of namespace/name to text");
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m)
    (*out)[m->name.GetString()] = Text(&m->value);
  return {};
}

Status ParseDuration(const std::string& text, std::chrono::milliseconds* out) {
  int64_t total = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), value);
    if (ec != std::errc()) return Status::Invalid("not a duration: " + text);
    pos = static_cast<std::size_t>(end - text.data());
    std::size_t unit_end = pos;
    while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end])))
      ++unit_end;
    const std::string unit = text.substr(pos, unit_end - pos);
    const int64_t factor = unit == "ms"  ? 1
                           : unit == "s" ? 1000
                           : unit == "m" ? 60'000
                           : unit == "h" ? 3'600'000
                                         : 0;
    if (factor == 0) return Status::Invalid("not a duration: " + text);
    total += value * factor;
    pos = unit_end;
  }
  *out = std::chrono::milliseconds(total);
  return {};
}

struct LivePod {
  std::string uid, node, phase;
  bool unschedulable = false;  // PodScheduled=False: kube-scheduler has tried it
};

std::map<std::string, LivePod> ListPods(RealControlPlane* cluster) {
  std::map<std::string, LivePod> pods;
  const kube::RestResponse list = cluster->api().Get("/api/v1/pods");
  rapidjson::Document doc;
  if (!list.ok() || doc.Parse(list.body.c_str()).HasParseError()) return pods;
  const rapidjson::Value* items = At(doc, {"items"});
  if (items == nullptr || !items->IsArray()) return pods;
  for (const auto& item : items->GetArray()) {
    LivePod pod;
    pod.uid = Text(At(item, {"metadata", "uid"}));
    pod.node = Text(At(item, {"spec", "nodeName"}));
    pod.phase = Text(At(item, {"status", "phase"}));
    if (const rapidjson::Value* conditions = At(item, {"status", "conditions"});
        conditions && conditions->IsArray()) {
      for (const auto& c : conditions->GetArray()) {
        if (Text(At(c, {"type"})) == "PodScheduled" && Text(At(c, {"status"})) == "False")
          pod.unschedulable = true;
      }
    }
    pods[KeyOf(item)] = pod;
  }
  return pods;
}

// The messages of the Events about pod `key` (core/v1 shows events.k8s.io's too).
std::vector<std::string> EventMessages(RealControlPlane* cluster, const std::string& key) {
  const auto slash = key.find('/');
  const kube::RestResponse list =
      cluster->api().Get("/api/v1/namespaces/" + key.substr(0, slash) +
                         "/events?fieldSelector=involvedObject.name%3D" + key.substr(slash + 1));
  std::vector<std::string> messages;
  rapidjson::Document doc;
  if (!list.ok() || doc.Parse(list.body.c_str()).HasParseError()) return messages;
  if (const rapidjson::Value* items = At(doc, {"items"}); items && items->IsArray()) {
    for (const auto& item : items->GetArray())
      messages.push_back(Text(At(item, {"reason"})) + ": " + Text(At(item, {"message"})));
  }
  return messages;
}

// Marks every bound pod that is not Running yet as Running, as a kubelet would.
void RunBoundPods(RealControlPlane* cluster, std::map<std::string, LivePod>* pods) {
  for (auto& [key, pod] : *pods) {
    if (pod.node.empty() || pod.phase == "Running") continue;
    const auto slash = key.find('/');
    if (cluster->MarkPodRunning(key.substr(0, slash), key.substr(slash + 1)).ok())
      pod.phase = "Running";
  }
}

// The problems with `expect` in the cluster as it is now (empty: it holds). `before` is the
// cluster before the event, for evicted and untouched.
std::vector<std::string> Problems(const ClusterScenario::Expectation& expect,
                                  const std::map<std::string, LivePod>& before,
                                  const std::map<std::string, LivePod>& now,
                                  RealControlPlane* cluster) {
  std::vector<std::string> problems;
  for (const auto& [key, node] : expect.bound) {
    auto it = now.find(key);
    if (it == now.end()) {
      problems.push_back(key + " does not exist");
    } else if (it->second.node != node) {
      problems.push_back(
          key + (it->second.node.empty() ? " is pending" : " is bound to " + it->second.node));
    }
  }
  for (const auto& key : expect.evicted) {
    auto was = before.find(key);
    auto is = now.find(key);
    if (was == before.end()) {
      problems.push_back(key + " did not exist before the event");
    } else if (is != now.end() && is->second.uid == was->second.uid) {
      problems.push_back(key + " was not evicted");
    }
  }
  for (const auto& key : expect.untouched) {
    auto was = before.find(key);
    auto is = now.find(key);
    if (is == now.end() || (was != before.end() && is->second.uid != was->second.uid)) {
      problems.push_back(key + " was evicted");
    } else if (was != before.end() && was->second.node != is->second.node) {
      problems.push_back(key + " moved from " + was->second.node + " to " + is->second.node);
    }
  }
  for (const auto& [key, text] : expect.pending) {
    auto it = now.find(key);
    if (it == now.end()) {
      problems.push_back(key + " does not exist");
      continue;
    }
    if (!it->second.node.empty()) {
      problems.push_back(key + " is bound to " + it->second.node);
      continue;
    }
    bool found = false;
    std::string seen;
    for (const std::string& message : EventMessages(cluster, key)) {
      found = found || message.find(text) != std::string::npos;
      seen += (seen.empty() ? "" : " | ") + message;
    }
    if (!found)
      problems.push_back(key + " has no Event containing \"" + text + "\" (" + seen + ")");
  }
  return problems;
}

std::string Checks(const ClusterScenario::Expectation& expect) {
  std::vector<std::string> checks;
  for (const auto& [key, node] : expect.bound)
    checks.push_back(key + " bound to " + node);
  for (const auto& key : expect.evicted)
    checks.push_back(key + " evicted");
  for (const auto& key : expect.untouched)
    checks.push_back(key + " untouched");
  for (const auto& [key, text] : expect.pending)
    checks.push_back(key + " pending (" + text + ")");
  std::string joined;
  for (const auto& c : checks)
    joined += (joined.empty() ? "" : ", ") + c;
  return joined;
}

}  // namespace

Status LoadClusterScenario(const std::string& path, ClusterScenario* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<rapidjson::Document> docs;
  if (Status s = ParseYamlDocuments(text.str(), &docs); !s.ok()) return s.WithContext(path);
  if (docs.size() != 1 || !docs[0].IsObject()) return Status::Invalid(path + ": one map expected");
  const rapidjson::Value& root = docs[0];
  out->name = Text(At(root, {"name"}));
  if (const rapidjson::Value* v = At(root, {"quotaSemantics"})) out->quota_semantics = Text(v);
  if (const rapidjson::Value* v = At(root, {"scoring"})) out->scoring = Text(v);

  std::set<std::string> namespaces;
  if (const rapidjson::Value* cluster = At(root, {"cluster"}); cluster && cluster->IsArray()) {
    for (const auto& object : cluster->GetArray()) {
      const std::string kind = Text(At(object, {"kind"}));
      const std::string ns = Text(At(object, {"metadata", "namespace"}));
      if (!ns.empty()) namespaces.insert(ns);
      if (kind == "Node") {
        out->nodes.push_back(NodeOf(object));
      } else if (kind == "Pod") {
        out->bound_pods_json.push_back(PodToCreate(object));
      } else {
        out->objects_json.push_back(ToJson(object));
      }
    }
  }
  const rapidjson::Value* events = At(root, {"events"});
  if (events != nullptr && events->IsArray()) {
    for (const auto& e : events->GetArray()) {
      ClusterScenario::Event event;
      if (const rapidjson::Value* pod = At(e, {"create"})) {
        event.kind = ClusterScenario::Event::Kind::kCreate;
        event.pod_json = PodToCreate(*pod);
        event.key = KeyOf(*pod);
        namespaces.insert(event.key.substr(0, event.key.find('/')));
      } else if (const rapidjson::Value* target = At(e, {"delete"})) {
        event.kind = ClusterScenario::Event::Kind::kDelete;
        event.key = Text(target);
      } else if (const rapidjson::Value* advance = At(e, {"advance"})) {
        event.kind = ClusterScenario::Event::Kind::kAdvance;
        if (Status s = ParseDuration(Text(advance), &event.advance); !s.ok()) return s;
        if (event.advance > std::chrono::seconds(30)) {
          return Status::Invalid(path + ": advance " + Text(advance) +
                                 ": a real cluster's clock cannot jump; at most 30s is slept");
        }
      } else {
        return Status::Invalid(path + ": an event is not create, delete or advance");
      }
      out->events.push_back(std::move(event));
    }
  }
  if (const rapidjson::Value* expect = At(root, {"expect"}); expect && expect->IsObject()) {
    for (auto m = expect->MemberBegin(); m != expect->MemberEnd(); ++m) {
      const std::string index_text = m->name.GetString();
      int index = -1;
      std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
      if (index < 0 || index >= static_cast<int>(out->events.size())) {
        return Status::Invalid(path + ": expect." + index_text + ": not an event index");
      }
      ClusterScenario::Expectation& e = out->expect[index];
      const std::string where = path + ": expect." + index_text;
      for (auto c = m->value.MemberBegin(); m->value.IsObject() && c != m->value.MemberEnd(); ++c) {
        const std::string check = c->name.GetString();
        Status s;
        if (check == "bound") {
          s = ReadKeyMap(c->value, where + ".bound", &e.bound);
        } else if (check == "pending") {
          s = ReadKeyMap(c->value, where + ".pending", &e.pending);
        } else if (check == "evicted") {
          s = ReadKeys(c->value, where + ".evicted", &e.evicted);
        } else if (check == "untouched") {
          s = ReadKeys(c->value, where + ".untouched", &e.untouched);
        } else {
          s = Status::Invalid(where + "." + check + ": unknown expectation");
        }
        if (!s.ok()) return s;
      }
    }
  }
  out->namespaces.assign(namespaces.begin(), namespaces.end());
  return {};
}

Status CreateScenarioCluster(const ClusterScenario& scenario, RealControlPlane* cluster) {
  for (const std::string& ns : scenario.namespaces) {
    if (Status s = cluster->CreateNamespace(ns); !s.ok()) return s;
  }
  if (Status s = cluster->CreateFakeNodes(scenario.nodes); !s.ok()) return s;
  std::string objects;
  for (const std::string& object : scenario.objects_json)
    objects += "---\n" + object + "\n";
  if (!objects.empty()) {
    if (Status s = cluster->Apply(objects); !s.ok()) return s;
  }
  for (const std::string& pod : scenario.bound_pods_json) {
    rapidjson::Document doc;
    doc.Parse(pod.c_str());
    const std::string key = KeyOf(doc);
    const std::string ns = key.substr(0, key.find('/'));
    const kube::RestResponse created =
        cluster->api().Post("/api/v1/namespaces/" + ns + "/pods", pod);
    if (!created.ok()) return Status::Unavailable("create pod " + key + ": " + created.body);
    if (Status s = cluster->MarkPodRunning(ns, key.substr(key.find('/') + 1)); !s.ok()) return s;
  }
  return {};
}

std::vector<ScenarioResult> PlayScenarioEvents(const ClusterScenario& scenario,
                                               RealControlPlane* cluster,
                                               std::chrono::milliseconds timeout) {
  std::vector<ScenarioResult> results;
  for (std::size_t i = 0; i < scenario.events.size(); ++i) {
    const ClusterScenario::Event& event = scenario.events[i];
    std::map<std::string, LivePod> before = ListPods(cluster);
    std::string what;
    std::string failed_to_apply;
    const auto slash = event.key.find('/');
    switch (event.kind) {
      case ClusterScenario::Event::Kind::kCreate: {
        what = "create " + event.key;
        const kube::RestResponse created = cluster->api().Post(
            "/api/v1/namespaces/" + event.key.substr(0, slash) + "/pods", event.pod_json);
        if (!created.ok()) failed_to_apply = "create failed: " + created.body + created.error;
        break;
      }
      case ClusterScenario::Event::Kind::kDelete: {
        what = "delete " + event.key;
        (void)cluster->api().Delete("/api/v1/namespaces/" + event.key.substr(0, slash) + "/pods/" +
                                    event.key.substr(slash + 1) + "?gracePeriodSeconds=0");
        break;
      }
      case ClusterScenario::Event::Kind::kAdvance:
        what = "advance " + std::to_string(event.advance.count()) + "ms";
        std::this_thread::sleep_for(event.advance);
        break;
    }

    auto expect = scenario.expect.find(static_cast<int>(i));
    const auto deadline = Clock::now() + timeout;
    std::vector<std::string> problems;
    for (;;) {
      std::map<std::string, LivePod> now = ListPods(cluster);
      RunBoundPods(cluster, &now);
      if (expect == scenario.expect.end()) {
        // No expectation: wait until kube-scheduler has looked at the created pod.
        auto it = now.find(event.key);
        const bool seen = event.kind != ClusterScenario::Event::Kind::kCreate || it == now.end() ||
                          !it->second.node.empty() || it->second.unschedulable;
        if (seen || Clock::now() >= deadline) break;
      } else {
        problems = Problems(expect->second, before, now, cluster);
        if (problems.empty() || Clock::now() >= deadline) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    // Evictions come from loops that run every second or so: a wrong one may follow the right
    // one. Look again a little later before calling evicted/untouched settled.
    if (problems.empty() && expect != scenario.expect.end() &&
        (!expect->second.evicted.empty() || !expect->second.untouched.empty())) {
      std::this_thread::sleep_for(kSettle);
      std::map<std::string, LivePod> now = ListPods(cluster);
      problems = Problems(expect->second, before, now, cluster);
    }
    if (!failed_to_apply.empty()) problems.insert(problems.begin(), failed_to_apply);
    if (expect == scenario.expect.end() && failed_to_apply.empty()) continue;

    ScenarioResult result;
    result.passed = problems.empty();
    const std::string head = scenario.name + " event " + std::to_string(i) + " (" + what + "): " +
                             (expect == scenario.expect.end() ? "" : Checks(expect->second));
    if (result.passed) {
      result.line = "PASS " + head;
    } else {
      std::string detail;
      for (const auto& p : problems)
        detail += (detail.empty() ? "" : "; ") + p;
      result.line = "FAIL " + head + " -- " + detail;
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace capext::test
