// DenseNodes: a flat-array mirror of what node fit and node scoring read from a ClusterState,
// so the simulator can scan thousands of nodes per decision without touching strings.
//
// For every node (indexed in name order, the order ClusterState::nodes() iterates) it keeps the
// free amount of each tracked resource (allocatable - requested, saturating), the free pod
// slots, and cpu/memory allocatable and requested for scoring. The caller calls Resync(n) after
// every change of node n's usage in the state; the mirror then equals the core's view exactly.
// Nominations are NOT in the mirror: NominationCount(n) > 0 tells the caller to fall back to the
// core's exact check on that node.
//
// Static fit (taints, unschedulable, nodeSelector, required affinity) is precomputed per static
// class (a distinct set of gpu models a pod accepts) with the core's CheckNodeStatic.
//
// Scoring mirrors policies/node_scorer.cpp exactly (least-allocated, most-allocated, none:
// cpu and memory, permille per resource, used capped at allocatable, integer arithmetic);
// tests/bench/sim/dense_nodes_test.cpp checks it against the policy scorers.
// Thread-safety: none; one simulation owns one DenseNodes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/cluster_state.h"
#include "policies/node_scorer.h"

namespace capext {

// A pod's request in tracked dimensions: only amounts > 0.
struct DenseRequest {
  std::vector<std::pair<int, int64_t>> dims;  // (dimension, amount)
  int64_t cpu = 0;                            // for scoring
  int64_t memory = 0;                         // for scoring
  // Some requested amount (other than pods) is negative: `dims` then does not say everything
  // the pod adds to a node's usage, and Apply cannot be used (Resync instead).
  bool has_negative = false;
};

enum class DenseScoring { kLeastAllocated, kMostAllocated, kNone };
std::optional<DenseScoring> DenseScoringFromName(std::string_view name);

class DenseNodes {
 public:
  // `dims`: the resources fit must check (every resource some simulated pod requests, except
  // pods). REQUIRES: the state's nodes are final (nodes are never added during a simulation).
  DenseNodes(const ClusterState& state, std::vector<std::string> dims);

  int size() const { return static_cast<int>(names_.size()); }
  const std::string& name(int n) const { return names_[n]; }
  const Node& node(int n) const { return *nodes_[n]; }
  // -1 when unknown.
  int IndexOf(std::string_view name) const;
  int DimOf(std::string_view resource) const;
  const std::vector<std::string>& dims() const { return dims_; }

  DenseRequest MakeRequest(const ResourceList& requests) const;

  // Re-reads node n's requested resources and pod count from the state.
  void Resync(const ClusterState& state, int n);
  // What ClusterState does to node n's usage when a pod requesting `r` is bound there (sign
  // +1) or removed (-1): the same saturating additions, so the mirror stays equal to the state
  // without re-reading it. REQUIRES: !r.has_negative, and cpu and memory are dimensions
  // (CanApply); otherwise call Resync.
  bool CanApply(const DenseRequest& r) const {
    return !r.has_negative && cpu_dim_ >= 0 && mem_dim_ >= 0;
  }
  void Apply(int n, const DenseRequest& r, int sign);
  // Apply when it can, else Resync: node n after a pod requesting `r` was bound there (+1) or
  // removed (-1) in `state`.
  void PodChanged(const ClusterState& state, int n, const DenseRequest& r, int sign) {
    if (CanApply(r)) {
      Apply(n, r, sign);
    } else {
      Resync(state, n);
    }
  }

  // Static class of pods accepting `gpu_models` (empty = any) given as a prototype pod.
  int StaticClassFor(const Pod& prototype, const std::string& key);
  bool StaticOk(int static_class, int n) const {
    const auto& mask = static_masks_[static_class];
    return mask.empty() || mask[n] != 0;
  }

  // Resources and pod count against the mirror (nominations ignored).
  bool Fits(const DenseRequest& r, int n) const {
    if (pod_slots_[n] < 1) return false;
    for (const auto& [d, amount] : r.dims) {
      if (amount > free_[Cell(n, d)]) return false;
    }
    return true;
  }
  // Fits with every pod and nomination removed: allocatable covers the request.
  bool FitsAllocatable(const DenseRequest& r, int n) const;
  int64_t Free(int n, int d) const { return free_[Cell(n, d)]; }
  int64_t PodSlots(int n) const { return pod_slots_[n]; }

