// POST /preempt (capacity-semantics 3): per proposed node, the victims of 1.2 computed on our
// state of that node (any pod bound there may be named); nodes where 1.2 finds none are dropped;
// always answered as NodeNameToMetaVictims. A pod our reclaim controller already serves gets no
// candidates, so the two never preempt twice for one pod.
// The answer is written while the state is read (victims are pods of the state), straight into
// the response body.
#include <fmt/format.h>

#include "core/preemption.h"
#include "extender/verbs/extender_service.h"
#include "extender/wire/json_out.h"
#include "extender/log.h"

namespace capext {

http::Response ExtenderService::Preempt(std::string& body) {
  rapidjson::Document doc;
  ExtenderPreemptionArgs args;
  Status s = ParseRequestBody(body, &doc);
  if (s.ok()) s = DecodeExtenderPreemptionArgs(doc, cache_->decode_options(), &args);
  if (!s.ok()) return {400, "application/json", ErrorJson("preempt: " + s.message()), {}};
  LearnPod(args.pod);

  std::string skipped;
  std::size_t candidates = 0;
  JsonOut w;
  w.StartObject();
  w.Key("NodeNameToMetaVictims");
  w.StartObject();
  cache_->Read([&](const ClusterState& state) {
    const Pod* pod = state.FindPod(CacheKey(args.pod));
    if (pod == nullptr) pod = &args.pod;
    if (state.FindOurNomination(CacheKey(*pod)) != nullptr) {
      skipped = "reclaim already serves this pod";
      return;
    }
    PreemptorContext ctx = MakePreemptorContext(state, *pod);
    if (!EligibleToPreempt(state, ctx, &skipped)) return;
    const MoreImportantFn more_important = order_->AsFunction();
    for (const std::string_view name : args.node_names) {
      auto info = state.FindNode(name);
      if (!info) continue;
      NodeVictims v = SelectVictimsOnNode(state, ctx, *info, more_important);
      if (!v.candidate) continue;
      ++candidates;
      w.KeyText(name);
      w.StartObject();
      w.Key("Pods");
      w.StartArray();
      for (const Pod* victim : v.victims) {
        w.StartObject();
        w.Key("UID");
        w.Text(victim->uid);
        w.EndObject();
      }
      w.EndArray();
      w.Key("NumPDBViolations");
      w.Int(v.pdb_violations);
      w.EndObject();
    }
  });
  w.EndObject();
  w.EndObject();
  metrics_->CountDecision("preempt", candidates == 0 ? "no-candidate" : "victims");
  Log(LogLevel::kInfo, "preempt",
      {{"pod", args.pod.Key()},
       {"proposed", std::to_string(args.node_names.size())},
       {"candidates", std::to_string(candidates)},
       {"note", skipped}});
  return {200, "application/json", w.Take(), {}};
}

}  // namespace capext
