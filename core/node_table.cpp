#include "core/node_table.h"

#include <algorithm>

#include "core/dense_nodes.h"

namespace capext {
namespace {
const NodeUsage kNoUsage;
}  // namespace

NodeTable::NodeTable() = default;
NodeTable::~NodeTable() = default;
NodeTable::NodeTable(NodeTable&&) noexcept = default;
NodeTable& NodeTable::operator=(NodeTable&&) noexcept = default;

void NodeTable::EnableDense(std::vector<ResourceName> dims) {
  dense_ = std::make_unique<DenseNodes>(*this, std::move(dims));
  RebuildDense();
}

void NodeTable::RebuildDense() {
  if (dense_ == nullptr) return;
  for (NodeRecord& record : records_)
    record.dense = -1;
  int n = 0;
  for (const auto& [name, node] : nodes_)
    FindMutable(name)->dense = n++;
  dense_->Rebuild(*this);
}

void NodeTable::Upsert(Node node) {
  node.allocatable.ShrinkToFit();
  std::string name = node.name;
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    it = nodes_.emplace(std::move(name), std::move(node)).first;
  } else {
    it->second = std::move(node);
  }
  NodeRecord& record = RecordFor(it->first);
  record.node = &it->second;
  RefreshFit(record);
  // The dense mirror is rebuilt: a new node renumbers it, a changed one has new allocatable
  // columns (node changes are rare next to pod changes).
  RebuildDense();
}

void NodeTable::Delete(std::string_view name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  if (NodeRecord* record = FindMutable(name)) {
    record->node = nullptr;
    RefreshFit(*record);
    MaybeDrop(*record);
  }
  // Pods bound to a deleted node keep counting until they are deleted themselves (the API
  // server's pod garbage collector does that), exactly as their quota sees them.
  nodes_.erase(it);
  RebuildDense();
}

const NodeRecord* NodeTable::Find(std::string_view name) const {
  const int64_t id = index_.Find(name);
  return id < 0 ? nullptr : &records_[static_cast<std::size_t>(id)];
}

NodeRecord* NodeTable::FindMutable(std::string_view name) {
  return const_cast<NodeRecord*>(Find(name));
}

std::optional<NodeInfo> NodeTable::FindNode(std::string_view name) const {
  const NodeRecord* record = Find(name);
  if (record == nullptr || record->node == nullptr) return std::nullopt;
  return NodeInfo{*record->node, &record->usage};
}

const NodeUsage& NodeTable::UsageOf(std::string_view name) const {
  const NodeRecord* record = Find(name);
  return record == nullptr ? kNoUsage : record->usage;
}

NodeRecord& NodeTable::RecordFor(std::string_view name) {
  if (NodeRecord* found = FindMutable(name)) return *found;
  uint32_t id;
  if (!free_records_.empty()) {
    id = free_records_.back();
    free_records_.pop_back();
  } else {
    id = static_cast<uint32_t>(records_.size());
    records_.emplace_back();
  }
  NodeRecord& record = records_[id];
  record.name = std::string(name);
  index_.Insert(record.name, id);
  return record;
}

void NodeTable::MaybeDrop(NodeRecord& record) {
  if (record.node != nullptr || !record.usage.pods.empty() || record.usage.pod_count != 0 ||
      record.fit.nominations != 0) {
    return;
  }
  for (const auto& [resource, amount] : record.usage.requested.entries()) {
    if (amount != 0) return;
  }
  const auto id = static_cast<uint32_t>(&record - records_.data());
  index_.Erase(record.name);
  record = NodeRecord{};
  free_records_.push_back(id);
}

void NodeTable::RefreshFit(NodeRecord& record) {
  NodeFitSummary& fit = record.fit;
  if (record.node == nullptr) {
    fit.free_cpu = fit.free_memory = fit.free_ephemeral_storage = 0;
    fit.free_pods = std::numeric_limits<int64_t>::max();
    fit.static_checks = false;
    return;
  }
  const Node& node = *record.node;
  const ResourceList& requested = record.usage.requested;
  fit.free_cpu = SaturatingSub(node.allocatable.Get(kCpuName), requested.Get(kCpuName));
  fit.free_memory = SaturatingSub(node.allocatable.Get(kMemoryName), requested.Get(kMemoryName));
  fit.free_ephemeral_storage = SaturatingSub(node.allocatable.Get(kEphemeralStorageName),
                                             requested.Get(kEphemeralStorageName));
  if (auto max_pods = node.allocatable.Find(kPodsName)) {
    fit.free_pods = SaturatingSub(*max_pods, record.usage.pod_count);
  } else {
    fit.free_pods = std::numeric_limits<int64_t>::max();
  }
  fit.static_checks = node.unschedulable;
  for (const auto& taint : node.taints) {
    if (taint.effect == "NoSchedule" || taint.effect == "NoExecute") fit.static_checks = true;
  }
  if (dense_ != nullptr) dense_->Refresh(record);
}

void NodeTable::AddPod(std::string_view node, const NormalizedPod& pod) {
  NodeRecord& record = RecordFor(node);
  record.usage.pods.push_back(&pod);
  record.usage.requested.Add(pod.requests);
  ++record.usage.pod_count;
  RefreshFit(record);
  if (dense_ != nullptr) dense_->PodAdded(record, pod);
}

void NodeTable::RemovePod(std::string_view node, const NormalizedPod& pod) {
  NodeRecord* record = FindMutable(node);
  if (record == nullptr) return;
  NodeUsage& usage = record->usage;
  auto pos = std::find(usage.pods.begin(), usage.pods.end(), &pod);
  if (pos != usage.pods.end()) usage.pods.erase(pos);
  usage.requested.Subtract(pod.requests);
  --usage.pod_count;
  RefreshFit(*record);
  if (dense_ != nullptr) dense_->PodRemoved(*record, pod);
  MaybeDrop(*record);
}

void NodeTable::ChangeNominations(std::string_view node, int delta) {
  NodeRecord& record = RecordFor(node);
  record.fit.nominations += delta;
  if (dense_ != nullptr) dense_->Refresh(record);
  MaybeDrop(record);
}

}  // namespace capext
