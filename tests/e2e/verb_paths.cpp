// The verbs' side of the differential check: ExtenderService (embedded cache and binder) answering
// JSON bodies as kube-scheduler sends them, compared with core's verdicts (path_context.h).
#include <rapidjson/document.h>

#include <fmt/format.h>

#include "core/preemption.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/log.h"
#include "extender/verbs/extender_service.h"
#include "tests/e2e/path_context.h"

namespace capext::testing {
namespace {

constexpr int64_t kNowMs = 1'800'000'000'000;  // before every held room's expiry

// A binder whose bindings succeed at the API server but are not seen yet: the reservation /bind
// made holds the pod's room until the watch would confirm it (live mode between the two).
class UnconfirmedBinder final : public PodBinder {
 public:
  void Bind(const BindRequest&, BindDone done) override {
    done(BindOutcome{true, 201, "", /*applied=*/false});
  }
};

// A service over its own copy of the case's cluster.
struct ServiceUnderTest {
  explicit ServiceUnderTest(const PathContext& ctx, bool unconfirmed_binds = false)
      : cache(ctx.c.semantics, ctx.c.decode_options(), [] { return kNowMs; }),
        binder(&cache),
        service(&cache, &metrics, ctx.scoring, *ctx.victim_order,
                unconfirmed_binds ? static_cast<PodBinder*>(&unconfirmed) : &binder, {}) {
    cache.set_ready(true);
    cache.Write([&](ClusterState& s) {
      s = ctx.base;
      return 0;
    });
  }
  Metrics metrics;
  SchedulerCache cache;
  EmbeddedBinder binder;
  UnconfirmedBinder unconfirmed;
  ExtenderService service;
};

std::string Str(const rapidjson::Value& v) {
  return v.IsString() ? std::string(v.GetString(), v.GetStringLength()) : "<not a string>";
}

// The node objects kube-scheduler sends in full mode: without kind and apiVersion.
JsonTree NodeItem(const PathContext& ctx, const std::string& name) {
  for (const JsonTree* node : ctx.c.ObjectsOf("Node")) {
    if (node->Find("metadata")->Find("name")->str() != name) continue;
    JsonTree item = *node;
    item.Erase("apiVersion");
    item.Erase("kind");
    return item;
  }
  JsonTree ghost = JsonTree::Object();
  ghost["metadata"]["name"] = name;
  ghost["status"]["allocatable"]["cpu"] = "4";
  return ghost;
}

JsonTree NamesArray(const std::vector<std::string>& names) {
  JsonTree a = JsonTree::Array();
  for (const std::string& n : names)
    a.Push(n);
  return a;
}

std::string FilterBody(const PathContext& ctx, const std::vector<std::string>& names, bool full) {
  JsonTree nodes = JsonTree::Object();
  if (full) {
    nodes["metadata"] = JsonTree::Object();
    JsonTree& items = nodes["items"] = JsonTree::Array();
    for (const std::string& n : names)
      items.Push(NodeItem(ctx, n));
  }
  return fmt::format(R"({{"Pod":{},"Nodes":{},"NodeNames":{}}})", ctx.question_json,
                     full ? nodes.ToJson() : "null", full ? "null" : NamesArray(names).ToJson());
}

bool ParseBody(PathContext& ctx, const std::string& path, const http::Response& r,
               rapidjson::Document* doc) {
  doc->Parse(r.body.c_str());
  if (r.status != 200 || doc->HasParseError()) {
    ctx.Disagree(path, fmt::format("HTTP {}: {}", r.status, r.body));
    return false;
  }
  return true;
}

std::string BindBody(const Pod& pod, const std::string& node) {
  return fmt::format(R"({{"PodName":"{}","PodNamespace":"{}","PodUID":"{}","Node":"{}"}})",
                     pod.name, pod.ns, pod.uid, node);
}

// /filter in one mode against core's verdicts, node by node.
void CompareFilter(PathContext& ctx, ServiceUnderTest& sut, bool full) {
  const std::string path = full ? "filter/Nodes" : "filter/NodeNames";
  const std::string sent_body = FilterBody(ctx, ctx.names, full);
  std::string body = sent_body;  // parsed in place by the verb
  rapidjson::Document doc;
  if (!ParseBody(ctx, path, sut.service.Filter(body), &doc)) return;
  if (!doc.IsObject() || Str(doc["Error"]) != "") {
    ctx.Disagree(path, "Error set or not an object");
    return;
  }
  std::vector<std::string> passed;
  if (full) {
    if (!doc["NodeNames"].IsNull() || !doc["Nodes"].IsObject()) {
      ctx.Disagree(path, "full mode must answer Nodes.items and NodeNames null");
      return;
    }
    rapidjson::Document request;
    request.Parse(sent_body.c_str());
    const auto& sent = request["Nodes"]["items"];
    for (const auto& item : doc["Nodes"]["items"].GetArray()) {
      const std::string name = Str(item["metadata"]["name"]);
      passed.push_back(name);
      bool echoed = false;
      for (const auto& s : sent.GetArray())
        echoed = echoed || s == item;
      if (!echoed) ctx.Disagree(path, "node " + name + " is not echoed as sent");
    }
  } else {
    if (!doc["Nodes"].IsNull() || !doc["NodeNames"].IsArray()) {
      ctx.Disagree(path, "NodeNames mode must answer NodeNames and Nodes null");
      return;
    }
    for (const auto& n : doc["NodeNames"].GetArray())
      passed.push_back(Str(n));
  }
  // Passed nodes in request order, each node in exactly one place with core's reason.
  std::vector<std::string> expected_passed;
  for (const std::string& name : ctx.names) {
    const Status& v = ctx.verdict[name];
    if (v.ok()) expected_passed.push_back(name);
    const auto& failed = doc["FailedNodes"];
    const auto& unresolvable = doc["FailedAndUnresolvableNodes"];
    const bool in_failed = failed.IsObject() && failed.HasMember(name.c_str());
    const bool in_unresolvable = unresolvable.IsObject() && unresolvable.HasMember(name.c_str());
    std::string got = in_failed ? "unschedulable: " + Str(failed[name.c_str()]) : "";
    if (in_unresolvable) {
      got += (got.empty() ? "" : " AND ") + std::string("unschedulable-and-unresolvable: ") +
             Str(unresolvable[name.c_str()]);
    }
    if (got.empty()) got = "ok";
    if (got != DescribeStatus(v)) {
      ctx.Disagree(path, fmt::format("node {}: verb says [{}], core says [{}]", name, got,
                                     DescribeStatus(v)));
    }
  }
  if (passed != expected_passed) {
    ctx.Disagree(path, fmt::format("passed {} , core passes {} (request order)",
                                   fmt::join(passed, ","), fmt::join(expected_passed, ",")));
  }
}

// /prioritize: ScoreNode for known nodes, 0 for the others; remembered for filter + prioritize.
void ComparePrioritize(PathContext& ctx, ServiceUnderTest& sut) {
  std::string body = FilterBody(ctx, ctx.names, false);
  rapidjson::Document doc;
  if (!ParseBody(ctx, "prioritize", sut.service.Prioritize(body), &doc)) return;
  if (!doc.IsArray() || doc.Size() != ctx.names.size()) {
    ctx.Disagree("prioritize", "not one entry per node");
    return;
  }
  for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
    const std::string host = Str(doc[i]["Host"]);
    const int score = doc[i]["Score"].GetInt();
    ctx.scores[host] = score;
    const auto info = ctx.base.FindNode(host);
    const int expected = info ? ScoreNode(ctx.scoring, *ctx.pod, *info) : 0;
    if (host != ctx.names[i] || score != expected || score < 0 || score > kMaxNodeScore) {
      ctx.Disagree("prioritize",
                   fmt::format("{} scored {}, ScoreNode says {}", host, score, expected));
    }
  }
}

// /bind after /filter, on a fresh copy for every node: it succeeds exactly where /filter passed.
void CompareBind(PathContext& ctx) {
  const std::string key = StoreKeyOf(ctx.raw);
  for (const std::string& name : ctx.names) {
    ServiceUnderTest sut(ctx);
    std::string filter = FilterBody(ctx, {name}, false);
    (void)sut.service.Filter(filter);  // kube-scheduler filters before it binds
    std::string body = BindBody(ctx.raw, name);
    http::Response answer;
    sut.service.Bind(body, [&](http::Response r) { answer = std::move(r); });
    rapidjson::Document doc;
    if (!ParseBody(ctx, "bind", answer, &doc)) return;
    const std::string error = Str(doc["Error"]);
    const Status& v = ctx.verdict[name];
    const std::string expected = v.ok() ? "" : "capacity-extender: " + v.message();
    ctx.Count(error.empty() ? "bind: bound" : "bind: refused");
    if (error != expected) {
      ctx.Disagree("bind", fmt::format("node {}: bind says \"{}\", /filter says [{}]", name, error,
                                       DescribeStatus(v)));
      continue;
    }
    if (v.ok()) {
      const std::string bound_to = sut.cache.Read([&](const ClusterState& s) {
        const NormalizedPod* p = s.FindPod(key);
        return p == nullptr ? std::string("<gone>") : p->node_name;
      });
      if (bound_to != name) {
        ctx.Disagree("bind",
                     fmt::format("answered ok for {} but the pod is on [{}]", name, bound_to));
      }
    }
  }
}

std::string DescribeCandidates(const std::vector<NodeVictims>& candidates) {
  std::string out;
  for (const NodeVictims& c : candidates) {
    std::vector<std::string> uids;
    for (const NormalizedPod* v : c.victims)
      uids.push_back(v->uid);
    out += fmt::format("{}:[{}] pdb {}; ", c.node, fmt::join(uids, ","), c.pdb_violations);
  }
  return out.empty() ? "none" : out;
}

// /preempt for a few proposed nodes (both request shapes) against FindPreemption on them.
void ComparePreempt(PathContext& ctx, ServiceUnderTest& sut) {
  std::vector<std::string> proposed;
  for (const std::string& name : ctx.names) {
    if (ctx.Draw("preempt " + name) % 3 != 0) proposed.push_back(name);
  }
  if (proposed.empty()) proposed = ctx.names;
  const bool full = ctx.Draw(7) % 2 == 0;
  JsonTree victims = JsonTree::Object();
  for (const std::string& name : proposed) {
    JsonTree& entry = victims[name];
    entry["NumPDBViolations"] = 0;
    JsonTree& pods = entry["Pods"] = JsonTree::Array();
    // What kube-scheduler proposed (ignored: we choose): one pod bound there, if any.
    for (const JsonTree* pod : ctx.c.ObjectsOf("Pod")) {
      const JsonTree* node = pod->Find("spec")->Find("nodeName");
      if (node == nullptr || node->str() != name) continue;
      if (full) {
        pods.Push(*pod);
      } else {
        JsonTree meta = JsonTree::Object();
        const JsonTree* uid = pod->Find("metadata")->Find("uid");
        meta["UID"] = uid != nullptr ? uid->str() : "";
        pods.Push(std::move(meta));
      }
      break;
    }
  }
  std::string body = fmt::format(
      R"({{"Pod":{},"NodeNameToVictims":{},"NodeNameToMetaVictims":{}}})", ctx.question_json,
      full ? victims.ToJson() : "null", full ? "null" : victims.ToJson());
  rapidjson::Document doc;
  if (!ParseBody(ctx, "preempt", sut.service.Preempt(body), &doc)) return;
  std::string got;
  if (doc.IsObject() && doc.HasMember("NodeNameToMetaVictims") &&
      doc["NodeNameToMetaVictims"].IsObject()) {
    for (const auto& m : doc["NodeNameToMetaVictims"].GetObject()) {
      std::vector<std::string> uids;
      for (const auto& p : m.value["Pods"].GetArray())
        uids.push_back(Str(p["UID"]));
      got += fmt::format("{}:[{}] pdb {}; ", m.name.GetString(), fmt::join(uids, ","),
                         m.value["NumPDBViolations"].GetInt64());
    }
  }
  if (got.empty()) got = "none";
  std::string expected = "none";
  if (ctx.base.FindOurNomination(ctx.pod->store_key()) == nullptr) {
    const PreemptionPlan plan = FindPreemption(ctx.base, *ctx.pod, *ctx.victim_order, proposed);
    expected = DescribeCandidates(plan.candidates);
  }
  if (expected != "none") ctx.Count("preempt: candidates answered");
  if (got != expected) {
    ctx.Disagree("preempt",
                 fmt::format("proposed {} ({} shape): verb says {}, core says {}",
                             fmt::join(proposed, ","), full ? "full" : "meta", got, expected));
  }
}

}  // namespace

