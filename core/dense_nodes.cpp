#include "core/dense_nodes.h"

#include <algorithm>
#include <bit>

namespace capext {
namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

// UtilisationPermille (node_score.h) with the quotient estimated from a precomputed
// 1000 / allocatable and corrected to the exact integer: divisions were the most expensive step
// of a simulated decision.
int64_t FastPermille(int64_t requested, int64_t add, int64_t allocatable, double per_mille) {
  int64_t used = SaturatingAdd(requested, add);
  if (used > allocatable) used = allocatable;
  if (used < 0 || used > INT64_MAX / 1000) return UtilisationPermille(requested, add, allocatable);
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

// Bit i set when node n0 + i has a free pod slot, is not masked out and has free >= amount in
// each of the request's kDims columns; no branches, so the compiler may vectorise. kDims == 0:
// `count` columns, known at run time.
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

DenseNodes::DenseNodes(const NodeTable& table, std::vector<ResourceName> dims)
    : dims_(std::move(dims)) {
  for (ResourceName always : {kCpuName, kMemoryName}) {
    if (std::find(dims_.begin(), dims_.end(), always) == dims_.end()) dims_.push_back(always);
  }
  dims_.erase(std::remove(dims_.begin(), dims_.end(), kPodsName), dims_.end());
  std::sort(dims_.begin(), dims_.end());
  dims_.erase(std::unique(dims_.begin(), dims_.end()), dims_.end());
  cpu_dim_ = DimOf(kCpuName);
  mem_dim_ = DimOf(kMemoryName);
  Rebuild(table);
}

void DenseNodes::Rebuild(const NodeTable& table) {
  ++generation_;
  names_.clear();
  nodes_.clear();
  index_.clear();
  for (const auto& [name, node] : table.nodes()) {
    index_[name] = static_cast<int>(names_.size());
    names_.push_back(&name);
    nodes_.push_back(&node);
  }
  const std::size_t n = names_.size();
  alloc_.assign(n * dims_.size(), 0);
  free_.assign(n * dims_.size(), 0);
  pod_slots_.assign(n, 0);
  max_pods_.assign(n, kUnlimited);
  score_inputs_.assign(n, ScoreInputs{});
  versions_.assign(n, 1);
  nominations_.assign(n, 0);
  nominated_nodes_ = 0;
  slices_.assign(n, {});
  for (auto& counts : pods_by_priority_)
    counts.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = *nodes_[i];
    for (std::size_t d = 0; d < dims_.size(); ++d)
      alloc_[Cell(static_cast<int>(i), static_cast<int>(d))] = node.allocatable.Get(dims_[d]);
    if (auto max_pods = node.allocatable.Find(kPodsName)) max_pods_[i] = *max_pods;
    ScoreInputs& in = score_inputs_[i];
    in.cpu_alloc = node.allocatable.Get(kCpuName);
    in.mem_alloc = node.allocatable.Get(kMemoryName);
    if (in.cpu_alloc > 0) in.cpu_per_mille = 1000.0 / static_cast<double>(in.cpu_alloc);
    if (in.mem_alloc > 0) in.mem_per_mille = 1000.0 / static_cast<double>(in.mem_alloc);
    const NodeRecord* record = table.Find(*names_[i]);
    Refresh(*record);
    for (const NormalizedPod* pod : record->usage.pods)
      Track(*record, *pod, +1);
  }
}

void DenseNodes::Refresh(const NodeRecord& record) {
  const int n = record.dense;
  if (n < 0 || n >= size()) return;
  const NodeUsage& usage = record.usage;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    const std::size_t cell = Cell(n, static_cast<int>(d));
    free_[cell] = SaturatingSub(alloc_[cell], usage.requested.Get(dims_[d]));
  }
  pod_slots_[n] = max_pods_[n] == kUnlimited ? kUnlimited : max_pods_[n] - usage.pod_count;
  score_inputs_[n].cpu_req = usage.requested.Get(kCpuName);
  score_inputs_[n].mem_req = usage.requested.Get(kMemoryName);
  const bool had = nominations_[n] != 0;
  nominations_[n] = record.fit.nominations;
  nominated_nodes_ += static_cast<int>(nominations_[n] != 0) - static_cast<int>(had);
  if (++versions_[n] == 0) versions_[n] = 1;
}

