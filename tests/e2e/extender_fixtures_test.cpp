// End to end: every request a real kube-scheduler sent to an extender (the captures under
// tests/fixtures/kube-scheduler/, exact bytes) replayed against the real `capacity-extender
// serve` binary, started on a snapshot of the captures' cluster; each answer must have the shape
// kube-scheduler's extender/v1 client expects (see docs/extender-protocol.md).
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"
#include "tests/support/test_paths.h"

namespace extender_fixtures_test {
namespace {

using capext::test::ClientResponse;
using capext::test::ExtenderProcess;
using capext::test::HttpConnection;

const std::string kFixtureDir = capext::test::SourcePath("tests/fixtures/kube-scheduler");

// The cluster the captures were made on (fixtures README): node-a, node-b schedulable, node-c
// tainted (kube-scheduler filters it itself, so it never appears in a request), three
// PriorityClasses, no ElasticQuota (namespace ext-test is not governed).
const char* const kClusterYaml = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: node-a
    labels: {kubernetes.io/hostname: node-a, kubernetes.io/os: linux, topology.kubernetes.io/zone: zone-1}
  status:
    allocatable: {cpu: "8", memory: 32Gi, pods: "110", example.com/foo: "4"}
    capacity: {cpu: "8", memory: 32Gi, pods: "110", example.com/foo: "4"}
- apiVersion: v1
  kind: Node
  metadata:
    name: node-b
    labels: {kubernetes.io/hostname: node-b, kubernetes.io/os: linux, topology.kubernetes.io/zone: zone-1}
  status:
    allocatable: {cpu: "8", memory: 32Gi, pods: "110", example.com/foo: "4"}
    capacity: {cpu: "8", memory: 32Gi, pods: "110", example.com/foo: "4"}
- apiVersion: v1
  kind: Node
  metadata:
    name: node-c
    labels: {kubernetes.io/hostname: node-c, kubernetes.io/os: linux, topology.kubernetes.io/zone: zone-1}
  spec:
    taints: [{key: dedicated, value: special, effect: NoSchedule}]
  status:
    allocatable: {cpu: "8", memory: 32Gi, pods: "110", example.com/foo: "4"}
    capacity: {cpu: "8", memory: 32Gi, pods: "110", example.com/foo: "4"}
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: low}
  value: 100
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: high}
  value: 1000
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: high-nonpreempting}
  value: 1000
  preemptionPolicy: Never
)";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Str(const rapidjson::Value& v) {
  return v.IsString() ? std::string(v.GetString(), v.GetStringLength()) : std::string();
}

