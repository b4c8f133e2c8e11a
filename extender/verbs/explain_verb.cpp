// POST /explain: a Pod (JSON) in, the explanation JSON out.
#include "extender/explain.h"
#include "extender/verbs/extender_service.h"

namespace capext {

http::Response ExtenderService::Explain(std::string& body) {
  rapidjson::Document doc;
  Status s = ParseRequestBody(body, &doc);
  Pod pod;
  if (s.ok()) s = DecodePod(doc, cache_->decode_options(), &pod);
  if (!s.ok()) return {400, "application/json", ErrorJson("explain: " + s.message()), {}};
  std::string json = cache_->Read([&](const ClusterState& state) {
    const Pod* known = state.FindPod(CacheKey(pod));
    return ExplainPodJson(state, known ? *known : pod, order_->AsFunction());
  });
  return {200, "application/json", std::move(json), {}};
}

}  // namespace capext
