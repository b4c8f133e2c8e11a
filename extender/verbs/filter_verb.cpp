// POST /filter: the quota check of 1.1 once per pod, then the per-node checks that differ by
// node (core node fit against our cache, which adds nominations and reservations kube-scheduler
// does not know about). Nodes our cache does not know pass: kube-scheduler already vetted them.
//
// Cost: one hash lookup and a few comparisons per node (NodeFitScreen); only nodes with taints,
// nominations, too little room, or a pod with selectors/unusual resources get the full node fit.
// A quota rejection touches no node at all. The answer is written straight into the response
// body; the names passing through are copied, not re-escaped.
#include <fmt/format.h>

#include "core/node_fit.h"
#include "core/quota_admission.h"
#include "extender/verbs/extender_service.h"
#include "extender/wire/json_out.h"
#include "extender/log.h"

namespace capext {
namespace {

// Per node: passed, or failed with a reason (an index into the reasons rendered once).
struct NodeVerdicts {
  std::vector<uint8_t> code;          // FitCode per node, in request order
  std::vector<uint32_t> reason;       // index into `rendered`, for failed nodes
  std::vector<std::string> rendered;  // distinct reasons, rendered as JSON strings

  explicit NodeVerdicts(std::size_t n) : code(n, static_cast<uint8_t>(FitCode::kPass)) {}

  void Fail(std::size_t i, FitCode c, const std::string& why) {
    if (reason.empty()) reason.resize(code.size());
    code[i] = static_cast<uint8_t>(c);
    std::string json = RenderString(why);
    for (std::size_t k = 0; k < rendered.size(); ++k) {
      if (rendered[k] == json) {
        reason[i] = static_cast<uint32_t>(k);
        return;
      }
    }
    reason[i] = static_cast<uint32_t>(rendered.size());
    rendered.push_back(std::move(json));
  }
  void FailAll(FitCode c, const std::string& why) {
    rendered.assign(1, RenderString(why));
    code.assign(code.size(), static_cast<uint8_t>(c));
    reason.assign(code.size(), 0);
  }
  bool Passed(std::size_t i) const { return code[i] == static_cast<uint8_t>(FitCode::kPass); }
};

void WriteReasonMap(JsonOut& w, const char* key, const std::vector<std::string_view>& names,
                    const NodeVerdicts& verdicts, FitCode code) {
  w.Key(key);
  w.StartObject();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (verdicts.code[i] != static_cast<uint8_t>(code)) continue;
    w.KeyText(names[i]);
    w.RenderedString(verdicts.rendered[verdicts.reason[i]]);
  }
  w.EndObject();
}

}  // namespace

http::Response ExtenderService::Filter(std::string& body) {
  rapidjson::Document doc;
  ExtenderArgs args;
  Status s = ParseExtenderArgs(body, cache_->decode_options(), &doc, &args);
  if (!s.ok()) return {400, "application/json", ErrorJson("filter: " + s.message()), {}};

  JsonOut w;
  if (!cache_->ready() && !options_.ignore_not_ready) {
    metrics_->CountDecision("filter", "not-ready");
    w.StartObject();
    w.Key("NodeNames"), w.Null();
    w.Key("Nodes"), w.Null();
    w.Key("FailedNodes"), w.StartObject(), w.EndObject();
    w.Key("FailedAndUnresolvableNodes"), w.StartObject(), w.EndObject();
    w.Key("Error"), w.String("capacity-extender: cluster cache not synced yet");
    w.EndObject();
    return {200, "application/json", w.Take(), {}};
  }
  LearnPod(args.pod);

  NodeVerdicts verdicts(args.node_names.size());
  AdmissionResult quota = cache_->Read([&](const ClusterState& state) {
    const Pod& pod = args.pod;
    AdmissionResult result = CheckQuota(state, pod);
    if (!result.ok()) return result;
    const NodeFitScreen screen(state, pod);
    for (std::size_t i = 0; i < args.node_names.size(); ++i) {
      const NodeRecord* record = state.FindNodeRecord(args.node_names[i]);
      if (record == nullptr || record->node == nullptr || screen.Fits(*record)) continue;
      NodeFitResult fit = screen.Check(*record);
      if (!fit.ok()) verdicts.Fail(i, fit.code, fit.Reason());
    }
    return result;
  });
  if (!quota.ok()) verdicts.FailAll(quota.code, quota.reason);

  // The answer's size, nearly: every name once, plus a reason for the failed ones.
  std::size_t estimate = 256;
  for (std::size_t i = 0; i < args.node_names.size(); ++i) {
    estimate += args.node_names[i].size() + 4;
    if (!verdicts.Passed(i)) estimate += verdicts.rendered[verdicts.reason[i]].size() + 1;
  }
  w.Reserve(estimate);

  int passed = 0;
  w.StartObject();
  if (args.node_names_mode || args.node_items == nullptr) {
    w.Key("NodeNames");
    w.TextArray(args.node_names, [&](std::size_t i) { return verdicts.Passed(i) && ++passed; });
    w.Key("Nodes");
    w.Null();
  } else {
    w.Key("NodeNames");
    w.Null();
    w.Key("Nodes");
    w.StartObject();
    w.Key("metadata");
    w.StartObject();
    w.EndObject();
    w.Key("items");
    w.StartArray();
    for (std::size_t i = 0; i < args.node_names.size(); ++i) {
      if (!verdicts.Passed(i)) continue;
      ++passed;
      if (!WriteBounded((*args.node_items)[static_cast<rapidjson::SizeType>(i)], &w)) {
        return {400, "application/json", ErrorJson("filter: Nodes.items nest too deeply"), {}};
      }
    }
    w.EndArray();
    w.EndObject();
  }
  WriteReasonMap(w, "FailedNodes", args.node_names, verdicts, FitCode::kUnschedulable);
  WriteReasonMap(w, "FailedAndUnresolvableNodes", args.node_names, verdicts,
                 FitCode::kUnschedulableAndUnresolvable);
  w.Key("Error");
  w.String("");
  w.EndObject();

  const char* outcome = !quota.ok() ? "quota-rejected" : passed == 0 ? "no-node-fits" : "pass";
  metrics_->CountDecision("filter", outcome);
  if (!quota.ok() && LogEnabled(LogLevel::kInfo)) {
    Log(LogLevel::kInfo, "filter rejected pod",
        {{"pod", args.pod.Key()}, {"outcome", outcome}, {"reason", quota.reason}});
  }
  return {200, "application/json", w.Take(), {}};
}

}  // namespace capext
