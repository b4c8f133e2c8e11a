// POST /filter: the quota check of 1.1 once per pod, then the per-node checks that differ by
// node (core node fit against our cache, which adds nominations and reservations kube-scheduler
// does not know about). Nodes our cache does not know pass: kube-scheduler already vetted them.
#include <fmt/format.h>

#include "core/node_fit.h"
#include "core/quota_admission.h"
#include "extender/extender_service.h"
#include "extender/log.h"

namespace capext {
namespace {

struct NodeVerdict {
  FitCode code = FitCode::kPass;
  std::string reason;
};

void WriteReasonMap(JsonWriter& w, const char* key, const std::vector<std::string>& names,
                    const std::vector<NodeVerdict>& verdicts, FitCode code) {
  w.Key(key);
  w.StartObject();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (verdicts[i].code != code) continue;
    w.Key(names[i].c_str(), static_cast<rapidjson::SizeType>(names[i].size()));
    w.String(verdicts[i].reason.c_str(),
             static_cast<rapidjson::SizeType>(verdicts[i].reason.size()));
  }
  w.EndObject();
}

}  // namespace

http::Response ExtenderService::Filter(std::string& body) {
  rapidjson::Document doc;
  ExtenderArgs args;
  Status s = ParseRequestBody(body, &doc);
  if (s.ok()) s = DecodeExtenderArgs(doc, cache_->decode_options(), &args);
  if (!s.ok()) return {400, "application/json", ErrorJson("filter: " + s.message()), {}};

  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  if (!cache_->ready() && !options_.ignore_not_ready) {
    metrics_->CountDecision("filter", "not-ready");
    w.StartObject();
    w.Key("NodeNames"), w.Null();
    w.Key("Nodes"), w.Null();
    w.Key("FailedNodes"), w.StartObject(), w.EndObject();
    w.Key("FailedAndUnresolvableNodes"), w.StartObject(), w.EndObject();
    w.Key("Error"), w.String("capacity-extender: cluster cache not synced yet");
    w.EndObject();
    return {200, "application/json", std::string(buffer.GetString(), buffer.GetSize()), {}};
  }
  LearnPod(args.pod);

  std::vector<NodeVerdict> verdicts(args.node_names.size());
  AdmissionResult quota = cache_->Read([&](const ClusterState& state) {
    const Pod& pod = args.pod;
    AdmissionResult result = CheckQuota(state, pod);
    if (!result.ok()) return result;
    for (std::size_t i = 0; i < args.node_names.size(); ++i) {
      auto info = state.FindNode(args.node_names[i]);
      if (!info) continue;
      NodeFitResult fit = CheckNodeFit(state, pod, *info);
      if (!fit.ok()) verdicts[i] = {fit.code, fit.Reason()};
    }
    return result;
  });
  if (!quota.ok()) {
    for (auto& v : verdicts)
      v = {quota.code, quota.reason};
  }

  int passed = 0;
  w.StartObject();
  if (args.node_names_mode || args.node_items == nullptr) {
    w.Key("NodeNames");
    w.StartArray();
    for (std::size_t i = 0; i < args.node_names.size(); ++i) {
      if (verdicts[i].code != FitCode::kPass) continue;
      ++passed;
      w.String(args.node_names[i].c_str(),
               static_cast<rapidjson::SizeType>(args.node_names[i].size()));
    }
    w.EndArray();
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
      if (verdicts[i].code != FitCode::kPass) continue;
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
  return {200, "application/json", std::string(buffer.GetString(), buffer.GetSize()), {}};
}

}  // namespace capext
