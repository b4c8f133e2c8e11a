// POST /explain: a Pod (JSON) in, the explanation JSON out.
#include "extender/explain.h"
#include "extender/verbs/extender_service.h"

namespace capext {

http::Response ExtenderService::Explain(std::string& body) {
  rapidjson::Document doc;
  Status s = ParseRequestBody(body, &doc);
  Pod pod;
  if (s.ok()) s = DecodePod(doc, cache_->decode_options(), &pod);
  if (!s.ok()) return BadRequest("explain", s);
  FairReclaimOptions fair = options_.fair_reclaim;
  fair.now_ms = cache_->NowMs();
  std::string json = cache_->Read([&](const ClusterState& state) {
    // The cache's copy when it knows the pod (bound or not), else the request's, normalised.
    if (const NormalizedPod* known = state.FindPod(StoreKeyOf(pod)))
      return ExplainPodJson(state, *known, victim_order_, fair);
    return ExplainPodJson(state, state.Normalize(pod), victim_order_, fair);
  });
  return {200, "application/json", std::move(json), {}};
}

}  // namespace capext
