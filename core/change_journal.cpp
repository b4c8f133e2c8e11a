#include "core/change_journal.h"

#include <algorithm>
#include <tuple>

namespace capext {
namespace {

// What the quota ledger and the node table count (ClusterState's rule).
bool Counts(const Pod& pod) {
  return pod.IsBound() && !pod.IsTerminal();
}

bool SameTolerations(const std::vector<Toleration>& a, const std::vector<Toleration>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return std::tie(x.key, x.op, x.value, x.effect) == std::tie(y.key, y.op, y.value, y.effect);
  });
}

bool SameRequirements(const std::vector<NodeSelectorRequirement>& a,
                      const std::vector<NodeSelectorRequirement>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return std::tie(x.key, x.op, x.values) == std::tie(y.key, y.op, y.values);
  });
}

bool SameAffinity(const std::vector<NodeSelectorTerm>& a, const std::vector<NodeSelectorTerm>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return SameRequirements(x.match_expressions, y.match_expressions) &&
           SameRequirements(x.match_fields, y.match_fields);
  });
}

bool SameTaints(const std::vector<Taint>& a, const std::vector<Taint>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return std::tie(x.key, x.value, x.effect) == std::tie(y.key, y.value, y.effect);
  });
}

}  // namespace

// Every member of Pod is compared but patch_basis: Pod holds only what decisions read, and what
// the gate removal's patch needs, which changes with every write of the pod and decides nothing
// (tests/core/change_journal_test.cpp fails when a member is added without being compared here).
namespace {

// What decisions read of a pod's device demand besides its quota request: whether it waits
// (docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted) and what evicting it would
// not free (5).
bool SameDevices(const DeviceDemand* a, const DeviceDemand* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->problem == b->problem && a->kept == b->kept;
}

}  // namespace

bool SameForDecisions(const NormalizedPod& a, const NormalizedPod& b) {
  return a.ns == b.ns && a.requests == b.requests && a.priority == b.priority &&
         a.preemption_policy == b.preemption_policy && a.creation_ms == b.creation_ms &&
         a.start_ms == b.start_ms && a.reserved_ms == b.reserved_ms &&
         a.accelerator_model == b.accelerator_model && a.uid == b.uid && a.name == b.name &&
         a.node_name == b.node_name && a.nominated_node_name == b.nominated_node_name &&
         a.reclaim_record == b.reclaim_record && a.phase == b.phase &&
         a.terminating == b.terminating && a.unschedulable_condition == b.unschedulable_condition &&
         a.spec_priority == b.spec_priority &&
         a.spec_preemption_policy == b.spec_preemption_policy &&
         a.priority_class_name == b.priority_class_name && a.scheduler_name == b.scheduler_name &&
         a.labels == b.labels && a.node_selector == b.node_selector && a.group == b.group &&
         a.min_member_annotation == b.min_member_annotation && a.quota_gated == b.quota_gated &&
         a.other_gates == b.other_gates && a.admitted_ms == b.admitted_ms &&
         a.has_controller == b.has_controller && SameTolerations(a.tolerations, b.tolerations) &&
         SameAffinity(a.required_affinity, b.required_affinity) &&
         a.quota_request() == b.quota_request() && a.resource_claims == b.resource_claims &&
         SameDevices(a.device_demand(), b.device_demand());
}

bool SameForDecisions(const Node& a, const Node& b) {
  return a.name == b.name && a.allocatable == b.allocatable && a.labels == b.labels &&
         SameTaints(a.taints, b.taints) && a.unschedulable == b.unschedulable;
}

