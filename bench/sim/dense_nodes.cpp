#include "bench/sim/dense_nodes.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "core/node_fit.h"

namespace capext {

std::optional<DenseScoring> DenseScoringFromName(std::string_view name) {
  if (name == "least-allocated") return DenseScoring::kLeastAllocated;
  if (name == "most-allocated") return DenseScoring::kMostAllocated;
  if (name == "none") return DenseScoring::kNone;
  return std::nullopt;
}

DenseNodes::DenseNodes(const ClusterState& state, std::vector<std::string> dims)
    : dims_(std::move(dims)) {
  for (const auto& [name, node] : state.nodes()) {
    index_[name] = static_cast<int>(names_.size());
    names_.push_back(name);
    nodes_.push_back(&node);
  }
  const std::size_t n = names_.size();
  alloc_.assign(n * dims_.size(), 0);
  requested_.assign(n * dims_.size(), 0);
  free_.assign(n * dims_.size(), 0);
  pod_slots_.assign(n, 0);
  max_pods_.assign(n, std::numeric_limits<int64_t>::max());
  score_inputs_.assign(n, ScoreInputs{});
  versions_.assign(n, 1);
  cpu_dim_ = DimOf(kResourceCPU);
  mem_dim_ = DimOf(kResourceMemory);
  nominations_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = *nodes_[i];
    for (std::size_t d = 0; d < dims_.size(); ++d)
      alloc_[Cell(static_cast<int>(i), static_cast<int>(d))] = node.allocatable.Get(dims_[d]);
    if (auto max_pods = node.allocatable.Find(kResourcePods)) max_pods_[i] = *max_pods;
    ScoreInputs& in = score_inputs_[i];
    in.cpu_alloc = node.allocatable.Get(kResourceCPU);
    in.mem_alloc = node.allocatable.Get(kResourceMemory);
    if (in.cpu_alloc > 0) in.cpu_per_mille = 1000.0 / static_cast<double>(in.cpu_alloc);
    if (in.mem_alloc > 0) in.mem_per_mille = 1000.0 / static_cast<double>(in.mem_alloc);
    Resync(state, static_cast<int>(i));
  }
}

int DenseNodes::IndexOf(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int DenseNodes::DimOf(std::string_view resource) const {
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d] == resource) return static_cast<int>(d);
  }
  return -1;
}

DenseRequest DenseNodes::MakeRequest(const ResourceList& requests) const {
  DenseRequest r;
  for (const auto& [name, amount] : requests.entries()) {
    if (amount <= 0 || name == kResourcePods) continue;
    const int d = DimOf(name);
    // Every requested resource is a dimension by construction (see the constructor's contract).
    if (d >= 0) r.dims.emplace_back(d, amount);
  }
  for (const auto& [name, amount] : requests.entries()) {
    if (amount < 0 && name != kResourcePods) r.has_negative = true;
  }
  r.cpu = requests.Get(kResourceCPU);
  r.memory = requests.Get(kResourceMemory);
  return r;
}

void DenseNodes::Resync(const ClusterState& state, int n) {
  const NodeUsage& usage = state.UsageOf(names_[n]);
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    const std::size_t cell = Cell(n, static_cast<int>(d));
    requested_[cell] = usage.requested.Get(dims_[d]);
    free_[cell] = SaturatingSub(alloc_[cell], requested_[cell]);
  }
  pod_slots_[n] = max_pods_[n] == std::numeric_limits<int64_t>::max()
                      ? std::numeric_limits<int64_t>::max()
                      : max_pods_[n] - usage.pod_count;
  score_inputs_[n].cpu_req = usage.requested.Get(kResourceCPU);
  score_inputs_[n].mem_req = usage.requested.Get(kResourceMemory);
  Invalidate(n);
}

void DenseNodes::Apply(int n, const DenseRequest& r, int sign) {
  // ResourceList::Add / Subtract entry by entry: zero amounts change nothing, and r.dims holds
  // every other amount (no negative ones: CanApply).
  for (const auto& [d, amount] : r.dims) {
    const std::size_t cell = Cell(n, d);
    int64_t& requested = requested_[cell];
    requested = sign > 0 ? SaturatingAdd(requested, amount) : SaturatingSub(requested, amount);
    free_[cell] = SaturatingSub(alloc_[cell], requested);
  }
  if (max_pods_[n] != std::numeric_limits<int64_t>::max()) pod_slots_[n] -= sign;
  score_inputs_[n].cpu_req = requested_[Cell(n, cpu_dim_)];
  score_inputs_[n].mem_req = requested_[Cell(n, mem_dim_)];
  Invalidate(n);
}

namespace {

// Bit i set when node n0 + i has a free pod slot, is in the static class (`mask`, nullptr = all)
// and has free >= amount in each of the request's kDims columns; no branches, so the compiler
// may vectorise. kDims == 0: `count` columns, known at run time.
template <std::size_t kDims>
uint64_t FitBits(int n0, int n1, const int64_t* const* columns, const int64_t* amounts,
                 std::size_t count, const int64_t* slots, const uint8_t* mask) {
  const std::size_t dims = kDims > 0 ? kDims : count;
  uint64_t bits = 0;
  for (int n = n0; n < n1; ++n) {
    bool ok = slots[n] >= 1;
    if (mask != nullptr) ok &= mask[n] != 0;
    for (std::size_t k = 0; k < dims; ++k)
      ok &= amounts[k] <= columns[k][n];
    bits |= static_cast<uint64_t>(ok) << (n - n0);
  }
  return bits;
}

}  // namespace

