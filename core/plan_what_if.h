// The plan search's what-if (docs/reclaim-plan.md#the-what-if-and-the-placement): what removing
// and restoring victims, and placing the waiting members, changes, kept as deltas over the real
// state and never as a copy of it: each node's requested resources and pod count, the usage of
// every quota tree node touched, and the cluster-wide totals. Over the nodes (in the state's name
// order) a max-tree of each node's free cpu, memory, ephemeral storage and pod slots answers "the
// first node from here that may have room" in O(log n): the free amounts it keeps are upper bounds
// of what node fit sees (nominations and static checks only take away), so a node it skips never
// fits, and the node it names is checked exactly (FitsOn).
// Thread-safety: one thread; the caller keeps `state` still while the what-if lives.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/cluster_state.h"
#include "core/quota_semantics.h"

namespace capext {

class PlanWhatIf {
 public:
  explicit PlanWhatIf(const ClusterState& state);

  // Takes the pods (on a node, reserved, or held) out of their node and quota; restores them.
  // `nodes[i]`: NodeOf(*pods[i]), found once by the caller. REQUIRES: a pod outside any gang is
  // removed only while in place and restored only while removed (it is in one unit: the caller
  // knows); a gang's pods may be asked twice (a core holds its surplus members).
  void Remove(const std::vector<const NormalizedPod*>& pods, const std::vector<int>& nodes);
  void Restore(const std::vector<const NormalizedPod*>& pods, const std::vector<int>& nodes);
  // Whether a gang's pod is removed (a pod outside any gang is not kept track of).
  bool IsRemoved(const NormalizedPod* pod) const { return removed_.count(pod) != 0; }

  // The usage of a quota tree node and the cluster-wide totals, with every change.
  const ResourceList& UsedOf(int tree_node) const;
  const AggregateTotals& totals() const { return totals_; }

  // Nodes, in the state's name order (the nodes that exist).
  int node_count() const { return static_cast<int>(records_.size()); }
  const NodeRecord& record(int node) const { return *records_[static_cast<std::size_t>(node)]; }
  // The node a pod is on (bound, or reserved by an in-flight /bind), or -1.
  int NodeOf(const NormalizedPod& pod) const;
  // A waiting member's room taken (+1) or given back (-1) on a node (the placement's reservation:
  // node room only; the quota admits the placement as a whole).
  void Reserve(int node, const NormalizedPod& pod, int sign);

  // What a pod asks of the max-tree: cpu, memory, ephemeral storage (0: not asked) and a slot.
  using Need = std::array<int64_t, 4>;
  static Need NeedOf(const NormalizedPod& pod);
  // NodeFitScreen's rule: the pod asks what the free amounts cannot answer (a nodeSelector,
  // required affinity, another resource), so every node it may take is checked in full.
  static bool NeedsFullCheck(const NormalizedPod& pod);
  // The first node >= `from` whose free amounts cover `need` and for which `exact(node)` is
  // true; -1 when none. Searched from `from`'s leaf up, then down the first subtree to its right
  // that covers `need`: about 2 log d nodes looked at for an answer d nodes on.
  template <typename F>
  int FirstFit(int from, const Need& need, F&& exact) {
    Flush();
    if (from < 0) from = 0;
    if (from >= node_count()) return -1;
    auto at = static_cast<std::size_t>(leaves_ + from);
    if (const int found = Find(at, need, exact); found >= 0) return found;
    for (; at > 1; at /= 2) {
      if (at % 2 != 0) continue;  // a right child: its sibling's nodes are before `from`
      if (const int found = Find(at + 1, need, exact); found >= 0) return found;
    }
    return -1;
  }
  // Node fit (CheckNodeFit's answer) for `pod` on `node` with every change, the nominations of
  // `skip` (the waiting members: the room they hold is theirs) and of removed pods left out.
  bool FitsOn(const NormalizedPod& pod, const Need& need, bool full_check, int node,
              const std::unordered_set<std::string>& skip) const;
  // Whether FitsOn answers for `node` by the summary test on free amounts alone (a node without
  // static checks or nominations), for a pod that needs no full check.
  bool SummaryNode(int node) const {
    const NodeRecord& rec = record(node);
    return !rec.fit.static_checks && rec.fit.nominations == 0;
  }
  // What the summary test sees of a node (SummaryNode): the requested change of cpu, memory and
  // ephemeral storage, and the pod count change.
  struct SummaryChange {
    Need change{};
    int32_t pods = 0;
  };
  SummaryChange SummaryChangeOf(int node) const {
    const auto i = static_cast<std::size_t>(node);
    return {change_[i], pods_[i]};
  }
  // A pod's requested cpu, memory and ephemeral storage (0 when absent; slot 3 unused): what
  // Reserve changes the summary by.
  static Need AmountsOf(const NormalizedPod& pod);
  // `summary` after Reserve(node, pod, -1) for the pod of `amounts`: ChangeNode's saturating
  // sums (an absent amount adds 0: no change).
  static void GiveBack(SummaryChange* summary, const Need& amounts) {
    for (std::size_t k = 0; k < 3; ++k)
      summary->change[k] = SaturatingAdd(summary->change[k], SaturatingSub(0, amounts[k]));
    summary->pods -= 1;
  }
  // FitsOn's answer on a SummaryNode for a pod that needs no full check, on `summary`.
  bool SummaryFitsOn(int node, const SummaryChange& summary, const Need& need) const {
    const NodeFitSummary& fit = record(node).fit;
    return SummaryFits({SaturatingSub(fit.free_cpu, summary.change[0]),
                        SaturatingSub(fit.free_memory, summary.change[1]),
                        SaturatingSub(fit.free_ephemeral_storage, summary.change[2]),
                        SaturatingSub(fit.free_pods, summary.pods)},
                       need);
  }
  // FitsOn with the room that `without` (pods given room on `node` by Reserve, in that order)
  // hold there given back first: the answer FitsOn gives after Reserve(node, *p, -1) for each.
  // Leaves the what-if as it was.
  bool FitsOnWithout(const NormalizedPod& pod, const Need& need, bool full_check, int node,
                     const std::unordered_set<std::string>& skip,
                     const std::vector<const NormalizedPod*>& without);

