// libFuzzer target: the pod-gating webhook (POST /mutate): any body is answered with a review
// or an error Status, never a crash. A gated answer always carries a patch.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/pod_mutation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  capext::PodMutationOptions options;
  options.scheduler_names = {"default-scheduler", "capacity-scheduler"};
  options.governed = [](std::string_view ns) { return !ns.empty() && ns.front() == 'q'; };
  std::string response;
  capext::PodMutationDecision decision;
  const capext::Status s = capext::ReviewPodMutation(body, options, &response, &decision);
  if (s.ok() && (response.empty() || (decision.gated && decision.patch.empty()))) std::abort();
  return 0;
}