void CompareAfterBind(PathContext& ctx) {
  std::string node;
  for (const std::string& name : ctx.state_nodes) {
    if (ctx.verdict[name].ok()) {
      node = name;
      break;
    }
  }
  if (node.empty()) return;
  ConfigureLog("logfmt", "error");
  ServiceUnderTest sut(ctx, /*unconfirmed_binds=*/true);
  std::string filter = FilterBody(ctx, {node}, false);
  (void)sut.service.Filter(filter);
  std::string body = BindBody(ctx.raw, node);
  http::Response answer;
  sut.service.Bind(body, [&](http::Response r) { answer = std::move(r); });
  ConfigureLog("logfmt", "info");
  rapidjson::Document doc;
  if (!ParseBody(ctx, "after /bind: bind", answer, &doc)) return;
  const std::string key = StoreKeyOf(ctx.raw);
  const bool reserved = sut.cache.Read([&](const ClusterState& s) {
    const Reservation* r = s.FindReservation(key);
    return r != nullptr && r->node == node;
  });
  if (Str(doc["Error"]) != "" || !reserved) {
    ctx.Disagree("after /bind: bind",
                 fmt::format("bind to {} answered \"{}\", reservation held: {}", node,
                             Str(doc["Error"]), reserved));
    return;
  }
  ctx.Count("after /bind: asked again with the reservation held");
  // The next pod of the same kind (a Deployment's next replica).
  JsonTree twin = ctx.question;
  twin["metadata"]["name"] = ctx.raw.name + "-twin";
  if (!ctx.raw.uid.empty()) twin["metadata"]["uid"] = ctx.raw.uid + "-twin";
  PathContext next(ctx.c, twin, ctx.seed ^ 0x5bd1e995, ctx.tally);
  next.base = sut.cache.Read([](const ClusterState& s) { return ClusterState(s); });
  RunPaths(next);
  for (Disagreement& d : next.out) {
    ctx.Disagree("after /bind: " + d.path,
                 fmt::format("{} bound to {} first (reservation held), then {} asked: {}",
                             ctx.raw.Key(), node, ObjectName(twin), d.detail));
  }
}

void CompareVerbPaths(PathContext& ctx) {
  // Thousands of verb calls: only errors reach the test output.
  ConfigureLog("logfmt", "error");
  ServiceUnderTest sut(ctx);
  CompareFilter(ctx, sut, false);
  CompareFilter(ctx, sut, true);
  ComparePrioritize(ctx, sut);
  ComparePreempt(ctx, sut);
  CompareBind(ctx);
  ConfigureLog("logfmt", "info");
}

}  // namespace capext::testing