int DenseNodes::ScanBestBlocks(const DenseRequest& r, int static_class, int shape,
                               DenseScoring scoring, int start, std::size_t limit,
                               std::vector<int>* out, int* best, bool (*exact)(void*, int),
                               void* exact_context) {
  const int total = size();
  if (total == 0) {
    *best = -1;
    return 0;
  }
  const uint8_t* mask =
      static_masks_[static_class].empty() ? nullptr : static_masks_[static_class].data();
  // The request's columns of free_ and amounts.
  thread_local std::vector<const int64_t*> columns;
  thread_local std::vector<int64_t> amounts;
  columns.clear();
  amounts.clear();
  for (const auto& [d, amount] : r.dims) {
    columns.push_back(&free_[Cell(0, d)]);
    amounts.push_back(amount);
  }
  const std::size_t count = columns.size();
  const int64_t* slots = pod_slots_.data();
  auto fit_bits = [&](int n0, int n1) {
    switch (count) {
      case 0:
        return FitBits<0>(n0, n1, columns.data(), amounts.data(), 0, slots, mask);
      case 1:
        return FitBits<1>(n0, n1, columns.data(), amounts.data(), 1, slots, mask);
      case 2:
        return FitBits<2>(n0, n1, columns.data(), amounts.data(), 2, slots, mask);
      case 3:
        return FitBits<3>(n0, n1, columns.data(), amounts.data(), 3, slots, mask);
      default:
        return FitBits<0>(n0, n1, columns.data(), amounts.data(), count, slots, mask);
    }
  };
  // Highest score first, then the lowest index: the largest ((score + 1) << 32 | ~index). A
  // negative score never wins (as in the plain loop, which starts from score -1); key 0 = none.
  uint64_t best_key = 0;
  constexpr int kBlock = 64;
  int examined = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const int begin = pass == 0 ? start : 0;
    const int end = pass == 0 ? total : start;
    for (int n0 = begin; n0 < end; n0 += kBlock) {
      const int n1 = std::min(end, n0 + kBlock);
      uint64_t bits = fit_bits(n0, n1);
      if (nominated_nodes_ > 0 && std::any_of(nominations_.begin() + n0, nominations_.begin() + n1,
                                              [](int c) { return c != 0; })) {
        // Nominations hold room the mirror does not show: those nodes are decided exactly.
        for (int n = n0; n < n1; ++n) {
          if (nominations_[n] == 0 || (mask != nullptr && mask[n] == 0)) continue;
          const uint64_t bit = uint64_t{1} << (n - n0);
          bits = exact(exact_context, n) ? bits | bit : bits & ~bit;
        }
      }
      // The feasible nodes in scan order; only the first `limit` count, and the scan stops at
      // the last of them.
      const std::size_t room = limit - out->size();
      int found[kBlock];
      std::size_t count_found = 0;
      for (; bits != 0 && count_found < room; bits &= bits - 1)
        found[count_found++] = n0 + std::countr_zero(bits);
      for (std::size_t i = 0; i < count_found; ++i) {
        const int n = found[i];
        const int score = CachedScore(scoring, r, shape, n);
        const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(score) + 1) << 32) |
                             static_cast<uint32_t>(~static_cast<uint32_t>(n));
        best_key = std::max(best_key, score >= 0 ? key : 0);
      }
      out->insert(out->end(), found, found + count_found);
      if (count_found == room) {
        examined += found[count_found - 1] - n0 + 1;
        break;
      }
      examined += n1 - n0;
    }
    if (out->size() >= limit) break;
  }
  *best = best_key == 0 ? -1 : static_cast<int>(~static_cast<uint32_t>(best_key & 0xffffffffu));
  return out->size() >= limit ? examined : total;
}

void DenseNodes::Invalidate(int n) {
  if (++versions_[n] != 0) return;
  // Wrapped around: forget every memo of the node rather than risk an old one matching.
  for (auto& memo : score_memo_)
    memo[n] = ScoreMemo{};
  versions_[n] = 1;
}

int DenseNodes::ShapeOf(DenseScoring scoring, const DenseRequest& r) {
  const auto key = std::make_tuple(scoring, r.cpu, r.memory);
  auto it = shape_by_key_.find(key);
  if (it != shape_by_key_.end()) return it->second;
  if (static_cast<int>(score_memo_.size()) >= kMaxShapes) return -1;
  const int shape = static_cast<int>(score_memo_.size());
  score_memo_.emplace_back(names_.size());
  shape_by_key_.emplace(key, shape);
  return shape;
}

int DenseNodes::StaticClassFor(const Pod& prototype, const std::string& key) {
  auto it = static_class_by_key_.find(key);
  if (it != static_class_by_key_.end()) return it->second;
  std::vector<uint8_t> mask(names_.size());
  bool all = true;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    mask[i] = CheckNodeStatic(prototype, *nodes_[i]).ok() ? 1 : 0;
    all = all && mask[i] != 0;
  }
  if (all) mask.clear();
  const int id = static_cast<int>(static_masks_.size());
  static_masks_.push_back(std::move(mask));
  static_class_by_key_[key] = id;
  return id;
}

bool DenseNodes::FitsAllocatable(const DenseRequest& r, int n) const {
  if (max_pods_[n] < 1) return false;
  for (const auto& [d, amount] : r.dims) {
    if (amount > alloc_[Cell(n, d)]) return false;
  }
  return true;
}

int64_t DenseNodes::TotalAllocatable(std::string_view resource) const {
  int64_t total = 0;
  for (const Node* node : nodes_)
    total = SaturatingAdd(total, node->allocatable.Get(resource));
  return total;
}

}  // namespace capext
