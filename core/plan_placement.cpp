#include "core/plan_placement.h"

#include <algorithm>

namespace capext {

PlanPlacement::PlanPlacement(PlanWhatIf* what_if, const std::vector<const NormalizedPod*>& members)
    : what_if_(*what_if), members_(members), nodes_(members.size(), -1) {
  for (const NormalizedPod* m : members_) {
    needs_.push_back(PlanWhatIf::NeedOf(*m));
    amounts_.push_back(PlanWhatIf::AmountsOf(*m));
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

bool PlanPlacement::FitsBeside(std::size_t j, int node) {
  if (!full_check_[j] && what_if_.SummaryNode(node)) {
    // FitsOnWithout's summary test, with the members' amounts found once.
    PlanWhatIf::SummaryChange summary = what_if_.SummaryChangeOf(node);
    for (std::size_t k = j; k < members_.size(); ++k) {
      if (nodes_[k] == node) PlanWhatIf::GiveBack(&summary, amounts_[k]);
    }
    return what_if_.SummaryFitsOn(node, summary, needs_[j]);
  }
  without_.clear();
  for (std::size_t k = j; k < members_.size(); ++k) {
    if (nodes_[k] == node) without_.push_back(members_[k]);
  }
  return what_if_.FitsOnWithout(*members_[j], needs_[j], full_check_[j], node, keys_, without_);
}

int PlanPlacement::FirstFitAfter(std::size_t j, int at) {
  const NormalizedPod& m = *members_[j];
  // The members after j still hold their room: the max-tree and FitsOn see less room than
  // member j may take on their nodes, never more, so the node found is a fit, and only their
  // nodes before it may be an earlier one.
  int node = what_if_.FirstFit(at + 1, needs_[j], [&](int n) {
    return what_if_.FitsOn(m, needs_[j], full_check_[j], n, keys_);
  });
  int no_room = -1;  // the node last found without room (the later members on a node are
                     // usually next to each other)
  for (std::size_t k = j + 1; k < members_.size(); ++k) {
    const int n = nodes_[k];
    if (n <= at || n == no_room || (node >= 0 && n >= node)) continue;
    if (FitsBeside(j, n)) {
      node = n;
    } else {
      no_room = n;
    }
  }
  return node;
}

void PlanPlacement::Grew(int node) {
  for (Grown& g : grew_) {
    if (g.node != node) continue;
    g.has_failed = false;  // more room than when it was asked
    return;
  }
  grew_.push_back({node, {}, false});
}

bool PlanPlacement::NoRoomYet(const Grown& g, std::size_t j) const {
  if (!g.has_failed || full_check_[j]) return false;
  for (std::size_t k = 0; k < g.failed.size(); ++k) {
    if (needs_[j][k] < g.failed[k]) return false;
  }
  return true;
}

bool PlanPlacement::Refit(const std::vector<int>& touched, int* placed, int64_t* checked) {
  *checked = 0;
  *placed = static_cast<int>(members_.size());
  // Since the last placement, room shrank on `shrank_` and may have grown on `grew_` (a member
  // that moved away); everywhere else it is as it was for every member.
  shrank_.assign(touched.begin(), touched.end());
  grew_.clear();
  const auto in = [](const std::vector<int>& nodes, int node) {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  };
  // Members are taken in placement order. The ones before j have their nodes; j and the ones
  // after it still hold their room where they were, and member j is asked beside the ones
  // before it only (FitsBeside gives the later ones' room back for the question).
  for (std::size_t j = 0; j < members_.size(); ++j) {
    const int at = nodes_[j];
    // Until a member moves (grew_ empty), only a member on a node that shrank is looked at.
    if (grew_.empty() && !in(shrank_, at)) continue;
    ++*checked;
    // Every node before `at` had no room for member j in the last placement, and room only
    // shrank there since, but on the nodes of grew_: member j's first fit is the first node of
    // grew_ before `at` that fits, else `at` if it still fits, else the first fit after `at`.
    int node = -1;
    for (Grown& g : grew_) {
      if (g.node >= at || (node >= 0 && g.node > node) || NoRoomYet(g, j)) continue;
      if (FitsBeside(j, g.node)) {
        node = g.node;
      } else if (!full_check_[j] && what_if_.SummaryNode(g.node)) {
        g.failed = needs_[j];
        g.has_failed = true;
      }
    }
    if (node < 0 && (!in(shrank_, at) || FitsBeside(j, at))) continue;
    if (grew_.empty()) before_ = nodes_;
    Grew(at);
    what_if_.Reserve(at, *members_[j], -1);
    nodes_[j] = -1;
    if (node < 0) node = FirstFitAfter(j, at);
    if (node < 0) {
      *placed = static_cast<int>(j);
      for (std::size_t k = j + 1; k < members_.size(); ++k) {
        what_if_.Reserve(nodes_[k], *members_[k], -1);
        nodes_[k] = -1;  // released
      }
      return false;
    }
    what_if_.Reserve(node, *members_[j], +1);
    nodes_[j] = node;
    shrank_.push_back(node);
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