  // Score memoised per request shape: requests of equal cpu and memory score alike, and a
  // node's score only changes when its usage does (every change goes through Resync or Apply,
  // which invalidate the node's entries). ShapeOf returns -1 past kMaxShapes shapes; -1 is
  // accepted by CachedScore (computed every time).
  static constexpr int kMaxShapes = 256;
  int ShapeOf(DenseScoring scoring, const DenseRequest& r);
  int CachedScore(DenseScoring scoring, const DenseRequest& r, int shape, int n) {
    if (shape < 0) return Score(scoring, r, n);
    ScoreMemo& m = score_memo_[static_cast<std::size_t>(shape)][n];
    if (m.version != versions_[n]) {
      m.score = Score(scoring, r, n);
      m.version = versions_[n];
    }
    return m.score;
  }

  int Score(DenseScoring scoring, const DenseRequest& r, int n) const {
    if (scoring == DenseScoring::kNone) return 0;
    const ScoreInputs& in = score_inputs_[n];
    int64_t total = 0;
    int counted = 0;
    if (in.cpu_alloc > 0) {
      total += Permille(in.cpu_req, r.cpu, in.cpu_alloc, in.cpu_per_mille);
      ++counted;
    }
    if (in.mem_alloc > 0) {
      total += Permille(in.mem_req, r.memory, in.mem_alloc, in.mem_per_mille);
      ++counted;
    }
    const int64_t permille = counted == 2 ? total / 2 : total;  // counted 0 leaves total 0
    if (scoring == DenseScoring::kLeastAllocated)
      return static_cast<int>((1000 - permille) * kMaxNodeScore / 1000);
    return static_cast<int>(permille * kMaxNodeScore / 1000);
  }

  // Examines nodes start, start+1, ... (wrapping around) and appends to *out those that pass the
  // static class and fit by resources, stopping once `limit` are found. A node holding
  // nominations is decided by `exact(n)` instead of the mirror. Returns how many nodes were
  // examined (size() when the scan went all the way round).
  template <typename Exact>
  int Scan(const DenseRequest& r, int static_class, int start, std::size_t limit,
           std::vector<int>* out, Exact&& exact) const {
    const int total = size();
    const uint8_t* mask =
        static_masks_[static_class].empty() ? nullptr : static_masks_[static_class].data();
    const auto* dims = r.dims.data();
    const std::size_t count = r.dims.size();
    // Two plain ranges instead of a wrapping index: [start, total), then [0, start).
    int examined = 0;
    for (int pass = 0; pass < 2; ++pass) {
      const int begin = pass == 0 ? start : 0;
      const int end = pass == 0 ? total : start;
      for (int n = begin; n < end; ++n) {
        ++examined;
        if (mask != nullptr && mask[n] == 0) continue;
        bool fits;
        if (nominations_[n] != 0) {
          fits = exact(n);
        } else {
          fits = pod_slots_[n] >= 1;
          for (std::size_t k = 0; fits && k < count; ++k)
            fits = dims[k].second <= free_[Cell(n, dims[k].first)];
        }
        if (!fits) continue;
        out->push_back(n);
        if (out->size() >= limit) return examined;
      }
    }
    return total;
  }

  // Scan (the same nodes appended, the same count returned), and also the best node by score
  // among those appended (highest CachedScore, the first in name order on a tie; -1 when none):
  // the choice of kube-scheduler's selectHost with a name tie-break, made in the same pass.
  // REQUIRES: out->size() < limit.
  template <typename Exact>
  int ScanBest(const DenseRequest& r, int static_class, int shape, DenseScoring scoring, int start,
               std::size_t limit, std::vector<int>* out, Exact&& exact, int* best) {
    if (limit <= out->size()) {
      *best = -1;
      return 0;
    }
    auto call = [](void* f, int n) {
      return (*static_cast<std::remove_reference_t<Exact>*>(f))(n);
    };
    return ScanBestBlocks(r, static_class, shape, scoring, start, limit, out, best, call,
                          const_cast<void*>(static_cast<const void*>(&exact)));
  }

