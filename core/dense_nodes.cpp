#include "core/dense_nodes.h"

#include <algorithm>

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
  slice_heads_.assign(n, {});
  slice_used_.assign(n, {});
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
  auto& slices = slices_[n];
  auto& heads = slice_heads_[n];
  auto& slice_used = slice_used_[n];
  // Slices are few per node: comparing the namespace's characters beats hashing it.
  std::size_t i = 0;
  while (i < heads.size() &&
         (heads[i].priority != pod.priority || namespace_names_[heads[i].ns] != pod.ns))
    ++i;
  if (i == slices.size()) {
    int64_t id = namespaces_.Find(pod.ns);
    if (id < 0) {
      id = static_cast<int64_t>(namespace_names_.size());
      namespace_names_.push_back(pod.ns);
      pods_by_priority_.emplace_back();
      namespaces_.Insert(pod.ns, static_cast<uint32_t>(id));
      namespaces_stamp_ = NewContentStamp();
    }
    // Slices stay when they drop to zero: a namespace that ran on a node usually comes back.
    slices.emplace_back(dims_.size());
    heads.push_back({static_cast<uint32_t>(id), pod.priority, 0});
    slice_used.resize(slice_used.size() + dims_.size(), 0);
  }
  NamespaceSlice* it = &slices[i];
  auto& counts = pods_by_priority_[heads[i].ns];
  auto at = std::lower_bound(counts.begin(), counts.end(), pod.priority,
                             [](const auto& entry, int32_t p) { return entry.first < p; });
  if (at == counts.end() || at->first != pod.priority) at = counts.insert(at, {pod.priority, 0});
  at->second += sign;
  heads[i].pods += sign;
  int64_t* used = slice_used.data() + i * dims_.size();
  int64_t* largest = it->largest();
  for (const auto& [name, amount] : pod.requests.entries()) {
    const int d = DimOf(name);
    if (d < 0) continue;
    used[d] = sign > 0 ? SaturatingAdd(used[d], amount) : SaturatingSub(used[d], amount);
    if (sign > 0) largest[d] = std::max(largest[d], amount);
  }
  if (sign > 0) {
    it->members.push_back(&pod);
  } else if (auto m = std::find(it->members.begin(), it->members.end(), &pod);
             m != it->members.end()) {
    *m = it->members.back();
    it->members.pop_back();
    // The largest changes only when the pod leaving was the one member requesting it: a member
    // of the same request (the common case: pods of one workload alike) ends the search at once.
    // A dimension the pod does not request cannot have been its largest but at 0, which stays.
    for (const auto& [name, amount] : pod.requests.entries()) {
      const int d = DimOf(name);
      if (d < 0 || amount < largest[d]) continue;
      int64_t most = 0;
      for (const NormalizedPod* member : it->members) {
        most = std::max(most, member->requests.Get(name));
        if (most >= largest[d]) break;
      }
      largest[d] = most;
    }
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
  for (const auto& [p, count] : pods_by_priority_[static_cast<std::size_t>(ns)]) {
    if (below_priority_only && p >= priority) return false;
    if (count > 0) return true;
  }
  return false;
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
  if (!scoring->ReadsUtilisation()) return scoring->FromUtilisation(0);
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
  return scoring->FromUtilisation(counted == 0 ? 0 : total / counted);
}

}  // namespace capext
