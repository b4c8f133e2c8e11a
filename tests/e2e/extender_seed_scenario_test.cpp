// End to end: the bundled example, seed-002 (tests/scenarios/borrow-and-reclaim.yaml), driven
// over HTTP against the real `capacity-extender serve` binary, the way kube-scheduler drives an
// extender: /filter with the nodes its own filters pass, /prioritize when more than one node is
// left, /bind to the best one; the reclaim controller (embedded evictor) must take eq2's
// guarantee back from the borrower eq1 (job-b), never the NoteBook pods.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"
#include "tests/support/test_paths.h"

namespace extender_seed_scenario_test {
namespace {

using capext::test::ClientResponse;
using capext::test::ExtenderProcess;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

const std::string kScenario = capext::test::SourcePath("tests/scenarios/borrow-and-reclaim.yaml");

// ---- YAML -> JSON (quoted scalars stay strings; plain ones become numbers/booleans/null) ----

bool LooksInteger(const std::string& s) {
  if (s.empty()) return false;
  std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

void WriteYamlAsJson(const YAML::Node& node, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      w.StartObject();
      for (const auto& kv : node) {
        const std::string key = kv.first.as<std::string>();
        w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
        WriteYamlAsJson(kv.second, w);
      }
      w.EndObject();
      return;
    case YAML::NodeType::Sequence:
      w.StartArray();
      for (const auto& item : node)
        WriteYamlAsJson(item, w);
      w.EndArray();
      return;
    case YAML::NodeType::Scalar: {
      const std::string text = node.Scalar();
      if (node.Tag() == "?") {
        if (LooksInteger(text)) {
          w.Int64(std::stoll(text));
          return;
        }
        if (text == "true" || text == "false") {
          w.Bool(text == "true");
          return;
        }
        if (text == "null" || text == "~") {
          w.Null();
          return;
        }
      }
      w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
      return;
    }
    default:
      w.Null();
      return;
  }
}

std::string YamlToJson(const YAML::Node& node) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  WriteYamlAsJson(node, w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string Str(const rapidjson::Value& v) {
  return v.IsString() ? std::string(v.GetString(), v.GetStringLength()) : std::string();
}

const rapidjson::Value* Get(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

// ---- the scenario ----

struct ScenarioPod {
  std::string ns, name, uid;
  std::string json;  // as kube-scheduler sends it
  std::map<std::string, std::string> node_selector;
  std::string Key() const { return ns + "/" + name; }
};

struct Scenario {
  YAML::Node root;
  std::vector<std::string> schedulable_nodes;  // untainted, in order
  std::map<std::string, std::map<std::string, std::string>> node_labels;
  std::map<std::string, std::pair<int64_t, std::string>> priority_classes;  // value, policy
  std::vector<ScenarioPod> pods;  // one per create event, in event order

  // Only the scenario's `cluster:` objects, as a JSON List (a valid snapshot file).
  std::string SnapshotJson() const {
    std::string out = R"({"apiVersion":"v1","kind":"List","items":[)";
    bool first = true;
    for (const auto& object : root["cluster"]) {
      if (!first) out += ",";
      first = false;
      out += YamlToJson(object);
    }
    return out + "]}";
  }

  // The nodes kube-scheduler's own filters would pass on taints and the nodeSelector (room is
  // left to the extender's node fit, as the brief allows).
  std::vector<std::string> CandidateNodes(const ScenarioPod& pod) const {
    std::vector<std::string> out;
    for (const auto& node : schedulable_nodes) {
      bool match = true;
      for (const auto& [k, v] : pod.node_selector) {
        auto labels = node_labels.find(node);
        if (labels == node_labels.end() || labels->second.count(k) == 0 ||
            labels->second.at(k) != v) {
          match = false;
        }
      }
      if (match) out.push_back(node);
    }
    return out;
  }

  const ScenarioPod& Pod(const std::string& key) const {
    for (const auto& p : pods)
      if (p.Key() == key) return p;
    FAIL("no pod " << key << " in the scenario");
    return pods.front();
  }
};

Scenario LoadScenario() {
  Scenario s;
  s.root = YAML::LoadFile(kScenario);
  for (const auto& object : s.root["cluster"]) {
    const std::string kind = object["kind"].as<std::string>();
    const std::string name = object["metadata"]["name"].as<std::string>();
    if (kind == "Node") {
      if (object["metadata"]["labels"]) {
        for (const auto& kv : object["metadata"]["labels"])
          s.node_labels[name][kv.first.as<std::string>()] = kv.second.as<std::string>();
      }
      const bool tainted =
          object["spec"] && object["spec"]["taints"] && object["spec"]["taints"].size() > 0;
      if (!tainted) s.schedulable_nodes.push_back(name);
    } else if (kind == "PriorityClass") {
      s.priority_classes[name] = {object["value"].as<int64_t>(),
                                  object["preemptionPolicy"]
                                      ? object["preemptionPolicy"].as<std::string>()
                                      : std::string("PreemptLowerPriority")};
    }
  }
  for (const auto& event : s.root["events"]) {
    if (!event["create"]) continue;
    YAML::Node pod = YAML::Clone(event["create"]);
    ScenarioPod p;
    p.ns = pod["metadata"]["namespace"].as<std::string>();
    p.name = pod["metadata"]["name"].as<std::string>();
    p.uid = pod["metadata"]["uid"].as<std::string>();
    if (pod["spec"]["nodeSelector"]) {
      for (const auto& kv : pod["spec"]["nodeSelector"])
        p.node_selector[kv.first.as<std::string>()] = kv.second.as<std::string>();
    }
    // As kube-scheduler sends it: no kind/apiVersion; admission has resolved the priority and
    // preemption policy from priorityClassName; defaults filled in; status Pending.
    pod.remove("kind");
    pod.remove("apiVersion");
    int64_t priority = 0;
    std::string policy = "PreemptLowerPriority";
    if (pod["spec"]["priorityClassName"]) {
      const auto pc = s.priority_classes.find(pod["spec"]["priorityClassName"].as<std::string>());
      REQUIRE(pc != s.priority_classes.end());
      priority = pc->second.first;
      policy = pc->second.second;
    }
    rapidjson::Document doc;
    doc.Parse(YamlToJson(pod).c_str());
    REQUIRE_FALSE(doc.HasParseError());
    auto& a = doc.GetAllocator();
    rapidjson::Value& spec = doc["spec"];
    spec.AddMember("priority", rapidjson::Value(priority), a);
    spec.AddMember("preemptionPolicy", rapidjson::Value(policy.c_str(), a), a);
    spec.AddMember("schedulerName", "default-scheduler", a);
    spec.AddMember("restartPolicy", "Always", a);
    rapidjson::Value tolerations(rapidjson::kArrayType);
    for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
      rapidjson::Value t(rapidjson::kObjectType);
      t.AddMember("key", rapidjson::StringRef(key), a);
      t.AddMember("operator", "Exists", a);
      t.AddMember("effect", "NoExecute", a);
      t.AddMember("tolerationSeconds", 300, a);
      tolerations.PushBack(t, a);
    }
    spec.AddMember("tolerations", tolerations, a);
    rapidjson::Value status(rapidjson::kObjectType);
    status.AddMember("phase", "Pending", a);
    status.AddMember("qosClass", "Guaranteed", a);
    doc.AddMember("status", status, a);
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    doc.Accept(w);
    p.json.assign(buffer.GetString(), buffer.GetSize());
    s.pods.push_back(std::move(p));
  }
  return s;
}

// ---- HTTP as kube-scheduler speaks it ----

class Extender {
 public:
  Extender(const Scenario& scenario, const std::vector<std::string>& extra_args) {
    const std::string snapshot =
        process_.dir().Write("seed-002-cluster.json", scenario.SnapshotJson());
    std::vector<std::string> args = {"--snapshot", snapshot, "--reclaim-interval", "100ms"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    started_ = process_.Start(args);
  }
  bool started() const { return started_; }
  ExtenderProcess& process() { return process_; }

  ClientResponse Post(const std::string& path, const std::string& body) {
    return capext::test::Fetch("127.0.0.1", process_.port(), "POST", path, body);
  }
  ClientResponse Get(const std::string& path) {
    return capext::test::Fetch("127.0.0.1", process_.port(), "GET", path);
  }

 private:
  ExtenderProcess process_;
  bool started_ = false;
};

std::string NodeNamesJson(const std::vector<std::string>& names) {
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? ",\"" : "\"") + names[i] + "\"";
  return out + "]";
}

std::string ExtenderArgs(const ScenarioPod& pod, const std::vector<std::string>& nodes) {
  return R"({"Pod":)" + pod.json + R"(,"Nodes":null,"NodeNames":)" + NodeNamesJson(nodes) + "}";
}

struct FilterOutcome {
  std::vector<std::string> passed;
  std::map<std::string, std::string> failed;        // FailedNodes
  std::map<std::string, std::string> unresolvable;  // FailedAndUnresolvableNodes
  std::string AllReasons() const {
    std::string out;
    for (const auto& [n, r] : failed)
      out += n + ": " + r + "; ";
    for (const auto& [n, r] : unresolvable)
      out += n + ": " + r + "; ";
    return out;
  }
};

FilterOutcome Filter(Extender& ext, const ScenarioPod& pod, const std::vector<std::string>& nodes) {
  const ClientResponse r = ext.Post("/filter", ExtenderArgs(pod, nodes));
  INFO("filter " << pod.Key() << ": " << r.status << " " << r.body << " " << r.error);
  REQUIRE(r.ok());
  REQUIRE(r.status == 200);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsObject());
  REQUIRE(Get(d, "NodeNames") != nullptr);
  REQUIRE(d["NodeNames"].IsArray());
  CHECK(d["Nodes"].IsNull());
  CHECK(Str(d["Error"]) == "");
  FilterOutcome out;
  for (const auto& n : d["NodeNames"].GetArray())
    out.passed.push_back(Str(n));
  for (auto m = d["FailedNodes"].MemberBegin(); m != d["FailedNodes"].MemberEnd(); ++m)
    out.failed[m->name.GetString()] = Str(m->value);
  for (auto m = d["FailedAndUnresolvableNodes"].MemberBegin();
       m != d["FailedAndUnresolvableNodes"].MemberEnd(); ++m)
    out.unresolvable[m->name.GetString()] = Str(m->value);
  // Every candidate exactly once.
  CHECK(out.passed.size() + out.failed.size() + out.unresolvable.size() == nodes.size());
  return out;
}

// Picks the node kube-scheduler would: the only one, or the best /prioritize score.
std::string ChooseNode(Extender& ext, const ScenarioPod& pod,
                       const std::vector<std::string>& passed) {
  REQUIRE_FALSE(passed.empty());
  if (passed.size() == 1) return passed.front();
  const ClientResponse r = ext.Post("/prioritize", ExtenderArgs(pod, passed));
  INFO("prioritize " << pod.Key() << ": " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsArray());
  std::string best = passed.front();
  int64_t best_score = -1;
  for (const auto& e : d.GetArray()) {
    const int64_t score = e["Score"].GetInt64();
    CHECK(score >= 0);
    CHECK(score <= 10);
    if (score > best_score) {
      best_score = score;
      best = Str(e["Host"]);
    }
  }
  return best;
}

std::string BindBody(const ScenarioPod& pod, const std::string& node) {
  return R"({"PodName":")" + pod.name + R"(","PodNamespace":")" + pod.ns + R"(","PodUID":")" +
         pod.uid + R"(","Node":")" + node + R"("})";
}

