// POST /prioritize: a bare HostPriorityList, scores 0..10 from the configured scoring policy.
// Nodes our cache does not know score 0.
#include "extender/verbs/extender_service.h"

namespace capext {

http::Response ExtenderService::Prioritize(std::string& body) {
  rapidjson::Document doc;
  ExtenderArgs args;
  Status s = ParseExtenderArgs(body, cache_->decode_options(), &doc, &args);
  if (!s.ok()) return {400, "application/json", ErrorJson("prioritize: " + s.message()), {}};

  std::vector<int> scores(args.node_names.size(), 0);
  cache_->Read([&](const ClusterState& state) {
    for (std::size_t i = 0; i < args.node_names.size(); ++i) {
      if (auto info = state.FindNode(args.node_names[i])) {
        scores[i] = std::clamp(scorer_->Score(args.pod, *info), 0, kMaxNodeScore);
      }
    }
    return 0;
  });
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartArray();
  for (std::size_t i = 0; i < args.node_names.size(); ++i) {
    w.StartObject();
    w.Key("Host");
    w.String(args.node_names[i].data(),
             static_cast<rapidjson::SizeType>(args.node_names[i].size()));
    w.Key("Score");
    w.Int(scores[i]);
    w.EndObject();
  }
  w.EndArray();
  metrics_->CountDecision("prioritize", "scored");
  return {200, "application/json", std::string(buffer.GetString(), buffer.GetSize()), {}};
}

}  // namespace capext
