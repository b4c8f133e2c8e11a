// DenseNodes: a column-per-resource mirror of the node table, so that a search over thousands of
// nodes per decision (the simulator's, and any caller that scans every node) reads a few flat
// arrays instead of ResourceLists: for each node (indexed in name order, the order
// ClusterState::nodes() iterates) the free amount of each tracked resource (allocatable -
// requested, saturating), the free pod slots, what scoring reads, the nominations naming it, and
// per namespace and priority what the node's pods request (for the reclaim search's bounds).
//
// It belongs to the node table (NodeTable::EnableDense) and is kept equal to it on every change:
// a usage or nomination change refreshes that node's columns, a change of the node set rebuilds
// the index (and bumps generation(): node indexes held by callers are then stale). Nominations are
// counted but not mirrored: NominationCount(n) > 0 sends a caller to the exact check for node n.
// Results equal the plain path's (node_fit.h, node_score.h); tests/core/dense_nodes_test.cpp
// checks them against each other on random states.
// Thread-safety: const methods may run concurrently with each other, never with a change.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/content_stamp.h"
#include "core/name_index.h"
#include "core/node_score.h"
#include "core/node_table.h"

namespace capext {

// A pod's request in tracked dimensions: only amounts > 0.
struct DenseRequest {
  std::vector<std::pair<int, int64_t>> dims;  // (dimension, amount)
  int64_t cpu = 0;                            // for scoring
  int64_t memory = 0;                         // for scoring
  // Every requested resource (amount > 0, pods aside) is a tracked dimension: the columns alone
  // decide resource fit. False: the caller must use the exact check.
  bool complete = true;
};

// A slice: the pods of one namespace and one priority on a node (reclaim search bounds). Its
// head says whose they are and how many, in 12 bytes, so that a node's heads share a few cache
// lines: the reclaim search tests every head of every node it scans and reads few of the slices.
// What a taken slice's pods request is read next, from SliceUsed: one array per node, not the
// slices themselves (a cache miss each).
struct SliceHead {
  uint32_t ns;  // DenseNodes::NamespaceId
  int32_t priority;
  int32_t pods;
};

// What else the reclaim search reads of a slice, on the few it refines: the largest request one
// member makes per dimension (inline for a few dimensions, else on the heap), and the members.
// Slices(n)[i] is the slice whose head is SliceHeads(n)[i].
struct NamespaceSlice {
  static constexpr std::size_t kInlineDims = 4;
  explicit NamespaceSlice(std::size_t dims) : inline_largest{} {
    if (dims > kInlineDims) heap_largest.assign(dims, 0);
  }
  int64_t inline_largest[kInlineDims];
  std::vector<int64_t> heap_largest;
  std::vector<const NormalizedPod*> members;  // unordered
  // Per dimension, the largest request among the members (0 without members).
  int64_t* largest() { return heap_largest.empty() ? inline_largest : heap_largest.data(); }
  const int64_t* largest() const {
    return heap_largest.empty() ? inline_largest : heap_largest.data();
  }
};

class DenseNodes {
 public:
  // `dims`: the resources fit checks in columns (cpu and memory are always added).
  DenseNodes(const NodeTable& table, std::vector<ResourceName> dims);

  // --- kept in step by the node table -------------------------------------------------------
  void Rebuild(const NodeTable& table);
  void Refresh(const NodeRecord& record);
  void PodAdded(const NodeRecord& record, const NormalizedPod& pod) { Track(record, pod, +1); }
  void PodRemoved(const NodeRecord& record, const NormalizedPod& pod) { Track(record, pod, -1); }

  // --- reading ------------------------------------------------------------------------------
  // Changes whenever node indexes change (a node added or deleted).
  uint64_t generation() const { return generation_; }
  int size() const { return static_cast<int>(names_.size()); }
  const std::string& name(int n) const { return *names_[n]; }
  const Node& node(int n) const { return *nodes_[n]; }
  int IndexOf(std::string_view name) const;  // -1 when unknown
  const std::vector<ResourceName>& dims() const { return dims_; }
  int DimOf(ResourceName resource) const;  // -1 when not tracked
  // The id of a namespace seen on some node's pods; -1 when none was.
  int NamespaceId(std::string_view ns) const;
  // Every namespace seen, by id. Ids are only ever added, never reused or removed.
  const std::vector<std::string>& namespaces() const { return namespace_names_; }
  // A fresh NewContentStamp() whenever a namespace id is added, kept by copies: keys caches of
  // what callers derive per namespace id (the candidate search's quota tree leaves).
  uint64_t namespaces_stamp() const { return namespaces_stamp_; }
  // Whether the namespace has pods on some node, and (when `below_priority_only`) one of
  // priority < `priority`.
  bool HasPods(int ns, bool below_priority_only, int32_t priority) const;