const rapidjson::Value* Get(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

struct Fixture {
  std::string stem;                  // e.g. filter-nodecache-001
  std::string verb;                  // filter, prioritize, preempt, bind
  std::string path;                  // from .meta.json, e.g. /filter
  std::string body;                  // exact bytes of .request.raw.json
  capext::test::HeaderList headers;  // kube-scheduler's headers (.meta.json), but Host/Length
};

// Every *.request.raw.json, in capture order (index.tsv) first, then any file the index does
// not list (sorted by name), so that nothing is left out.
std::vector<Fixture> LoadFixtures() {
  std::vector<std::string> stems;
  std::set<std::string> listed;
  std::istringstream index(ReadFile(kFixtureDir + "/index.tsv"));
  std::string line;
  while (std::getline(index, line)) {
    std::istringstream fields(line);
    std::string time, stem;
    if (std::getline(fields, time, '\t') && std::getline(fields, stem, '\t') && !stem.empty()) {
      if (listed.insert(stem).second) stems.push_back(stem);
    }
  }
  std::vector<std::string> extra;
  const std::string suffix = ".request.raw.json";
  for (const auto& entry : std::filesystem::directory_iterator(kFixtureDir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
    const std::string stem = name.substr(0, name.size() - suffix.size());
    if (listed.count(stem) == 0) extra.push_back(stem);
  }
  std::sort(extra.begin(), extra.end());
  stems.insert(stems.end(), extra.begin(), extra.end());

  std::vector<Fixture> out;
  for (const auto& stem : stems) {
    const std::string raw_path = kFixtureDir + "/" + stem + suffix;
    if (!std::filesystem::exists(raw_path)) continue;
    Fixture f;
    f.stem = stem;
    f.verb = stem.substr(0, stem.find('-'));
    f.body = ReadFile(raw_path);
    rapidjson::Document meta;
    meta.Parse(ReadFile(kFixtureDir + "/" + stem + ".meta.json").c_str());
    if (!meta.HasParseError() && Get(meta, "path") != nullptr) f.path = Str(*Get(meta, "path"));
    if (f.path.empty()) f.path = "/" + f.verb;
    if (const auto* headers = Get(meta, "headers"); headers != nullptr && headers->IsObject()) {
      for (auto h = headers->MemberBegin(); h != headers->MemberEnd(); ++h) {
        const std::string name = h->name.GetString();
        if (name == "Host" || name == "Content-Length") continue;
        f.headers.emplace_back(name, Str(h->value));
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::size_t CountRawFiles() {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtureDir)) {
    if (entry.path().filename().string().ends_with(".request.raw.json")) ++n;
  }
  return n;
}

// A server on the fixtures' cluster, plus one keep-alive connection that reconnects as needed.
class Server {
 public:
  explicit Server(std::vector<std::string> extra_args = {}) {
    snapshot_ = process_.dir().Write("kube-scheduler-cluster.yaml", kClusterYaml);
    std::vector<std::string> args = {"--snapshot", snapshot_, "--reclaim", "off"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    started_ = process_.Start(args);
  }
  bool started() const { return started_; }
  const ExtenderProcess& process() const { return process_; }

  ClientResponse Post(const std::string& path, const std::string& body,
                      const capext::test::HeaderList& headers = {}) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!connection_.is_open() && !connection_.Connect("127.0.0.1", process_.port())) {
        ClientResponse r;
        r.error = connection_.error();
        return r;
      }
      ClientResponse r = connection_.Send("POST", path, body, headers);
      // A keep-alive connection the server closed between requests: retry once on a new one.
      if (r.ok() || attempt == 1) return r;
    }
    return {};
  }

 private:
  ExtenderProcess process_;
  std::string snapshot_;
  bool started_ = false;
  HttpConnection connection_;
};

std::set<std::string> InputNodeNames(const rapidjson::Document& request, bool* names_mode) {
  std::set<std::string> names;
  *names_mode = false;
  if (const auto* nn = Get(request, "NodeNames"); nn != nullptr && nn->IsArray()) {
    *names_mode = true;
    for (const auto& n : nn->GetArray())
      names.insert(Str(n));
  }
  if (const auto* nodes = Get(request, "Nodes"); nodes != nullptr && nodes->IsObject()) {
    if (const auto* items = Get(*nodes, "items"); items != nullptr && items->IsArray()) {
      for (const auto& item : items->GetArray()) {
        if (const auto* meta = Get(item, "metadata"))
          if (const auto* name = Get(*meta, "name")) names.insert(Str(*name));
      }
    }
  }
  return names;
}

const rapidjson::Value* InputNodeItem(const rapidjson::Document& request, const std::string& name) {
  const auto* nodes = Get(request, "Nodes");
  const auto* items = nodes ? Get(*nodes, "items") : nullptr;
  if (items == nullptr || !items->IsArray()) return nullptr;
  for (const auto& item : items->GetArray()) {
    const auto* meta = Get(item, "metadata");
    if (meta && Get(*meta, "name") && Str(*Get(*meta, "name")) == name) return &item;
  }
  return nullptr;
}

// Checks an ExtenderFilterResult against its ExtenderArgs; returns the names that passed.
std::set<std::string> CheckFilterAnswer(const rapidjson::Document& request,
                                        const ClientResponse& response) {
  std::set<std::string> passed;
  REQUIRE(response.ok());
  REQUIRE(response.status == 200);
  CHECK(response.Header("content-type").find("application/json") != std::string::npos);
  rapidjson::Document answer;
  answer.Parse(response.body.c_str());
  REQUIRE_FALSE(answer.HasParseError());
  REQUIRE(answer.IsObject());
  bool names_mode = false;
  const std::set<std::string> input = InputNodeNames(request, &names_mode);

  const auto* node_names = Get(answer, "NodeNames");
  const auto* nodes = Get(answer, "Nodes");
  REQUIRE(node_names != nullptr);
  REQUIRE(nodes != nullptr);
  std::vector<std::string> passed_list;
  if (names_mode) {
    // nodeCacheCapable: NodeNames, Nodes null.
    REQUIRE(node_names->IsArray());
    CHECK(nodes->IsNull());
    for (const auto& n : node_names->GetArray()) {
      REQUIRE(n.IsString());
      passed_list.push_back(Str(n));
    }
  } else {
    // Full mode: the same Node objects under Nodes.items, NodeNames null (a NodeNames-only
    // answer would silently drop every node).
    CHECK(node_names->IsNull());
    REQUIRE(nodes->IsObject());
    const auto* items = Get(*nodes, "items");
    REQUIRE(items != nullptr);
    REQUIRE(items->IsArray());
    for (const auto& item : items->GetArray()) {
      REQUIRE(item.IsObject());
      const auto* meta = Get(item, "metadata");
      REQUIRE(meta != nullptr);
      REQUIRE(Get(*meta, "name") != nullptr);
      const std::string name = Str(*Get(*meta, "name"));
      passed_list.push_back(name);
      const rapidjson::Value* original = InputNodeItem(request, name);
      CHECK(original != nullptr);
      if (original != nullptr) CHECK(item == *original);  // the very object that was sent
    }
  }
  for (const auto& name : passed_list) {
    INFO("passed node " << name);
    CHECK(input.count(name) == 1);
    CHECK(passed.insert(name).second);  // no duplicates
  }

  std::map<std::string, int> seen;
  for (const auto& n : passed)
    ++seen[n];
  for (const char* key : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    INFO(key);
    const auto* map = Get(answer, key);
    REQUIRE(map != nullptr);
    REQUIRE(map->IsObject());
    for (auto m = map->MemberBegin(); m != map->MemberEnd(); ++m) {
      const std::string name(m->name.GetString(), m->name.GetStringLength());
      INFO("failed node " << name);
      CHECK(input.count(name) == 1);
      CHECK(passed.count(name) == 0);
      REQUIRE(m->value.IsString());
      CHECK(m->value.GetStringLength() > 0);  // a reason
      ++seen[name];
    }
  }
  for (const auto& name : input) {
    INFO("input node " << name << " must appear exactly once across passed/failed/unresolvable");
    CHECK(seen[name] == 1);
  }
  const auto* error = Get(answer, "Error");
  REQUIRE(error != nullptr);
  REQUIRE(error->IsString());
  CHECK(Str(*error) == "");
  return passed;
}

void CheckPrioritizeAnswer(const rapidjson::Document& request, const ClientResponse& response) {
  REQUIRE(response.ok());
  REQUIRE(response.status == 200);
  rapidjson::Document answer;
  answer.Parse(response.body.c_str());
  REQUIRE_FALSE(answer.HasParseError());
  REQUIRE(answer.IsArray());  // a bare HostPriorityList
  bool names_mode = false;
  const std::set<std::string> input = InputNodeNames(request, &names_mode);
  std::set<std::string> hosts;
  for (const auto& entry : answer.GetArray()) {
    REQUIRE(entry.IsObject());
    const auto* host = Get(entry, "Host");
    const auto* score = Get(entry, "Score");
    REQUIRE(host != nullptr);
    REQUIRE(score != nullptr);
    REQUIRE(host->IsString());
    REQUIRE(score->IsInt64());
    INFO("host " << Str(*host));
    CHECK(input.count(Str(*host)) == 1);
    CHECK(hosts.insert(Str(*host)).second);
    CHECK(score->GetInt64() >= 0);
    CHECK(score->GetInt64() <= 10);
  }
}

// `bound` = pod UIDs per node bound through our /bind so far (the only pods on the nodes).
void CheckPreemptAnswer(const rapidjson::Document& request, const ClientResponse& response,
                        const std::map<std::string, std::set<std::string>>& bound) {
  REQUIRE(response.ok());
  REQUIRE(response.status == 200);
  rapidjson::Document answer;
  answer.Parse(response.body.c_str());
  REQUIRE_FALSE(answer.HasParseError());
  REQUIRE(answer.IsObject());
  std::set<std::string> proposed;
  for (const char* key : {"NodeNameToMetaVictims", "NodeNameToVictims"}) {
    if (const auto* m = Get(request, key); m != nullptr && m->IsObject()) {
      for (auto it = m->MemberBegin(); it != m->MemberEnd(); ++it)
        proposed.insert(it->name.GetString());
    }
  }
  // Always answered as NodeNameToMetaVictims (kube-scheduler reads nothing else).
  const auto* victims = Get(answer, "NodeNameToMetaVictims");
  REQUIRE(victims != nullptr);
  REQUIRE(victims->IsObject());
  for (auto it = victims->MemberBegin(); it != victims->MemberEnd(); ++it) {
    const std::string node = it->name.GetString();
    INFO("candidate node " << node);
    CHECK(proposed.count(node) == 1);
    REQUIRE(it->value.IsObject());
    const auto* pods = Get(it->value, "Pods");
    const auto* pdb = Get(it->value, "NumPDBViolations");
    REQUIRE(pods != nullptr);
    REQUIRE(pods->IsArray());
    CHECK(pods->Size() > 0);  // a node with no victims must be dropped instead
    REQUIRE(pdb != nullptr);
    CHECK(pdb->IsInt64());
    const auto node_pods = bound.find(node);
    for (const auto& p : pods->GetArray()) {
      REQUIRE(p.IsObject());
      const auto* uid = Get(p, "UID");
      REQUIRE(uid != nullptr);
      REQUIRE(uid->IsString());
      INFO("victim uid " << Str(*uid));
      // Each UID must be a pod on that node in the scheduler's snapshot.
      CHECK((node_pods != bound.end() && node_pods->second.count(Str(*uid)) == 1));
    }
  }
}

std::string BindError(const ClientResponse& response) {
  REQUIRE(response.ok());
  REQUIRE(response.status == 200);
  rapidjson::Document answer;
  answer.Parse(response.body.c_str());
  REQUIRE_FALSE(answer.HasParseError());
  REQUIRE(answer.IsObject());
  const auto* error = Get(answer, "Error");
  REQUIRE(error != nullptr);
  REQUIRE(error->IsString());
  return Str(*error);
}

std::string PodUid(const rapidjson::Document& request) {
  const auto* pod = Get(request, "Pod");
  const auto* meta = pod ? Get(*pod, "metadata") : nullptr;
  const auto* uid = meta ? Get(*meta, "uid") : nullptr;
  return uid ? Str(*uid) : "";
}

// Rewrites the top-level keys of a JSON object with `rename` (by exact name) and appends
// `extra` members (raw JSON snippets keyed by name) to it.
std::string RewriteTopLevel(const std::string& json,
                            const std::map<std::string, std::string>& rename,
                            const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m) {
    std::string key = m->name.GetString();
    if (auto it = rename.find(key); it != rename.end()) key = it->second;
    w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
    m->value.Accept(w);
  }
  for (const auto& [key, raw] : extra) {
    w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
    w.RawValue(raw.c_str(), raw.size(), rapidjson::kObjectType);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

TEST_CASE(
    "every captured kube-scheduler request, replayed in capture order, gets a well-formed answer",
    "[e2e]") {
  const std::vector<Fixture> fixtures = LoadFixtures();
  REQUIRE(fixtures.size() == CountRawFiles());
  REQUIRE(fixtures.size() >= 100);

  Server server;
  INFO(server.process().error());
  REQUIRE(server.started());

  std::map<std::string, int> replayed;  // per verb
  std::set<std::string> seen_uids;      // pods that reached filter/prioritize/preempt
  std::map<std::string, std::set<std::string>> bound;  // node -> pod UIDs bound by us
  std::map<std::string, std::string> bound_node;       // uid -> node
  // uid -> node -> whether the pod's last /filter passed the node: /bind must say the same
  // (one decision engine).
  std::map<std::string, std::map<std::string, bool>> filtered;
  for (const Fixture& f : fixtures) {
    INFO("fixture " << f.stem << " -> POST " << f.path);
    REQUIRE(
        (f.verb == "filter" || f.verb == "prioritize" || f.verb == "preempt" || f.verb == "bind"));
    CHECK(f.path == "/" + f.verb);
    rapidjson::Document request;
    request.Parse(f.body.c_str());
    REQUIRE_FALSE(request.HasParseError());

    REQUIRE_FALSE(f.headers.empty());
    const ClientResponse response = server.Post(f.path, f.body, f.headers);
    INFO("status " << response.status << " body " << response.body.substr(0, 600) << " error "
                   << response.error);
    // kube-scheduler sends Accept-Encoding: gzip; an encoded answer would be decoded by Go's
    // transport, but nothing here needs one.
    CHECK(response.Header("content-encoding").empty());
    ++replayed[f.verb];
    if (f.verb == "filter") {
      const std::set<std::string> passed = CheckFilterAnswer(request, response);
      bool names_mode = false;
      auto& verdicts = filtered[PodUid(request)];
      verdicts.clear();
      for (const auto& node : InputNodeNames(request, &names_mode))
        verdicts[node] = passed.count(node) != 0;
      seen_uids.insert(PodUid(request));
    } else if (f.verb == "prioritize") {
      CheckPrioritizeAnswer(request, response);
      seen_uids.insert(PodUid(request));
    } else if (f.verb == "preempt") {
      CheckPreemptAnswer(request, response, bound);
      seen_uids.insert(PodUid(request));
    } else {
      const std::string error = BindError(response);
      const std::string uid = Str(*Get(request, "PodUID"));
      const std::string node = Str(*Get(request, "Node"));
      // Every bound pod passed through /filter first (no quota governs ext-test), so the
      // extender knows its requests. The bind check is /filter's verdict for that node: a bind
      // succeeds exactly where the pod's last filter passed the node (this replay has no watch,
      // so the victims of kube-scheduler's preemptions are still on their nodes here). A
      // repeated bind to the same node is idempotent.
      CHECK(seen_uids.count(uid) == 1);
      const auto verdict = filtered[uid].find(node);
      REQUIRE(verdict != filtered[uid].end());
      if (bound_node.count(uid) == 0) {
        CHECK(error.empty() == verdict->second);
      } else {
        CHECK(error == "");
      }
      if (error.empty()) {
        bound[node].insert(uid);
        bound_node[uid] = node;
      }
    }
  }
  CHECK(replayed["filter"] > 0);
  CHECK(replayed["prioritize"] > 0);
  CHECK(replayed["preempt"] > 0);
  CHECK(replayed["bind"] > 0);
  // Still alive and healthy after the whole replay.
  CHECK(capext::test::Fetch("127.0.0.1", server.process().port(), "GET", "/healthz").status == 200);
}

TEST_CASE("binding a pod the extender never saw is refused with a reason, not a crash", "[e2e]") {
  Server server;
  INFO(server.process().error());
  REQUIRE(server.started());
  int binds = 0;
  for (const Fixture& f : LoadFixtures()) {
    if (f.verb != "bind") continue;
    INFO("fixture " << f.stem);
    const ClientResponse response = server.Post(f.path, f.body);
    INFO("status " << response.status << " body " << response.body << " error " << response.error);
    const std::string error = BindError(response);
    CHECK_FALSE(error.empty());
    CHECK(error.find("unknown") != std::string::npos);
    ++binds;
  }
  CHECK(binds > 0);
  CHECK(capext::test::Fetch("127.0.0.1", server.process().port(), "GET", "/healthz").status == 200);
}

// Replaces `"<key>":"<old>"` by `"<key>":"<new>"` once (the pod spec's members in a raw fixture).
std::string ReplaceOnce(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  REQUIRE(text.find(from) == std::string::npos);
  return text;
}

TEST_CASE("preempt: victims are the lower-priority pods bound on each node; Never preempts nothing",
          "[e2e]") {
  Server server;
  INFO(server.process().error());
  REQUIRE(server.started());
  // The 'nodecache' experiment up to h1's preemption: l1..l4 (low, 3 cpu) fill node-b and
  // node-a (6 of 8 cpu each).
  std::map<std::string, std::set<std::string>> bound;
  for (const char* seq : {"001", "002", "003", "004"}) {
    const std::string filter =
        ReadFile(kFixtureDir + "/filter-nodecache-" + seq + ".request.raw.json");
    const std::string bind = ReadFile(kFixtureDir + "/bind-nodecache-" + seq + ".request.raw.json");
    REQUIRE(server.Post("/filter", filter).status == 200);
    const ClientResponse r = server.Post("/bind", bind);
    INFO(seq << ": " << r.body);
    REQUIRE(BindError(r) == "");
    rapidjson::Document b;
    b.Parse(bind.c_str());
    bound[Str(b["Node"])].insert(Str(b["PodUID"]));
  }
  REQUIRE(bound["node-a"].size() == 2);
  REQUIRE(bound["node-b"].size() == 2);

  const std::string h1 = ReadFile(kFixtureDir + "/preempt-nodecache-001.request.raw.json");
  rapidjson::Document request;
  request.Parse(h1.c_str());
  REQUIRE_FALSE(request.HasParseError());
  {
    // h1 (high, 4 cpu): one 3-cpu low pod per node is enough (reprieve puts the other back).
    const ClientResponse r = server.Post("/preempt", h1);
    INFO("h1: " << r.status << " " << r.body);
    CheckPreemptAnswer(request, r, bound);
    rapidjson::Document answer;
    answer.Parse(r.body.c_str());
    const auto& victims = answer["NodeNameToMetaVictims"];
    CHECK(victims.MemberCount() == 2);
    for (auto m = victims.MemberBegin(); m != victims.MemberEnd(); ++m) {
      INFO("node " << m->name.GetString());
      CHECK(m->value["Pods"].Size() == 1);
      CHECK(m->value["NumPDBViolations"].GetInt() == 0);
    }
  }
  {
    // The same pod as a new pod (preemptionPolicy is immutable: another UID) with
    // preemptionPolicy Never (PriorityClass high-nonpreempting) never preempts.
    std::string never = ReplaceOnce(h1, R"("uid":"4a33640a-e138-49da-b013-da23e2f8f578")",
                                    R"("uid":"e2e-h1-never")");
    never = ReplaceOnce(never, R"("name":"h1")", R"("name":"h1-never")");
    never = ReplaceOnce(never, R"("preemptionPolicy":"PreemptLowerPriority")",
                        R"("preemptionPolicy":"Never")");
    never = ReplaceOnce(never, R"("priorityClassName":"high",)",
                        R"("priorityClassName":"high-nonpreempting",)");
    const ClientResponse r = server.Post("/preempt", never);
    INFO("h1 with preemptionPolicy Never: " << r.status << " " << r.body);
    CheckPreemptAnswer(request, r, bound);
    rapidjson::Document answer;
    answer.Parse(r.body.c_str());
    CHECK(answer["NodeNameToMetaVictims"].ObjectEmpty());
  }
  {
    // A low pod (priority 100) finds no strictly lower-priority victims.
    std::string low =
        ReplaceOnce(h1, R"("uid":"4a33640a-e138-49da-b013-da23e2f8f578")", R"("uid":"e2e-h1-low")");
    low = ReplaceOnce(low, R"("name":"h1")", R"("name":"h1-low")");
    low = ReplaceOnce(low, R"("priority":1000,)", R"("priority":100,)");
    low = ReplaceOnce(low, R"("priorityClassName":"high",)", R"("priorityClassName":"low",)");
    const ClientResponse r = server.Post("/preempt", low);
    INFO("h1 as a low pod: " << r.status << " " << r.body);
    CheckPreemptAnswer(request, r, bound);
    rapidjson::Document answer;
    answer.Parse(r.body.c_str());
    CHECK(answer["NodeNameToMetaVictims"].ObjectEmpty());
  }
}

TEST_CASE("request keys are matched case-insensitively and unknown fields are ignored", "[e2e]") {
  Server server;
  INFO(server.process().error());
  REQUIRE(server.started());
  const std::string filter_raw = ReadFile(kFixtureDir + "/filter-nodecache-001.request.raw.json");
  const std::string full_raw = ReadFile(kFixtureDir + "/filter-fullnodes-001.request.raw.json");
  const std::string preempt_raw = ReadFile(kFixtureDir + "/preempt-fullnodes-001.request.raw.json");
  REQUIRE_FALSE(filter_raw.empty());
  const std::vector<std::pair<std::string, std::string>> unknown = {
      {"SomethingNew", R"({"a":[1,2,{"b":null}],"c":"d"})"}, {"apiVersion", R"({"x":1})"}};

  SECTION("filter, nodeCacheCapable, camelCase and lowercase keys") {
    for (const auto& rename : std::vector<std::map<std::string, std::string>>{
             {{"Pod", "pod"}, {"NodeNames", "nodeNames"}, {"Nodes", "nodes"}},
             {{"Pod", "POD"}, {"NodeNames", "nodenames"}, {"Nodes", "NODES"}}}) {
      const std::string body = RewriteTopLevel(filter_raw, rename, unknown);
      INFO(body.substr(0, 200));
      rapidjson::Document original;
      original.Parse(filter_raw.c_str());
      const ClientResponse response = server.Post("/filter", body);
      INFO("status " << response.status << " body " << response.body);
      const auto passed = CheckFilterAnswer(original, response);
      // Nothing is bound on the snapshot's nodes: a 3-cpu pod fits both.
      CHECK(passed == std::set<std::string>{"node-a", "node-b"});
    }
  }
  SECTION("filter, full Nodes, lowercase keys") {
    const std::string body = RewriteTopLevel(
        full_raw, {{"Pod", "pod"}, {"NodeNames", "nodenames"}, {"Nodes", "nodes"}}, unknown);
    rapidjson::Document original;
    original.Parse(full_raw.c_str());
    const ClientResponse response = server.Post("/filter", body);
    INFO("status " << response.status << " body " << response.body.substr(0, 600));
    const auto passed = CheckFilterAnswer(original, response);
    CHECK(passed == std::set<std::string>{"node-a", "node-b"});
  }
  SECTION("prioritize with lowercase keys") {
    const std::string body =
        RewriteTopLevel(filter_raw, {{"Pod", "pod"}, {"NodeNames", "nodenames"}}, unknown);
    rapidjson::Document original;
    original.Parse(filter_raw.c_str());
    const ClientResponse response = server.Post("/prioritize", body);
    INFO("status " << response.status << " body " << response.body);
    CheckPrioritizeAnswer(original, response);
    rapidjson::Document answer;
    answer.Parse(response.body.c_str());
    CHECK(answer.Size() == 2);
  }
  SECTION("preempt with lowercase keys") {
    const std::string body = RewriteTopLevel(preempt_raw,
                                             {{"Pod", "pod"},
                                              {"NodeNameToVictims", "nodeNameToVictims"},
                                              {"NodeNameToMetaVictims", "nodenametometavictims"}},
                                             unknown);
    rapidjson::Document original;
    original.Parse(preempt_raw.c_str());
    const ClientResponse response = server.Post("/preempt", body);
    INFO("status " << response.status << " body " << response.body);
    CheckPreemptAnswer(original, response, {});
    rapidjson::Document answer;
    answer.Parse(response.body.c_str());
    // Nothing is bound: there are no victims anywhere.
    CHECK(answer["NodeNameToMetaVictims"].ObjectEmpty());
  }
  SECTION("bind with lowercase keys after a filter with lowercase keys") {
    const std::string filter_body =
        RewriteTopLevel(filter_raw, {{"Pod", "pod"}, {"NodeNames", "nodenames"}}, unknown);
    REQUIRE(server.Post("/filter", filter_body).status == 200);
    const std::string bind_raw = ReadFile(kFixtureDir + "/bind-nodecache-001.request.raw.json");
    const std::string bind_body = RewriteTopLevel(bind_raw,
                                                  {{"PodName", "podName"},
                                                   {"PodNamespace", "podnamespace"},
                                                   {"PodUID", "PODUID"},
                                                   {"Node", "node"}},
                                                  unknown);
    const ClientResponse response = server.Post("/bind", bind_body);
    INFO("status " << response.status << " body " << response.body);
    CHECK(BindError(response) == "");
  }
}

}  // namespace
}  // namespace extender_fixtures_test