  void AddNomination(int n, int delta) {
    const bool before = nominations_[n] != 0;
    nominations_[n] += delta;
    nominated_nodes_ += static_cast<int>(nominations_[n] != 0) - static_cast<int>(before);
  }
  int64_t Requested(int n, int d) const { return requested_[Cell(n, d)]; }
  int NominationCount(int n) const { return nominations_[n]; }

  // Cluster totals of allocatable per dimension name (for reports).
  int64_t TotalAllocatable(std::string_view resource) const;

 private:
  // ScanBest's work: fit decided a block of nodes at a time without branches (most of a
  // decision's time is this scan); a block holding a nominated node is redone node by node,
  // asking exact(exact_context, n) for the nominated ones.
  int ScanBestBlocks(const DenseRequest& r, int static_class, int shape, DenseScoring scoring,
                     int start, std::size_t limit, std::vector<int>* out, int* best,
                     bool (*exact)(void*, int), void* exact_context);
  void Invalidate(int n);

  std::vector<std::string> names_;
  std::vector<const Node*> nodes_;  // owned by the state
  std::map<std::string, int, std::less<>> index_;
  std::vector<std::string> dims_;
  // Per dimension a column of every node (Cell): a scan reads the request's columns in order.
  std::size_t Cell(int n, int d) const {
    return static_cast<std::size_t>(d) * names_.size() + static_cast<std::size_t>(n);
  }
  std::vector<int64_t> alloc_;
  std::vector<int64_t> requested_;  // the state's usage.requested
  std::vector<int64_t> free_;
  std::vector<int64_t> pod_slots_;  // max pods - pod count (large when unlimited)
  std::vector<int64_t> max_pods_;
  // What scoring reads, one record per node (one cache line).
  struct ScoreInputs {
    int64_t cpu_req = 0, cpu_alloc = 0, mem_req = 0, mem_alloc = 0;
    double cpu_per_mille = 0, mem_per_mille = 0;  // 1000 / allocatable
  };
  // policies/node_scorer.cpp's UtilisationPermille for one resource, on plain numbers:
  // floor(min(requested + add, allocatable) * 1000 / allocatable). The quotient is estimated
  // with the precomputed 1000 / allocatable and corrected to the exact integer (divisions were
  // the most expensive step of a decision).
  static int64_t Permille(int64_t requested, int64_t add, int64_t allocatable, double per_mille) {
    int64_t used = SaturatingAdd(requested, add);
    if (used > allocatable) used = allocatable;
    if (used < 0 || used > INT64_MAX / 1000) {
      return static_cast<int64_t>((static_cast<__int128>(used) * 1000) / allocatable);
    }
    int64_t q = static_cast<int64_t>(static_cast<double>(used) * per_mille);
    int64_t rem = used * 1000 - q * allocatable;
    while (rem < 0) {
      --q;
      rem += allocatable;
    }
    while (rem >= allocatable) {
      ++q;
      rem -= allocatable;
    }
    return q;
  }
  std::vector<ScoreInputs> score_inputs_;
  int cpu_dim_ = -1, mem_dim_ = -1;
  // Per node, a number that changes with every change of its usage (never 0).
  std::vector<uint32_t> versions_;
  struct ScoreMemo {
    uint32_t version = 0;  // versions_ when computed; 0 = never
    int32_t score = 0;
  };
  std::vector<std::vector<ScoreMemo>> score_memo_;  // by shape, then node
  std::map<std::tuple<DenseScoring, int64_t, int64_t>, int> shape_by_key_;
  std::vector<int> nominations_;
  int nominated_nodes_ = 0;  // nodes with nominations_ != 0
  std::map<std::string, int> static_class_by_key_;
  std::vector<std::vector<uint8_t>> static_masks_;  // empty = every node passes
};

}  // namespace capext
