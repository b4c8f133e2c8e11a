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
  // true; -1 when none.
  template <typename F>
  int FirstFit(int from, const Need& need, F&& exact) {
    Flush();
    return Find(1, 0, leaves_, from, need, exact);
  }
  // Node fit (CheckNodeFit's answer) for `pod` on `node` with every change, the nominations of
  // `skip` (the waiting members: the room they hold is theirs) and of removed pods left out.
  bool FitsOn(const NormalizedPod& pod, const Need& need, bool full_check, int node,
              const std::unordered_set<std::string>& skip) const;

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
  template <typename F>
  int Find(int at, int lo, int hi, int from, const Need& need, F& exact) const {
    if (hi <= from || lo >= node_count() || !Covers(max_[static_cast<std::size_t>(at)], need))
      return -1;
    if (hi - lo == 1) return exact(lo) ? lo : -1;
    const int mid = lo + (hi - lo) / 2;
    const int left = Find(2 * at, lo, mid, from, need, exact);
    return left >= 0 ? left : Find(2 * at + 1, mid, hi, from, need, exact);
  }

  const ClusterState& state_;
  std::vector<const NodeRecord*> records_;
  std::unordered_map<std::string_view, int> index_;  // node name -> position in records_
  std::vector<ResourceList> requested_;              // per node: requested change
  std::vector<int32_t> pods_;                        // per node: pod count change
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
