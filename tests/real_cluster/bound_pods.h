// How many pods of a namespace have a node, asked of a real API server: the real-cluster tests'
// measure of "running" (there is no kubelet, so a bound pod is as far as a pod gets).
#pragma once

#include <string>

#include "tests/support/real_control_plane.h"

namespace capext::test {

// Pods of `ns` with spec.nodeName set; -1 when the API server does not answer.
inline int BoundPods(RealControlPlane& cluster, const std::string& ns) {
  const kube::RestResponse r = cluster.api().Get("/api/v1/namespaces/" + ns + "/pods");
  if (!r.ok()) return -1;
  int bound = 0;
  for (std::size_t at = r.body.find("\"nodeName\":\""); at != std::string::npos;
       at = r.body.find("\"nodeName\":\"", at + 1))
    ++bound;
  return bound;
}

}  // namespace capext::test
