// ExtenderFilterResult, written straight into the response body: the nodes that passed (echoed
// back as NodeNames, or as Nodes.items in full-node mode), FailedNodes and
// FailedAndUnresolvableNodes with one reason per failed node, and Error. Distinct reasons are
// rendered once (kube-scheduler sends hundreds of nodes; most fail for the same reason).
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "extender/wire/extender_wire.h"

namespace capext {

class FilterVerdicts {
 public:
  explicit FilterVerdicts(std::size_t nodes) : code_(nodes, StatusCode::kOk) {}

  // Node i fails with `verdict`. REQUIRES: verdict is unschedulable (either code).
  void Fail(std::size_t i, const Status& verdict);
  // Every node fails with `verdict` (the quota rejected the pod).
  void FailAll(const Status& verdict);
  bool Passed(std::size_t i) const { return code_[i] == StatusCode::kOk; }
  std::size_t passed() const;

  // The whole answer; Invalid when a node object of a full-mode request nests too deeply to be
  // echoed.
  StatusOr<std::string> Encode(const ExtenderArgs& args) const;

 private:
  std::vector<StatusCode> code_;       // per node, in request order
  std::vector<uint32_t> reason_;       // index into rendered_, for failed nodes
  std::vector<std::string> rendered_;  // distinct reasons, rendered as JSON strings
};

// The answer while /filter may not decide (the cluster cache not synced yet, no ElasticQuota API
// served): no node, and Error "capacity-extender: <reason>" (kube-scheduler then fails the pod's
// scheduling cycle and retries it).
std::string EncodeFilterNotReady(std::string_view reason);

}  // namespace capext