std::string Bind(Extender& ext, const ScenarioPod& pod, const std::string& node) {
  const ClientResponse r = ext.Post("/bind", BindBody(pod, node));
  INFO("bind " << pod.Key() << " -> " << node << ": " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(Get(d, "Error") != nullptr);
  REQUIRE(d["Error"].IsString());
  return Str(d["Error"]);
}

// GET /quotas: namespace -> used cpu text.
std::map<std::string, std::string> UsedCpu(Extender& ext) {
  const ClientResponse r = ext.Get("/quotas");
  INFO("quotas: " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  std::map<std::string, std::string> out;
  for (const auto& q : d["quotas"].GetArray()) {
    const auto* used = Get(q, "used");
    const auto* cpu = used ? Get(*used, "cpu") : nullptr;
    out[Str(q["namespace"])] = cpu ? Str(*cpu) : "0";
  }
  return out;
}

// Log lines that contain every needle.
std::vector<std::string> LogLines(const std::string& log, const std::vector<std::string>& needles) {
  std::vector<std::string> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    bool all = true;
    for (const auto& n : needles)
      all = all && line.find(n) != std::string::npos;
    if (all) out.push_back(line);
  }
  return out;
}

std::vector<std::string> EvictionLines(const std::string& log, const std::string& pod_key) {
  return LogLines(log, {"msg=\"evicted\"", "pod=" + pod_key + " "});
}

// Events 0-4 of the scenario: each pod is filtered, (prioritized,) bound where `expect` says.
void RunFirstFiveEvents(Extender& ext, const Scenario& s, std::map<std::string, std::string>* at) {
  const YAML::Node expect = s.root["expect"];
  for (int i = 0; i < 5; ++i) {
    const ScenarioPod& pod = s.pods.at(static_cast<std::size_t>(i));
    INFO("event " << i << ": create " << pod.Key());
    const std::vector<std::string> nodes = s.CandidateNodes(pod);
    const FilterOutcome f = Filter(ext, pod, nodes);
    INFO("reasons: " << f.AllReasons());
    REQUIRE_FALSE(f.passed.empty());
    const std::string node = ChooseNode(ext, pod, f.passed);
    CHECK(Bind(ext, pod, node) == "");
    (*at)[pod.Key()] = node;
    const YAML::Node bound = expect[i]["bound"];
    REQUIRE(bound);
    for (const auto& kv : bound) {
      CHECK(kv.first.as<std::string>() == pod.Key());
      CHECK(node == kv.second.as<std::string>());
    }
  }
  const auto used = UsedCpu(ext);
  CHECK(used.at("eq1") == "8");
  CHECK(used.at("eq2") == "3");
}

// Re-binding a bound pod to its node is idempotent ("" when it is still there, bound there);
// a pod that was evicted is unknown.
void CheckStillBound(Extender& ext, const Scenario& s, const std::string& key,
                     const std::string& node) {
  INFO(key << " must still be bound to " << node);
  CHECK(Bind(ext, s.Pod(key), node) == "");
}

TEST_CASE("seed-002 over HTTP: borrow, then reclaim eq2's guarantee from eq1's Job pod", "[e2e]") {
  const Scenario s = LoadScenario();
  REQUIRE(s.pods.size() == 8);
  Extender ext(s, {});
  INFO(ext.process().error());
  REQUIRE(ext.started());
  std::map<std::string, std::string> at;
  RunFirstFiveEvents(ext, s, &at);

  // Event 5: job-2 (eq2, 5 cpu). Entitled by quota, but no node has room: every node is
  // rejected with a reason.
  const ScenarioPod& job2 = s.Pod("eq2/job-2");
  {
    INFO("event 5: first filter of eq2/job-2");
    const FilterOutcome f = Filter(ext, job2, s.CandidateNodes(job2));
    CHECK(f.passed.empty());
    CHECK(f.failed.size() + f.unresolvable.size() == 2);
    for (const auto& [node, reason] : f.failed) {
      INFO(node << ": " << reason);
      CHECK(reason.find("cpu") != std::string::npos);
    }
    for (const auto& [node, reason] : f.unresolvable) {
      INFO(node << ": " << reason);
      CHECK(reason.find("cpu") != std::string::npos);
    }
  }

  // The reclaim controller evicts eq1/job-b (the borrower's least important pod on n2).
  bool evicted = false;
  for (const auto deadline = Clock::now() + 15s; !evicted && Clock::now() < deadline;) {
    evicted = !EvictionLines(ext.process().Log(), "eq1/job-b").empty();
    if (!evicted) std::this_thread::sleep_for(20ms);
  }
  {
    INFO("log:\n" << ext.process().Log());
    REQUIRE(evicted);
  }
  {
    // /quotas: eq1 is back at its min.
    std::map<std::string, std::string> used;
    const auto deadline = Clock::now() + 10s;
    do {
      used = UsedCpu(ext);
      if (used["eq1"] == "6") break;
      std::this_thread::sleep_for(20ms);
    } while (Clock::now() < deadline);
    CHECK(used["eq1"] == "6");
  }
  {
    // /explain shows the reclaim in flight for job-2 on n2 (recorded right after the eviction).
    bool in_flight = false;
    std::string last;
    for (const auto deadline = Clock::now() + 10s; !in_flight && Clock::now() < deadline;) {
      const ClientResponse r = ext.Post("/explain", job2.json);
      INFO("explain: " << r.status << " " << r.body);
      REQUIRE(r.status == 200);
      last = r.body;
      rapidjson::Document d;
      d.Parse(r.body.c_str());
      REQUIRE_FALSE(d.HasParseError());
      if (const auto* list = Get(d, "reclaimsInFlight"); list && list->IsArray()) {
        for (const auto& e : list->GetArray())
          in_flight = in_flight || (Str(e["pod"]) == "eq2/job-2" && Str(e["node"]) == "n2");
      }
      if (!in_flight) std::this_thread::sleep_for(20ms);
    }
    INFO("last explain: " << last);
    CHECK(in_flight);
  }

  {
    // While reclaim serves job-2, /preempt proposes nothing for it (never preempt twice).
    const std::string body =
        R"({"Pod":)" + job2.json +
        R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u-job-a"}],"NumPDBViolations":0},"n2":{"Pods":[{"UID":"u-nb-b"}],"NumPDBViolations":0}}})";
    const ClientResponse r = ext.Post("/preempt", body);
    INFO("preempt during reclaim: " << r.status << " " << r.body);
    REQUIRE(r.status == 200);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    REQUIRE_FALSE(d.HasParseError());
    REQUIRE(Get(d, "NodeNameToMetaVictims") != nullptr);
    REQUIRE(d["NodeNameToMetaVictims"].IsObject());
    CHECK(d["NodeNameToMetaVictims"].ObjectEmpty());
  }
  {
    // The eviction is counted in /metrics.
    const ClientResponse m = ext.Get("/metrics");
    INFO("metrics: " << m.body);
    REQUIRE(m.status == 200);
    CHECK(m.body.find("capacity_extender_evictions_total{namespace=\"eq1\"} 1\n") !=
          std::string::npos);
  }

  // Once the victim is gone, reclaim nudges job-2 (embedded mode: logged only)...
  {
    bool nudged = false;
    for (const auto deadline = Clock::now() + 10s; !nudged && Clock::now() < deadline;) {
      nudged = !LogLines(ext.process().Log(), {"requeue nudge", "pod=eq2/job-2"}).empty();
      if (!nudged) std::this_thread::sleep_for(20ms);
    }
    INFO("log:\n" << ext.process().Log());
    CHECK(nudged);
  }
  // ... and kube-scheduler retries it: the filter now passes n2, and binding works.
  std::vector<std::string> passed;
  {
    const auto deadline = Clock::now() + 15s;
    FilterOutcome f;
    do {
      f = Filter(ext, job2, s.CandidateNodes(job2));
      if (!f.passed.empty()) break;
      std::this_thread::sleep_for(50ms);
    } while (Clock::now() < deadline);
    INFO("last filter reasons: " << f.AllReasons());
    passed = f.passed;
    CHECK(passed == std::vector<std::string>{"n2"});
  }
  REQUIRE_FALSE(passed.empty());
  const std::string node = ChooseNode(ext, job2, passed);
  CHECK(node == s.root["expect"][5]["bound"]["eq2/job-2"].as<std::string>());
  CHECK(Bind(ext, job2, node) == "");
  at[job2.Key()] = node;
  {
    // The reclaim completes now that job-2 is bound.
    const std::string log = ext.process().Log();
    INFO("log:\n" << log);
    CHECK(ext.process().WaitForLog("msg=\"reclaim completed\" pod=eq2/job-2 ", 10000ms));
  }
  {
    const auto used = UsedCpu(ext);
    CHECK(used.at("eq1") == "6");
    CHECK(used.at("eq2") == "8");
  }
  // Evicted exactly job-b; the NoteBook pods, job-a and job-1 untouched.
  for (const auto& v : s.root["expect"][5]["evicted"]) {
    const std::string key = v.as<std::string>();
    INFO("evicted " << key);
    CHECK(EvictionLines(ext.process().Log(), key).size() == 1);
    CHECK(Bind(ext, s.Pod(key), at[key]).find("unknown") != std::string::npos);
  }
  for (const auto& v : s.root["expect"][5]["untouched"]) {
    const std::string key = v.as<std::string>();
    CHECK(EvictionLines(ext.process().Log(), key).empty());
    CheckStillBound(ext, s, key, at[key]);
  }

  // Event 6: job-b2 (eq1, 2 cpu): quota allows it, no node has 2 cpu free, and it may only
  // preempt lower-priority pods of eq1 (none): pending, reason about cpu.
  const ScenarioPod& jobb2 = s.Pod("eq1/job-b2");
  {
    INFO("event 6: eq1/job-b2");
    const FilterOutcome f = Filter(ext, jobb2, s.CandidateNodes(jobb2));
    INFO("reasons: " << f.AllReasons());
    CHECK(f.passed.empty());
    const std::string wanted = s.root["expect"][6]["pending"]["eq1/job-b2"].as<std::string>();
    CHECK(f.failed.size() + f.unresolvable.size() == 2);
    for (const auto& [n, reason] : f.failed)
      CHECK(reason.find(wanted) != std::string::npos);
    for (const auto& [n, reason] : f.unresolvable)
      CHECK(reason.find(wanted) != std::string::npos);
  }
  // A few reclaim intervals later nothing more was evicted and job-b2 is still rejected.
  std::this_thread::sleep_for(800ms);
  {
    const std::string log = ext.process().Log();
    INFO("log:\n" << log);
    CHECK(LogLines(log, {"msg=\"evicted\""}).size() == 1);
    CHECK(LogLines(log, {"reclaim started", "pod=eq1/job-b2 "}).empty());
    for (const char* key : {"eq1/job-a", "eq1/nb-a", "eq1/nb-b", "eq2/job-1", "eq2/job-2"})
      CheckStillBound(ext, s, key, at[key]);
    const auto used = UsedCpu(ext);
    CHECK(used.at("eq1") == "6");
    CHECK(used.at("eq2") == "8");
    const FilterOutcome f = Filter(ext, jobb2, s.CandidateNodes(jobb2));
    CHECK(f.passed.empty());
  }

  {
    // /explain agrees: reclaim has nothing to evict for job-b2.
    const ClientResponse r = ext.Post("/explain", jobb2.json);
    INFO("explain job-b2: " << r.status << " " << r.body);
    REQUIRE(r.status == 200);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    REQUIRE_FALSE(d.HasParseError());
    REQUIRE(Get(d, "reclaim") != nullptr);
    CHECK(Str(d["reclaim"]["decision"]) != "evict");
    CHECK(d["reclaim"]["victims"].Empty());
    CHECK(Str(d["admission"]["reason"]) == "");  // quota admits it: only the nodes are full
  }

  // Event 7: big (eq1, 5 cpu): 6 + 5 > max 10: rejected, the reason says max.
  const ScenarioPod& big = s.Pod("eq1/big");
  {
    INFO("event 7: eq1/big");
    const FilterOutcome f = Filter(ext, big, s.CandidateNodes(big));
    INFO("reasons: " << f.AllReasons());
    CHECK(f.passed.empty());
    const std::string wanted = s.root["expect"][7]["pending"]["eq1/big"].as<std::string>();
    CHECK(f.failed.size() + f.unresolvable.size() == 2);
    for (const auto& [n, reason] : f.failed)
      CHECK(reason.find(wanted) != std::string::npos);
    for (const auto& [n, reason] : f.unresolvable)
      CHECK(reason.find(wanted) != std::string::npos);
    // A bind that slipped through anyway is refused by the bind-time quota check.
    CHECK(Bind(ext, big, "n2").find("max") != std::string::npos);
  }
  // A pod that still cannot fit is never nudged.
  std::this_thread::sleep_for(300ms);
  {
    const std::string log = ext.process().Log();
    INFO("log:\n" << log);
    CHECK(LogLines(log, {"requeue nudge", "pod=eq1/job-b2"}).empty());
    CHECK(LogLines(log, {"requeue nudge", "pod=eq1/big"}).empty());
  }
  // Still serving; then a clean shutdown.
  CHECK(ext.Get("/healthz").status == 200);
  CHECK(ext.process().Stop() == 0);
}

TEST_CASE("seed-002 over HTTP: /preempt for job-2 with reclaim off names only bound pods",
          "[e2e]") {
  const Scenario s = LoadScenario();
  Extender ext(s, {"--reclaim", "off"});
  INFO(ext.process().error());
  REQUIRE(ext.started());
  std::map<std::string, std::string> at;
  RunFirstFiveEvents(ext, s, &at);
  const ScenarioPod& job2 = s.Pod("eq2/job-2");
  const FilterOutcome f = Filter(ext, job2, s.CandidateNodes(job2));
  CHECK(f.passed.empty());

  // job-2 has priority 0 like everyone, so kube-scheduler would not call preempt; call it anyway
  // the way it would (nodeCacheCapable: NodeNameToMetaVictims with its own proposals).
  std::map<std::string, std::set<std::string>> on_node;
  for (const auto& [key, node] : at)
    on_node[node].insert(s.Pod(key).uid);
  const std::string body =
      R"({"Pod":)" + job2.json +
      R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u-job-a"}],"NumPDBViolations":0},"n2":{"Pods":[{"UID":"u-job-b"}],"NumPDBViolations":0}}})";
  const ClientResponse r = ext.Post("/preempt", body);
  INFO("preempt: " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsObject());
  const auto* victims = Get(d, "NodeNameToMetaVictims");
  REQUIRE(victims != nullptr);
  REQUIRE(victims->IsObject());
  for (auto m = victims->MemberBegin(); m != victims->MemberEnd(); ++m) {
    const std::string node = m->name.GetString();
    INFO("node " << node);
    CHECK((node == "n1" || node == "n2"));
    REQUIRE(m->value.IsObject());
    REQUIRE(Get(m->value, "Pods") != nullptr);
    REQUIRE(m->value["Pods"].IsArray());
    CHECK(m->value["Pods"].Size() > 0);
    REQUIRE(Get(m->value, "NumPDBViolations") != nullptr);
    CHECK(m->value["NumPDBViolations"].IsInt());
    for (const auto& p : m->value["Pods"].GetArray()) {
      const std::string uid = Str(p["UID"]);
      INFO("victim " << uid);
      CHECK(on_node[node].count(uid) == 1);
      // eq1 is back within its min once job-b goes: the NoteBook pods are never victims.
      CHECK(uid != "u-nb-a");
      CHECK(uid != "u-nb-b");
    }
  }
  // Victim selection (docs/capacity-semantics.md#4-victims-on-one-node): job-2 is within eq2's min,
  // so its victims are pods of the borrowing eq1, only until eq1 is back at its min: on n1 that is
  // job-a alone (3 cpu free: not enough, n1 dropped); on n2 job-b (6 cpu free: enough).
  CHECK(victims->MemberCount() == 1);
  if (victims->HasMember("n2")) {
    const auto& pods = (*victims)["n2"]["Pods"];
    CHECK(pods.Size() == 1);
    if (pods.Size() == 1) CHECK(Str(pods[0]["UID"]) == "u-job-b");
  } else {
    FAIL_CHECK("n2 is not a candidate");
  }
  // Reclaim is off and preempt only answers: nothing was evicted.
  std::this_thread::sleep_for(500ms);
  const auto used = UsedCpu(ext);
  CHECK(used.at("eq1") == "8");
  CHECK(used.at("eq2") == "3");
  CHECK(LogLines(ext.process().Log(), {"msg=\"evicted\""}).empty());
}

TEST_CASE("seed-002 over HTTP with --reclaim dry-run: job-2 stays rejected, nothing is evicted",
          "[e2e]") {
  const Scenario s = LoadScenario();
  Extender ext(s, {"--reclaim", "dry-run"});
  INFO(ext.process().error());
  REQUIRE(ext.started());
  std::map<std::string, std::string> at;
  RunFirstFiveEvents(ext, s, &at);
  const ScenarioPod& job2 = s.Pod("eq2/job-2");
  CHECK(Filter(ext, job2, s.CandidateNodes(job2)).passed.empty());

  const bool logged = ext.process().WaitForLog("reclaim dry-run: would evict", 15000ms);
  const std::string log = ext.process().Log();
  INFO("log:\n" << log);
  REQUIRE(logged);
  const auto lines = LogLines(log, {"reclaim dry-run: would evict", "pod=eq2/job-2 "});
  REQUIRE(lines.size() >= 1);
  CHECK(lines.front().find("eq1/job-b") != std::string::npos);
  CHECK(lines.front().find("nb-") == std::string::npos);

  // Nothing was evicted, and job-2 is still rejected on every node.
  std::this_thread::sleep_for(500ms);
  CHECK(LogLines(ext.process().Log(), {"msg=\"evicted\""}).empty());
  const auto used = UsedCpu(ext);
  CHECK(used.at("eq1") == "8");
  CHECK(used.at("eq2") == "3");
  const FilterOutcome f = Filter(ext, job2, s.CandidateNodes(job2));
  CHECK(f.passed.empty());
  for (const auto& key : {"eq1/job-a", "eq1/job-b", "eq1/nb-a", "eq1/nb-b", "eq2/job-1"})
    CheckStillBound(ext, s, key, at[key]);
}

}  // namespace
}  // namespace extender_seed_scenario_test
