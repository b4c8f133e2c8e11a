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
// tests/bench/sim_dense_nodes_test.cpp checks it against the policy scorers.
// Thread-safety: none; one simulation owns one DenseNodes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_state.h"
#include "policies/node_scorer.h"

namespace capext {

// A pod's request in tracked dimensions: only amounts > 0.
struct DenseRequest {
  std::vector<std::pair<int, int64_t>> dims;  // (dimension, amount)
  int64_t cpu = 0;     // for scoring
  int64_t memory = 0;  // for scoring
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

  // Static class of pods accepting `gpu_models` (empty = any) given as a prototype pod.
  int StaticClassFor(const Pod& prototype, const std::string& key);
  bool StaticOk(int static_class, int n) const {
    const auto& mask = static_masks_[static_class];
    return mask.empty() || mask[n] != 0;
  }

  // Resources and pod count against the mirror (nominations ignored).
  bool Fits(const DenseRequest& r, int n) const {
    if (pod_slots_[n] < 1) return false;
    const int64_t* free = &free_[static_cast<std::size_t>(n) * stride_];
    for (const auto& [d, amount] : r.dims) {
      if (amount > free[d]) return false;
    }
    return true;
  }
  // Fits with every pod and nomination removed: allocatable covers the request.
  bool FitsAllocatable(const DenseRequest& r, int n) const;
  int64_t Free(int n, int d) const { return free_[static_cast<std::size_t>(n) * stride_ + d]; }
  int64_t PodSlots(int n) const { return pod_slots_[n]; }

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
    if (scoring == DenseScoring::kLeastAllocated) return static_cast<int>((1000 - permille) * kMaxNodeScore / 1000);
    return static_cast<int>(permille * kMaxNodeScore / 1000);
  }

  // Examines nodes start, start+1, ... (wrapping around) and appends to *out those that pass the
  // static class and fit by resources, stopping once `limit` are found. A node holding
  // nominations is decided by `exact(n)` instead of the mirror. Returns how many nodes were
  // examined (size() when the scan went all the way round).
  template <typename Exact>
  int Scan(const DenseRequest& r, int static_class, int start, std::size_t limit, std::vector<int>* out,
           Exact&& exact) const {
    const int total = size();
    const uint8_t* mask = static_masks_[static_class].empty() ? nullptr : static_masks_[static_class].data();
    const auto* dims = r.dims.data();
    const std::size_t count = r.dims.size();
    for (int i = 0; i < total; ++i) {
      int n = start + i;
      if (n >= total) n -= total;
      if (mask != nullptr && mask[n] == 0) continue;
      bool fits;
      if (nominations_[n] != 0) {
        fits = exact(n);
      } else {
        fits = pod_slots_[n] >= 1;
        const int64_t* free = &free_[static_cast<std::size_t>(n) * stride_];
        for (std::size_t k = 0; fits && k < count; ++k) fits = dims[k].second <= free[dims[k].first];
      }
      if (!fits) continue;
      out->push_back(n);
      if (out->size() >= limit) return i + 1;
    }
    return total;
  }

  void AddNomination(int n, int delta) { nominations_[n] += delta; }
  int NominationCount(int n) const { return nominations_[n]; }

  // Cluster totals of allocatable per dimension name (for reports).
  int64_t TotalAllocatable(std::string_view resource) const;

 private:
  std::vector<std::string> names_;
  std::vector<const Node*> nodes_;  // owned by the state
  std::map<std::string, int, std::less<>> index_;
  std::vector<std::string> dims_;
  std::size_t stride_ = 1;
  std::vector<int64_t> alloc_;  // n * stride_ + d
  std::vector<int64_t> free_;   // n * stride_ + d
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
  std::vector<int> nominations_;
  std::map<std::string, int> static_class_by_key_;
  std::vector<std::vector<uint8_t>> static_masks_;  // empty = every node passes
};

}  // namespace capext