  DenseRequest MakeRequest(const ResourceList& requests) const;

  // Resources and pod count against the columns (nominations ignored). REQUIRES: r.complete.
  bool Fits(const DenseRequest& r, int n) const {
    if (pod_slots_[n] < 1) return false;
    for (const auto& [d, amount] : r.dims) {
      if (amount > free_[Cell(n, d)]) return false;
    }
    return true;
  }
  // Fits with every pod removed: allocatable covers the request.
  bool FitsAllocatable(const DenseRequest& r, int n) const;
  int64_t Free(int n, int d) const { return free_[Cell(n, d)]; }
  int64_t PodSlots(int n) const { return pod_slots_[n]; }
  int NominationCount(int n) const { return nominations_[n]; }
  bool AnyNominations() const { return nominated_nodes_ > 0; }
  const std::vector<NamespaceSlice>& Slices(int n) const { return slices_[n]; }
  const std::vector<SliceHead>& SliceHeads(int n) const { return slice_heads_[n]; }
  // What slice k of node n (SliceHeads(n)[k]) requests, per dimension: dims().size() amounts.
  const int64_t* SliceUsed(int n, std::size_t k) const {
    return slice_used_[n].data() + k * dims_.size();
  }
  int64_t TotalAllocatable(ResourceName resource) const;

  // ScoreNode for a request (cpu, memory) on node n, from the columns.
  int Score(NodeScoring scoring, const DenseRequest& r, int n) const;
  // Changes with every change of node n's usage (never 0): a key for memoised scores.
  uint32_t version(int n) const { return versions_[n]; }
  const uint32_t* versions() const { return versions_.data(); }  // version(n) of every node

  // Examines nodes start, start+1, ... (wrapping around) and appends to *out those for which
  // the columns (or `exact`) say the pod fits, stopping once `limit` are found; *best is the one
  // BestNode picks by score(n) (best_node.h; -1 when none). A node holding
  // nominations, or every node when the request is not complete, is decided by exact(n). Returns
  // how many nodes were examined (size() when the scan went all the way round). `mask`: nullptr, or
  // one byte per node (0 = excluded by static checks).
  template <typename Exact, typename ScoreFn>
  int ScanBest(const DenseRequest& r, const uint8_t* mask, int start, std::size_t limit,
               std::vector<int>* out, Exact&& exact, ScoreFn&& score, int* best) const;

 private:
  void Track(const NodeRecord& record, const NormalizedPod& pod, int sign);
  std::size_t Cell(int n, int d) const {
    return static_cast<std::size_t>(d) * names_.size() + static_cast<std::size_t>(n);
  }

  uint64_t generation_ = 0;
  std::vector<ResourceName> dims_;
  int cpu_dim_ = -1, mem_dim_ = -1;
  std::vector<const std::string*> names_;  // the table's node names, in name order
  std::vector<const Node*> nodes_;
  std::map<std::string, int, std::less<>> index_;
  // Per dimension a column of every node (Cell): a scan reads the request's columns in order.
  std::vector<int64_t> alloc_;
  std::vector<int64_t> free_;
  std::vector<int64_t> pod_slots_;  // max pods - pod count (large when unlimited)
  std::vector<int64_t> max_pods_;
  struct ScoreInputs {
    int64_t cpu_req = 0, cpu_alloc = 0, mem_req = 0, mem_alloc = 0;
    double cpu_per_mille = 0, mem_per_mille = 0;  // 1000 / allocatable
  };
  std::vector<ScoreInputs> score_inputs_;
  std::vector<uint32_t> versions_;
  std::vector<int32_t> nominations_;
  int nominated_nodes_ = 0;  // nodes with nominations_ != 0
  NameIndex namespaces_;
  std::vector<std::string> namespace_names_;
  uint64_t namespaces_stamp_ = NewContentStamp();
  // Per namespace, cluster-wide: (priority, pod count) sorted by priority. Entries stay at zero
  // (a priority that ran usually comes back; erasing and re-inserting was 6% of the simulator).
  std::vector<std::vector<std::pair<int32_t, int64_t>>> pods_by_priority_;
  std::vector<std::vector<NamespaceSlice>> slices_;  // per node
  std::vector<std::vector<SliceHead>> slice_heads_;  // per node, one per slice of slices_
  std::vector<std::vector<int64_t>> slice_used_;     // per node, dims_.size() per slice
};

}  // namespace capext

#include "core/dense_scan.h"  // ScanBest