void DenseNodes::Track(const NodeRecord& record, const NormalizedPod& pod, int sign) {
  const int n = record.dense;
  if (n < 0 || n >= size()) return;
  int64_t id = namespaces_.Find(pod.ns);
  if (id < 0) {
    id = static_cast<int64_t>(namespace_names_.size());
    namespace_names_.push_back(pod.ns);
    pods_by_priority_.emplace_back();
    namespaces_.Insert(pod.ns, static_cast<uint32_t>(id));
  }
  if (int64_t& count = pods_by_priority_[id][pod.priority]; (count += sign) == 0)
    pods_by_priority_[id].erase(pod.priority);
  auto& slices = slices_[n];
  auto it = std::find_if(slices.begin(), slices.end(), [&](const NamespaceSlice& s) {
    return s.ns == static_cast<uint32_t>(id) && s.priority == pod.priority;
  });
  if (it == slices.end()) {
    // Slices stay when they drop to zero: a namespace that ran on a node usually comes back.
    it = slices.insert(
        slices.end(),
        NamespaceSlice{
            static_cast<uint32_t>(id), pod.priority, 0, std::vector<int64_t>(dims_.size(), 0), {}});
  }
  it->pods += sign;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    const int64_t amount = pod.requests.Get(dims_[d]);
    it->used[d] =
        sign > 0 ? SaturatingAdd(it->used[d], amount) : SaturatingSub(it->used[d], amount);
  }
  if (sign > 0) {
    it->members.push_back(&pod);
  } else if (auto m = std::find(it->members.begin(), it->members.end(), &pod);
             m != it->members.end()) {
    *m = it->members.back();
    it->members.pop_back();
  }
}

int DenseNodes::IndexOf(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int DenseNodes::DimOf(ResourceName resource) const {
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d] == resource) return static_cast<int>(d);
  }
  return -1;
}

bool DenseNodes::HasPods(int ns, bool below_priority_only, int32_t priority) const {
  const auto& counts = pods_by_priority_[static_cast<std::size_t>(ns)];
  if (counts.empty()) return false;
  return !below_priority_only || counts.begin()->first < priority;
}

int DenseNodes::NamespaceId(std::string_view ns) const {
  return static_cast<int>(namespaces_.Find(ns));
}

DenseRequest DenseNodes::MakeRequest(const ResourceList& requests) const {
  DenseRequest r;
  for (const auto& [name, amount] : requests.entries()) {
    if (amount <= 0 || name == kPodsName) continue;
    const int d = DimOf(name);
    if (d >= 0) {
      r.dims.emplace_back(d, amount);
    } else {
      r.complete = false;
    }
  }
  r.cpu = requests.Get(kCpuName);
  r.memory = requests.Get(kMemoryName);
  return r;
}

bool DenseNodes::FitsAllocatable(const DenseRequest& r, int n) const {
  if (max_pods_[n] < 1) return false;
  for (const auto& [d, amount] : r.dims) {
    if (amount > alloc_[Cell(n, d)]) return false;
  }
  return true;
}

int64_t DenseNodes::TotalAllocatable(ResourceName resource) const {
  int64_t total = 0;
  for (const Node* node : nodes_)
    total = SaturatingAdd(total, node->allocatable.Get(resource));
  return total;
}

int DenseNodes::Score(NodeScoring scoring, const DenseRequest& r, int n) const {
  if (scoring == NodeScoring::kNone) return 0;
  const ScoreInputs& in = score_inputs_[n];
  int64_t total = 0;
  int counted = 0;
  if (in.cpu_alloc > 0) {
    total += FastPermille(in.cpu_req, r.cpu, in.cpu_alloc, in.cpu_per_mille);
    ++counted;
  }
  if (in.mem_alloc > 0) {
    total += FastPermille(in.mem_req, r.memory, in.mem_alloc, in.mem_per_mille);
    ++counted;
  }
  return ScoreFromPermille(scoring, counted == 0 ? 0 : total / counted);
}

int DenseNodes::ScanBestBlocks(const DenseRequest& r, const uint8_t* mask, int start,
                               std::size_t limit, std::vector<int>* out, int* best,
                               bool (*exact)(const void*, int), const void* exact_context,
                               int (*score)(const void*, int), const void* score_context) const {
  const int total = size();
  *best = -1;
  if (total == 0 || out->size() >= limit) return 0;
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
  // Highest score first, then the first in name order (PickNode's choice): the largest
  // ((score + 1) << 32 | ~n). A negative score never wins; key 0 = none.
  uint64_t best_key = 0;
  constexpr int kBlock = 64;
  int examined = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const int begin = pass == 0 ? start : 0;
    const int end = pass == 0 ? total : start;
    for (int n0 = begin; n0 < end; n0 += kBlock) {
      const int n1 = std::min(end, n0 + kBlock);
      uint64_t bits = fit_bits(n0, n1);
      const bool nominated =
          nominated_nodes_ > 0 && std::any_of(nominations_.begin() + n0, nominations_.begin() + n1,
                                              [](int32_t c) { return c != 0; });
      if (!r.complete || nominated) {
        // What the columns do not show (nominations, untracked resources): decided exactly.
        for (int n = n0; n < n1; ++n) {
          if ((r.complete && nominations_[n] == 0) || (mask != nullptr && mask[n] == 0)) continue;
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
        const int s = score(score_context, found[i]);
        const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(s) + 1) << 32) |
                             static_cast<uint32_t>(~static_cast<uint32_t>(found[i]));
        if (s >= 0 && key > best_key) {
          best_key = key;
          *best = found[i];
        }
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
  return out->size() >= limit ? examined : total;
}

}  // namespace capext
