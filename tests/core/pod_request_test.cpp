// EffectivePodRequest: kube-scheduler's PodRequests (containers, init containers, restartable
// sidecars, overhead), docs/capacity-semantics.md#1-words.
#include "core/pod_request.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace capext {
namespace pod_request_test {
namespace {

ContainerRequests C(ResourceList requests) {
  return {std::move(requests), false};
}
ContainerRequests Sidecar(ResourceList requests) {
  return {std::move(requests), true};
}

struct RequestCase {
  std::string description;
  std::vector<ContainerRequests> containers;
  std::vector<ContainerRequests> init_containers;
  ResourceList overhead;
  ResourceList want;
};

TEST_CASE("EffectivePodRequest", "[pod_request]") {
  const std::vector<RequestCase> cases = {
      {"no containers", {}, {}, {}, {}},
      {"containers are summed",
       {C({{"cpu", 500}, {"memory", 100}}), C({{"cpu", 250}})},
       {},
       {},
       {{"cpu", 750}, {"memory", 100}}},
      {"an init container larger than the containers' sum wins per resource",
       {C({{"cpu", 500}, {"memory", 100}}), C({{"cpu", 500}, {"memory", 100}})},
       {C({{"cpu", 2000}, {"memory", 50}})},
       {},
       {{"cpu", 2000}, {"memory", 200}}},
      {"init containers run one at a time: the largest counts, not their sum",
       {C({{"cpu", 100}})},
       {C({{"cpu", 1000}}), C({{"cpu", 1500}})},
       {},
       {{"cpu", 1500}}},
      {"a restartable sidecar adds to the containers",
       {C({{"cpu", 1000}})},
       {Sidecar({{"cpu", 200}, {"memory", 64}})},
       {},
       {{"cpu", 1200}, {"memory", 64}}},
      {"an init container after a sidecar runs next to it",
       {C({{"cpu", 100}})},
       {Sidecar({{"cpu", 300}}), C({{"cpu", 1000}})},
       {},
       {{"cpu", 1300}}},
      {"an init container before a sidecar runs alone",
       {C({{"cpu", 100}})},
       {C({{"cpu", 1000}}), Sidecar({{"cpu", 300}})},
       {},
       {{"cpu", 1000}}},
      {"overhead is added last",
       {C({{"cpu", 100}})},
       {C({{"cpu", 1000}})},
       {{"cpu", 250}, {"memory", 128}},
       {{"cpu", 1250}, {"memory", 128}}},
      {"extended resources follow the same rules",
       {C({{"cpu", 1000}, {"nvidia.com/gpu", 1}}), C({{"nvidia.com/gpu", 1}})},
       {C({{"nvidia.com/gpu", 1}})},
       {},
       {{"cpu", 1000}, {"nvidia.com/gpu", 2}}},
      {"an init container asking for a GPU the containers do not",
       {C({{"cpu", 1000}})},
       {C({{"nvidia.com/gpu", 4}})},
       {},
       {{"cpu", 1000}, {"nvidia.com/gpu", 4}}},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    CHECK(EffectivePodRequest(c.containers, c.init_containers, c.overhead).ToString() ==
          c.want.ToString());
    CHECK(EffectivePodRequest(c.containers, c.init_containers, c.overhead) == c.want);
  }
}

}  // namespace
}  // namespace pod_request_test
}  // namespace capext
