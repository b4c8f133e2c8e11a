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
  // Since the last placement, room shrank on `shrank` and may have grown on `grew` (a member
  // that moved away); everywhere else it is as it was for every member.
  std::vector<int> shrank(touched), grew;
  const auto in = [](const std::vector<int>& nodes, int node) {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  };
  // Until a member moves, every member holds its room; from then on the members after it are
  // released and take their room again in turn, as first fit places them.
  bool moved = false;
  for (std::size_t j = 0; j < members_.size(); ++j) {
    const NormalizedPod& m = *members_[j];
    const int at = nodes_[j];
    const auto fits = [&](int node) {
      return what_if_.FitsOn(m, needs_[j], full_check_[j], node, keys_);
    };
    if (!moved) {
      // What member j saw on its node: the room of the members before it only.
      if (!in(shrank, at)) continue;
      ++*checked;
      for (std::size_t k = j; k < members_.size(); ++k) {
        if (nodes_[k] == at) what_if_.Reserve(at, *members_[k], -1);
      }
      const bool keep = fits(at);
      for (std::size_t k = j; k < members_.size(); ++k) {
        if (nodes_[k] == at) what_if_.Reserve(at, *members_[k], +1);
      }
      if (keep) continue;
      before_ = nodes_;
      moved = true;
      for (std::size_t k = j; k < members_.size(); ++k)
        what_if_.Reserve(nodes_[k], *members_[k], -1);
    } else {
      ++*checked;
      // A node before its own that grew may have room for it now; its own may have none.
      const bool keep = std::none_of(grew.begin(), grew.end(),
                                     [&](int node) { return node < at && fits(node); }) &&
                        (!in(shrank, at) || fits(at));
      if (keep) {
        what_if_.Reserve(at, m, +1);
        continue;
      }
    }
    grew.push_back(at);
    const int node = what_if_.FirstFit(0, needs_[j], [&](int n) {
      return what_if_.FitsOn(m, needs_[j], full_check_[j], n, keys_);
    });
    if (node < 0) {
      *placed = static_cast<int>(j);
      for (std::size_t k = j; k < members_.size(); ++k)
        nodes_[k] = -1;  // released
      return false;
    }
    what_if_.Reserve(node, m, +1);
    nodes_[j] = node;
    shrank.push_back(node);
  }
  return true;
}

void PlanPlacement::Undo() {
  Release(0);
  for (std::size_t j = 0; j < nodes_.size(); ++j) {
    nodes_[j] = before_[j];
    if (nodes_[j] >= 0) what_if_.Reserve(nodes_[j], *members_[j], +1);
  }
}

}  // namespace capext
