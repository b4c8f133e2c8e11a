#include "core/node_fit.h"

#include <algorithm>
#include <charconv>

#include "core/reasons.h"

namespace capext {
namespace {

bool ParseInt(std::string_view text, int64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool RequirementMatches(const NodeSelectorRequirement& req, bool has, std::string_view value) {
  auto in_values = [&] {
    return std::find(req.values.begin(), req.values.end(), value) != req.values.end();
  };
  if (req.op == "In") return has && in_values();
  if (req.op == "NotIn") return !has || !in_values();
  if (req.op == "Exists") return has;
  if (req.op == "DoesNotExist") return !has;
  if (req.op == "Gt" || req.op == "Lt") {
    int64_t label = 0;
    int64_t bound = 0;
    if (!has || req.values.size() != 1 || !ParseInt(value, &label) ||
        !ParseInt(req.values[0], &bound)) {
      return false;
    }
    return req.op == "Gt" ? label > bound : label < bound;
  }
  return false;
}

bool TermMatches(const NodeSelectorTerm& term, const Node& node) {
  // A term with no requirements matches nothing (as in Kubernetes).
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& req : term.match_expressions) {
    auto it = node.labels.find(req.key);
    const bool has = it != node.labels.end();
    if (!RequirementMatches(req, has, has ? it->second : std::string_view())) return false;
  }
  for (const auto& req : term.match_fields) {
    if (req.key != "metadata.name") return false;
    if (!RequirementMatches(req, true, node.name)) return false;
  }
  return true;
}

void Fail(NodeFitResult* result, FitCode code, std::string reason) {
  if (result->code != FitCode::kUnschedulableAndUnresolvable) result->code = code;
  result->reasons.push_back(std::move(reason));
}

}  // namespace

std::string NodeFitResult::Reason() const {
  std::string out;
  for (const auto& r : reasons) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out;
}

bool ToleratesTaint(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.op.empty() || toleration.op == "Equal") return toleration.value == taint.value;
  return toleration.op == "Exists";
}

NodeFitResult CheckNodeStatic(const Pod& pod, const Node& node) {
  NodeFitResult result;
  if (node.unschedulable) {
    // kube-scheduler lets a pod tolerating node.kubernetes.io/unschedulable:NoSchedule through.
    Taint unschedulable{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
    bool tolerated =
        std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                    [&](const Toleration& t) { return ToleratesTaint(t, unschedulable); });
    if (!tolerated) {
      Fail(&result, FitCode::kUnschedulableAndUnresolvable,
           std::string(reasons::kNodeUnschedulable));
    }
  }
  for (const auto& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool tolerated = std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                                 [&](const Toleration& t) { return ToleratesTaint(t, taint); });
    if (!tolerated) {
      Fail(&result, FitCode::kUnschedulableAndUnresolvable,
           reasons::UntoleratedTaint(taint.key, taint.value));
      break;  // kube-scheduler reports the first untolerated taint
    }
  }
  bool selector_ok = true;
  for (const auto& [key, value] : pod.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) {
      selector_ok = false;
      break;
    }
  }
  if (selector_ok && !pod.required_affinity.empty()) {
    selector_ok = std::any_of(pod.required_affinity.begin(), pod.required_affinity.end(),
                              [&](const NodeSelectorTerm& t) { return TermMatches(t, node); });
  }
  if (!selector_ok) {
    Fail(&result, FitCode::kUnschedulableAndUnresolvable,
         std::string(reasons::kNodeAffinityMismatch));
  }
  return result;
}

NodeFitResult CheckNodeResources(const Pod& pod, const Node& node, const ResourceList& requested,
                                 int32_t pod_count) {
  NodeFitResult result;
  if (auto max_pods = node.allocatable.Find(kResourcePods)) {
    if (pod_count + 1 > *max_pods)
      Fail(&result, FitCode::kUnschedulable, std::string(reasons::kTooManyPods));
  }
  for (const auto& [name, amount] : pod.requests.entries()) {
    if (amount <= 0 || name == kResourcePods) continue;
    const int64_t allocatable = node.allocatable.Get(name);
    if (amount > SaturatingSub(allocatable, requested.Get(name))) {
      Fail(&result,
           amount > allocatable ? FitCode::kUnschedulableAndUnresolvable : FitCode::kUnschedulable,
           reasons::InsufficientResource(name));
    }
  }
  return result;
}

void AddNominationsAgainst(const ClusterState& state, const Pod& pod, const std::string& node,
                           ResourceList* requested, int32_t* pod_count) {
  if (!state.HasNominations()) return;
  const std::string self = pod.uid.empty() ? pod.Key() : pod.uid;
  state.ForEachNomination([&](const Nomination& n) {
    if (n.node != node || n.uid == self || n.priority < pod.priority) return;
    requested->Add(n.node_request);
    ++*pod_count;
  });
}

NodeFitResult CheckNodeFit(const ClusterState& state, const Pod& pod, const NodeInfo& node) {
  NodeFitResult result = CheckNodeStatic(pod, node.node);
  NodeFitResult resources;
  if (!state.HasNominations()) {  // the common case: no copy of the node's usage
    resources = CheckNodeResources(pod, node.node, node.usage->requested, node.usage->pod_count);
  } else {
    ResourceList requested = node.usage->requested;
    int32_t pod_count = node.usage->pod_count;
    AddNominationsAgainst(state, pod, node.node.name, &requested, &pod_count);
    resources = CheckNodeResources(pod, node.node, requested, pod_count);
  }
  for (auto& reason : resources.reasons)
    Fail(&result, resources.code, std::move(reason));
  return result;
}

NodeFitScreen::NodeFitScreen(const ClusterState& state, const Pod& pod) : state_(state), pod_(pod) {
  full_check_ = !pod.node_selector.empty() || !pod.required_affinity.empty();
  for (const auto& [name, amount] : pod.requests.entries()) {
    if (amount <= 0 || name == kResourcePods) continue;
    if (name == kResourceCPU) {
      cpu_ = amount;
    } else if (name == kResourceMemory) {
      memory_ = amount;
    } else if (name == kResourceEphemeralStorage) {
      ephemeral_storage_ = amount;
    } else {
      full_check_ = true;
    }
  }
}

NodeFitResult NodeFitScreen::Check(const NodeRecord& record) const {
  return CheckNodeFit(state_, pod_, NodeInfo{*record.node, &record.usage});
}

}  // namespace capext
