#include "core/plan_placement.h"

#include <algorithm>

namespace capext {

PlanPlacement::PlanPlacement(PlanWhatIf* what_if, const std::vector<const NormalizedPod*>& members)
    : what_if_(*what_if), members_(members), nodes_(members.size(), -1) {
  for (const NormalizedPod* m : members_) {
    needs_.push_back(PlanWhatIf::NeedOf(*m));
    full_check_.push_back(PlanWhatIf::NeedsFullCheck(*m));
    keys_.insert(m->store_key());
  }
}

void PlanPlacement::Release(std::size_t first) {
  for (std::size_t j = first; j < nodes_.size(); ++j) {
    if (nodes_[j] >= 0) what_if_.Reserve(nodes_[j], *members_[j], -1);
    nodes_[j] = -1;
  }
}

bool PlanPlacement::PlaceFrom(std::size_t first, int* placed) {
  Release(first);
  for (std::size_t j = first; j < members_.size(); ++j) {
    const NormalizedPod& m = *members_[j];
    const int node = what_if_.FirstFit(0, needs_[j], [&](int n) {
      return what_if_.FitsOn(m, needs_[j], full_check_[j], n, keys_);
    });
    if (node < 0) {
      *placed = static_cast<int>(j);
      Release(first);
      return false;
    }
    what_if_.Reserve(node, m, +1);
    nodes_[j] = node;
  }
  *placed = static_cast<int>(members_.size());
  return true;
}

bool PlanPlacement::Refit(const std::vector<int>& touched, int* placed, int64_t* checked) {
  *checked = 0;
  *placed = static_cast<int>(members_.size());
  const auto on = [&](int node) {
    return node >= 0 && std::find(touched.begin(), touched.end(), node) != touched.end();
  };
  std::size_t j = 0;
  for (; j < members_.size(); ++j) {
    // Every member before j kept its node: so does j where its room did not change.
    if (!on(nodes_[j])) continue;
    ++*checked;
    const NormalizedPod& m = *members_[j];
    what_if_.Reserve(nodes_[j], m, -1);
    const bool fits = what_if_.FitsOn(m, needs_[j], full_check_[j], nodes_[j], keys_);
    what_if_.Reserve(nodes_[j], m, +1);
    if (!fits) break;
  }
  if (j == members_.size()) return true;
  *checked += static_cast<int64_t>(members_.size() - j);
  before_ = nodes_;
  before_from_ = j;
  return PlaceFrom(j, placed);
}

void PlanPlacement::Undo() {
  Release(before_from_);
  for (std::size_t j = before_from_; j < nodes_.size(); ++j) {
    nodes_[j] = before_[j];
    if (nodes_[j] >= 0) what_if_.Reserve(nodes_[j], *members_[j], +1);
  }
}

}  // namespace capext
