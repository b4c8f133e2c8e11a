#include "bench/dense_nodes.h"

#include <limits>

#include "core/node_fit.h"

namespace capext {

std::optional<DenseScoring> DenseScoringFromName(std::string_view name) {
  if (name == "least-allocated") return DenseScoring::kLeastAllocated;
  if (name == "most-allocated") return DenseScoring::kMostAllocated;
  if (name == "none") return DenseScoring::kNone;
  return std::nullopt;
}

DenseNodes::DenseNodes(const ClusterState& state, std::vector<std::string> dims) : dims_(std::move(dims)) {
  stride_ = std::max<std::size_t>(1, dims_.size());
  for (const auto& [name, node] : state.nodes()) {
    index_[name] = static_cast<int>(names_.size());
    names_.push_back(name);
    nodes_.push_back(&node);
  }
  const std::size_t n = names_.size();
  alloc_.assign(n * stride_, 0);
  free_.assign(n * stride_, 0);
  pod_slots_.assign(n, 0);
  max_pods_.assign(n, std::numeric_limits<int64_t>::max());
  score_inputs_.assign(n, ScoreInputs{});
  nominations_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = *nodes_[i];
    for (std::size_t d = 0; d < dims_.size(); ++d) alloc_[i * stride_ + d] = node.allocatable.Get(dims_[d]);
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
  r.cpu = requests.Get(kResourceCPU);
  r.memory = requests.Get(kResourceMemory);
  return r;
}

void DenseNodes::Resync(const ClusterState& state, int n) {
  const NodeUsage& usage = state.UsageOf(names_[n]);
  const std::size_t base = static_cast<std::size_t>(n) * stride_;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    free_[base + d] = SaturatingSub(alloc_[base + d], usage.requested.Get(dims_[d]));
  }
  pod_slots_[n] = max_pods_[n] == std::numeric_limits<int64_t>::max()
                      ? std::numeric_limits<int64_t>::max()
                      : max_pods_[n] - usage.pod_count;
  score_inputs_[n].cpu_req = usage.requested.Get(kResourceCPU);
  score_inputs_[n].mem_req = usage.requested.Get(kResourceMemory);
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
  const std::size_t base = static_cast<std::size_t>(n) * stride_;
  for (const auto& [d, amount] : r.dims) {
    if (amount > alloc_[base + d]) return false;
  }
  return true;
}

int64_t DenseNodes::TotalAllocatable(std::string_view resource) const {
  int64_t total = 0;
  for (const Node* node : nodes_) total = SaturatingAdd(total, node->allocatable.Get(resource));
  return total;
}

}  // namespace capext
