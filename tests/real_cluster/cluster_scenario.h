// A scenario file (docs/scenarios.md) played on a real cluster: the same objects, events and
// expectations that `capacity-sim scenario` plays through the core, here sent to a real
// kube-apiserver, with a real kube-scheduler calling the real extender. What differs, and why
// (docs/scenarios.md#on-a-real-cluster):
//   * Nodes become fake nodes (RealControlPlane::CreateFakeNodes): allocatable from the file,
//     labels and taints kept. Namespaces are created for every quota and pod.
//   * Pods lose uid and creationTimestamp (the API server assigns them: creation order is event
//     order) and get terminationGracePeriodSeconds 0 unless they set it: with no kubelet, an
//     evicted pod with a grace period would stay terminating for ever.
//   * A bound pod is marked Running, as its kubelet would.
//   * After an event, its expectations are polled until they hold or a timeout passes (there is
//     no "until nothing changes" on a real cluster); when they name evicted or untouched pods,
//     they are checked again two seconds later, so that a wrong eviction after the right one is
//     caught. An event without expectations waits until kube-scheduler has looked at the pod it
//     created (bound, or PodScheduled=False).
//   * `pending: {pod: text}` holds when the pod is unbound and an Event about it (kube-scheduler's
//     FailedScheduling or the extender's own) contains the text.
//   * `advance` sleeps for the duration (at most 30 s); longer ones are refused.
// Thread-safety: none.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "tests/support/real_control_plane.h"

namespace capext::test {

struct ClusterScenario {
  struct Event {
    enum class Kind { kCreate, kDelete, kAdvance };
    Kind kind = Kind::kCreate;
    std::string pod_json;  // kCreate: the pod to POST
    std::string key;       // kCreate, kDelete: namespace/name
    std::chrono::milliseconds advance{0};
  };
  struct Expectation {
    std::map<std::string, std::string> bound;    // pod key -> node
    std::vector<std::string> evicted;            // pod keys
    std::vector<std::string> untouched;          // pod keys
    std::map<std::string, std::string> pending;  // pod key -> text an Event must contain
  };

  std::string name;
  std::string quota_semantics = "capacity-extender";  // for the extender's --quota-semantics
  std::string scoring = "least-allocated";            // for the extender's --scoring
  std::vector<FakeNode> nodes;
  std::vector<std::string> namespaces;
  std::vector<std::string> objects_json;     // everything else of `cluster` but pods, for kubectl
  std::vector<std::string> bound_pods_json;  // pods of `cluster` (with spec.nodeName)
  std::vector<Event> events;
  std::map<int, Expectation> expect;
};

// One line per expectation, as `capacity-sim scenario` prints them.
struct ScenarioResult {
  bool passed = false;
  std::string line;  // "PASS <name> event <i> (<what>): <checks>" or "FAIL ... -- <problems>"
};

Status LoadClusterScenario(const std::string& path, ClusterScenario* out);

// Creates the scenario's nodes, namespaces, objects and bound pods. REQUIRES: the ElasticQuota
// CRD is installed (RealControlPlane::InstallExtenderRbac).
Status CreateScenarioCluster(const ClusterScenario& scenario, RealControlPlane* cluster);

// Plays the events in order, checking each event's expectations (each waited for at most
// `timeout`). REQUIRES: kube-scheduler and the extender are running.
std::vector<ScenarioResult> PlayScenarioEvents(const ClusterScenario& scenario,
                                               RealControlPlane* cluster,
                                               std::chrono::milliseconds timeout);

}  // namespace capext::test
