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

// Collects failed checks: the worst code and the reasons joined by ", ".
class Failures {
 public:
  void Add(bool unresolvable, std::string_view reason) {
    unresolvable_ = unresolvable_ || unresolvable;
    if (!reasons_.empty()) reasons_ += ", ";
    reasons_ += reason;
    failed_ = true;
  }
  void Add(const Status& s) {
    if (!s.ok()) Add(s.IsUnresolvable(), s.message());
  }
  Status Result() && {
    if (!failed_) return {};
    return unresolvable_ ? Status::Unresolvable(std::move(reasons_))
                         : Status::Unschedulable(std::move(reasons_));
  }

 private:
  bool failed_ = false;
  bool unresolvable_ = false;
  std::string reasons_;
};

}  // namespace

bool ToleratesTaint(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.op.empty() || toleration.op == "Equal") return toleration.value == taint.value;
  return toleration.op == "Exists";
}

Status CheckNodeStatic(const Pod& pod, const Node& node) {
  Failures result;
  if (node.unschedulable) {
    // kube-scheduler lets a pod tolerating node.kubernetes.io/unschedulable:NoSchedule through.
    Taint unschedulable{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
    bool tolerated =
        std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                    [&](const Toleration& t) { return ToleratesTaint(t, unschedulable); });
    if (!tolerated) result.Add(true, reasons::kNodeUnschedulable);
  }
  for (const auto& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool tolerated = std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                                 [&](const Toleration& t) { return ToleratesTaint(t, taint); });
    if (!tolerated) {
      result.Add(true, reasons::UntoleratedTaint(taint.key, taint.value));
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
  if (!selector_ok) result.Add(true, reasons::kNodeAffinityMismatch);
  return std::move(result).Result();
}

Status CheckNodeResources(const Pod& pod, const Node& node, const ResourceList& requested,
                          int32_t pod_count) {
  Failures result;
  if (auto max_pods = node.allocatable.Find(kPodsName)) {
    if (pod_count + 1 > *max_pods) result.Add(false, reasons::kTooManyPods);
  }
  for (const auto& [name, amount] : pod.requests.entries()) {
    if (amount <= 0 || name == kPodsName) continue;
    const int64_t allocatable = node.allocatable.Get(name);
    if (amount > SaturatingSub(allocatable, requested.Get(name))) {
      result.Add(amount > allocatable, reasons::InsufficientResource(name));
    }
  }
  return std::move(result).Result();
}

void AddNominationsAgainst(const ClusterState& state, const NormalizedPod& pod,
                           std::string_view node, ResourceList* requested, int32_t* pod_count) {
  if (!state.HasNominations()) return;
  const std::string& self = pod.store_key();
  state.ForEachNomination([&](const Nomination& n) {
    if (n.node != node || n.uid == self || n.priority < pod.priority) return;
    requested->Add(n.node_request);
    ++*pod_count;
  });
}

Status CheckNodeFit(const ClusterState& state, const NormalizedPod& pod, const NodeInfo& node) {
  Failures result;
  result.Add(CheckNodeStatic(pod, node.node));
  if (!state.HasNominations()) {
    // The common case: no copy of the node's usage.
    result.Add(CheckNodeResources(pod, node.node, node.usage->requested, node.usage->pod_count));
  } else {
    ResourceList requested = node.usage->requested;
    int32_t pod_count = node.usage->pod_count;
    AddNominationsAgainst(state, pod, node.node.name, &requested, &pod_count);
    result.Add(CheckNodeResources(pod, node.node, requested, pod_count));
  }
  return std::move(result).Result();
}

NodeFitScreen::NodeFitScreen(const ClusterState& state, const NormalizedPod& pod)
    : state_(state), pod_(pod) {
  full_check_ = !pod.node_selector.empty() || !pod.required_affinity.empty();
  for (const auto& [name, amount] : pod.requests.entries()) {
    if (amount <= 0 || name == kPodsName) continue;
    if (name == kCpuName) {
      cpu_ = amount;
    } else if (name == kMemoryName) {
      memory_ = amount;
    } else if (name == kEphemeralStorageName) {
      ephemeral_storage_ = amount;
    } else {
      full_check_ = true;
    }
  }
}

Status NodeFitScreen::Check(const NodeRecord& record) const {
  return CheckNodeFit(state_, pod_, NodeInfo{*record.node, &record.usage});
}

}  // namespace capext
