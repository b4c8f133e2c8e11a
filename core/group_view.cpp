#include "core/group_view.h"

#include <algorithm>
#include <string_view>
#include <tuple>

namespace capext {

GroupView BuildGroupView(const GroupKey& key, const PodGroupSpec* spec,
                         const std::vector<const NormalizedPod*>& members,
                         const QuotaLedger& ledger, bool complete) {
  GroupView view;
  view.key = key;
  view.complete = complete;
  if (spec != nullptr) {
    view.has_object = true;
    view.schedule_timeout_ms = spec->schedule_timeout_ms;
  }
  for (const NormalizedPod* pod : members) {
    if (pod->IsTerminal()) continue;
    GroupMember m{pod, MemberState::kPending, 0};
    const std::string& k = pod->store_key();
    if (pod->IsBound()) {
      m.state = MemberState::kBound;
      m.started_ms = EffectiveStartMs(*pod);
      ++view.bound;
    } else if (const Reservation* r = ledger.FindReservation(k); r && !r->node.empty()) {
      m.state = MemberState::kReserved;
      m.started_ms = r->reserved_ms;
      ++view.reserved;
    } else if (const QuotaHold* h = pod->other_gates ? nullptr : ledger.FindHold(k)) {
      // Held: admitted, also while our gate's removal is in flight
      // (docs/workloads.md#2-holds-quota-without-a-node).
      m.state = MemberState::kAdmitted;
      m.started_ms = h->held_ms;
      ++view.admitted;
      if (view.first_admitted_ms == 0 || h->held_ms < view.first_admitted_ms)
        view.first_admitted_ms = h->held_ms;
    } else if (pod->IsGated()) {
      m.state = MemberState::kGated;
      ++view.gated;
    } else {
      ++view.pending;
    }
    view.members.push_back(m);
  }
  // Start order (docs/workloads.md#core-and-surplus): bound, reserved, admitted by their
  // start; then the rest by creation; then name.
  auto order = [](const GroupMember& m) {
    const bool started = m.state <= MemberState::kAdmitted;
    return std::make_tuple(started ? static_cast<int>(m.state) : 3, started ? m.started_ms : 0,
                           m.pod->creation_ms, std::string_view(m.pod->name),
                           std::string_view(m.pod->store_key()));
  };
  std::sort(view.members.begin(), view.members.end(),
            [&](const GroupMember& a, const GroupMember& b) { return order(a) < order(b); });
  // minMember: the object's; else the oldest annotated member's annotation (docs/workloads.md).
  if (spec != nullptr) {
    view.min_member = spec->min_member;
    view.source = MinMemberSource::kObject;
  } else {
    const NormalizedPod* oldest = nullptr;
    for (const NormalizedPod* pod : members) {
      if (pod->min_member_annotation <= 0) continue;
      if (oldest == nullptr ||
          std::tie(pod->creation_ms, pod->name) < std::tie(oldest->creation_ms, oldest->name))
        oldest = pod;
    }
    if (oldest != nullptr) {
      view.min_member = oldest->min_member_annotation;
      view.source = MinMemberSource::kAnnotation;
      for (const NormalizedPod* pod : members) {
        if (pod->min_member_annotation > 0 &&
            pod->min_member_annotation != oldest->min_member_annotation)
          view.annotations_disagree = true;
      }
    }
  }
  return view;
}

}  // namespace capext
