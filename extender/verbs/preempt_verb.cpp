// POST /preempt
// (docs/capacity-semantics.md#7-what-kube-scheduler-will-and-will-not-do-for-an-extender): decode
// the proposed nodes, ask core's FindPreemption on exactly those nodes (victim selection per node
// on our state of it: any pod bound there may be named; nodes where it finds none are dropped),
// encode NodeNameToMetaVictims for every candidate — kube-scheduler makes the choice among them. A
// pod our reclaim controller already serves gets no candidates, so the two never preempt twice for
// one pod.
#include "core/preemption.h"
#include "extender/log.h"
#include "extender/verbs/extender_service.h"
#include "extender/wire/verb_results.h"

namespace capext {

http::Response ExtenderService::Preempt(std::string& body) {
  rapidjson::Document doc;
  ExtenderPreemptionArgs args;
  Status s = ParseRequestBody(body, &doc);
  if (s.ok()) s = DecodeExtenderPreemptionArgs(doc, cache_->decode_options(), &args);
  if (!s.ok()) return BadRequest("preempt", s);
  LearnPod(args.pod);

  std::string note;
  std::size_t candidates = 0;
  std::string answer = cache_->Read([&](const ClusterState& state) {
    const DecisionPod pod(state, args.pod);
    if (args.node_names.empty()) return EncodePreemptionResult({});
    if (state.FindOurNomination(pod->store_key()) != nullptr) {
      note = "reclaim already serves this pod";
      return EncodePreemptionResult({});
    }
    const std::vector<std::string> proposed(args.node_names.begin(), args.node_names.end());
    const PreemptionPlan plan = FindPreemption(state, *pod, victim_order_, proposed);
    note = plan.why.message();
    candidates = plan.candidates.size();
    // Victims are pods of the state: encoded while the state is still read.
    return EncodePreemptionResult(plan.candidates);
  });
  metrics_->CountDecision("preempt", candidates == 0 ? "no-candidate" : "victims");
  Log(LogLevel::kInfo, "preempt",
      {{"pod", args.pod.Key()},
       {"proposed", std::to_string(args.node_names.size())},
       {"candidates", std::to_string(candidates)},
       {"note", note}});
  return {200, "application/json", std::move(answer), {}};
}

}  // namespace capext
