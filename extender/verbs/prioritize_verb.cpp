// POST /prioritize: decode ExtenderArgs, score each node with core's ScoreNode under the
// configured scoring policy, encode a bare HostPriorityList (scores 0..10). Nodes our cache does
// not know score 0.
#include "core/node_score.h"
#include "extender/verbs/extender_service.h"
#include "extender/wire/verb_results.h"

namespace capext {

http::Response ExtenderService::Prioritize(std::string& body) {
  rapidjson::Document doc;
  ExtenderArgs args;
  if (Status s = ParseExtenderArgs(body, cache_->decode_options(), &doc, &args); !s.ok())
    return BadRequest("prioritize", s);
  std::vector<int> scores(args.node_names.size(), 0);
  cache_->Read([&](const ClusterState& state) {
    const DecisionPod pod(state, args.pod);
    for (std::size_t i = 0; i < args.node_names.size(); ++i) {
      if (auto info = state.FindNode(args.node_names[i]))
        scores[i] = ScoreNode(scoring_, *pod, *info);
    }
  });
  metrics_->CountDecision("prioritize", "scored");
  return {200, "application/json", EncodeHostPriorityList(args.node_names, scores), {}};
}

}  // namespace capext
