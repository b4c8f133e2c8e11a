// libFuzzer target: the pod-gating webhook (POST /mutate): any body is answered with a review
// or an error Status, never a crash. A gated answer always carries a patch; admission at creation
// is asked (it admits pods of namespaces starting with "qa", the rest it gates), so the review's
// pod is decoded too, and an admitted answer carries the admitted-at annotation.
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
  options.admit_at_creation = [](capext::Pod pod) {
    using V = capext::CreationAdmission::Verdict;
    if (pod.ns.rfind("qa", 0) == 0)
      return capext::CreationAdmission{V::kAdmit, 1000, "1970-01-01T00:00:01.000Z", ""};
    return capext::CreationAdmission{V::kGate, 0, "", "the quota does not admit it"};
  };
  std::string response;
  capext::PodMutationDecision decision;
  const capext::Status s = capext::ReviewPodMutation(body, options, &response, &decision);
  if (s.ok() && (response.empty() || (decision.gated && decision.patch.empty()))) std::abort();
  if (s.ok() && decision.admitted && decision.patch.find("admitted-at") == std::string::npos)
    std::abort();
  return 0;
}