ChangeJournal::ChangeJournal(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {
  ring_.reserve(std::min<std::size_t>(capacity_, 1024));
}

void ChangeJournal::Record(Kind kind, std::string_view key) {
  const std::size_t slot = (next_sequence_ - 1) % capacity_;
  if (slot == ring_.size()) {
    ring_.push_back({kind, std::string(key)});
  } else {
    ring_[slot].kind = kind;
    ring_[slot].key.assign(key);  // keeps the slot's buffer: no allocation once warm
  }
  ++next_sequence_;
}

void ChangeJournal::PodUpserted(const NormalizedPod* before, const NormalizedPod& after) {
  if (before != nullptr && SameForDecisions(*before, after)) return;
  Record(Kind::kPod, after.store_key());
  const bool counted_before = before != nullptr && Counts(*before);
  const bool counted_after = Counts(after);
  if (counted_before) Record(Kind::kNode, before->node_name);
  if (counted_after && !(counted_before && before->node_name == after.node_name)) {
    Record(Kind::kNode, after.node_name);
  }
  if (counted_before != counted_after ||
      (counted_after && before->quota_request() != after.quota_request())) {
    Record(Kind::kUsage, after.ns);
  }
}

void ChangeJournal::PodErased(const NormalizedPod& pod) {
  Record(Kind::kPod, pod.store_key());
  if (!Counts(pod)) return;
  Record(Kind::kNode, pod.node_name);
  Record(Kind::kUsage, pod.ns);
}

void ChangeJournal::NodeUpserted(const Node* before, const Node& after) {
  if (before == nullptr || !SameForDecisions(*before, after)) Record(Kind::kNode, after.name);
}

void ChangeJournal::ReservationChanged(std::string_view pod_key, std::string_view ns,
                                       std::string_view node) {
  Record(Kind::kPod, pod_key);
  Record(Kind::kUsage, ns);
  if (!node.empty()) Record(Kind::kNode, node);  // a hold without a node is on no node
}

void ChangeJournal::NominationChanged(std::string_view pod_key, std::string_view ns,
                                      std::string_view node) {
  Record(Kind::kPod, pod_key);
  Record(Kind::kNominations, ns);
  Record(Kind::kNode, node);
}

bool ChangeJournal::QuotaSpecDiffers(const ElasticQuota* before, const ElasticQuota& after) {
  if (before == nullptr) return true;
  // status.used and resourceVersion change on every status write and decide nothing. The weight
  // orders gate mode's admission (docs/fair-sharing.md#5-admission-order-gate-mode).
  return std::tie(before->ns, before->name, before->uid, before->api_group, before->min,
                  before->max, before->parent, before->weight_milli, before->weight_problem,
                  before->creation_ms) !=
         std::tie(after.ns, after.name, after.uid, after.api_group, after.min, after.max,
                  after.parent, after.weight_milli, after.weight_problem, after.creation_ms);
}

void ChangeJournal::PriorityClassUpserted(const PriorityClass* before, const PriorityClass& after) {
  if (before != nullptr &&
      std::tie(before->value, before->global_default, before->preemption_policy) ==
          std::tie(after.value, after.global_default, after.preemption_policy)) {
    return;
  }
  Record(Kind::kPriorityClass, after.name);
}

bool ChangeJournal::Changes::empty() const {
  return pods.empty() && nodes.empty() && usage.empty() && quotas.empty() && nominations.empty() &&
         priority_classes.empty() && pdbs.empty();
}

ChangeJournal::Changes ChangeJournal::Since(uint64_t since) const {
  Changes out;
  const uint64_t last = last_sequence();
  out.through = last;
  const uint64_t oldest = last - ring_.size() + 1;  // of the entries kept
  if (since > last || (since + 1 < oldest)) {
    out.overflowed = true;
    return out;
  }
  // By Kind, in the enum's order.
  std::vector<std::string>* const lists[] = {&out.pods,   &out.nodes,       &out.usage,
                                             &out.quotas, &out.nominations, &out.priority_classes,
                                             &out.pdbs};
  for (uint64_t s = since + 1; s <= last; ++s) {
    const Entry& e = ring_[(s - 1) % capacity_];
    lists[static_cast<std::size_t>(e.kind)]->push_back(e.key);
  }
  for (auto* list : lists) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  return out;
}

}  // namespace capext