 private:
  void Change(const NormalizedPod& pod, int node, int sign);
  void ChangeNode(int node, const NormalizedPod& pod, int sign);
  void Refresh(int node);
  // The max-tree is brought up to date only when asked (a member released and placed again on
  // the same node changes nothing there): the nodes changed since, once each.
  void Flush();
  ResourceList* MutableUsed(int tree_node);
  bool Covers(const Need& max, const Need& need) const {
    for (std::size_t k = 0; k < max.size(); ++k) {
      if (need[k] > 0 && max[k] < need[k]) return false;
    }
    return true;
  }
  // The first node of the subtree at `at` (1-based heap index) that covers `need` and passes
  // `exact`, or -1.
  template <typename F>
  int Find(std::size_t at, const Need& need, F& exact) const {
    if (!Covers(max_[at], need)) return -1;
    if (at >= static_cast<std::size_t>(leaves_)) {
      const int node = static_cast<int>(at) - leaves_;
      return node < node_count() && exact(node) ? node : -1;
    }
    const int left = Find(2 * at, need, exact);
    return left >= 0 ? left : Find(2 * at + 1, need, exact);
  }
  // The summary test of FitsOn (NodeFitScreen's) on free amounts.
  static bool SummaryFits(const Need& free, const Need& need) {
    return free[3] >= 1 && need[0] <= std::max<int64_t>(free[0], 0) &&
           need[1] <= std::max<int64_t>(free[1], 0) && need[2] <= std::max<int64_t>(free[2], 0);
  }

  const ClusterState& state_;
  std::vector<const NodeRecord*> records_;
  std::unordered_map<std::string_view, int> index_;  // node name -> position in records_
  std::vector<ResourceList> requested_;              // per node: requested change
  std::vector<Need>
      change_;  // per node: requested_'s cpu, memory, ephemeral storage (the summary's)
  std::vector<int32_t> pods_;  // per node: pod count change
  int leaves_ = 1;
  std::vector<Need> max_;   // max-tree of each node's free amounts (1-based heap)
  std::vector<int> dirty_;  // nodes changed since the last Flush
  std::vector<bool> is_dirty_;
  std::vector<std::pair<int, ResourceList>> used_;  // quota tree nodes changed: their usage
  AggregateTotals totals_;
  // The removed pods of gangs: the only pods two units share, and the only pending ones (a
  // core's held members), whose nominations would hold room.
  std::unordered_set<const NormalizedPod*> removed_;
};

}  // namespace capext
