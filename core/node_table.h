// NodeTable: every node of the cluster state with what is bound (or reserved) on it. One record
// per node name — nodes, and names that only pods, reservations or nominations mention — found
// through a flat hash index. Each record carries the node's usage (its pods: bound and reserved
// alike, requested resources, pod count) and a fit summary that lets node fit be decided for most
// nodes with a few integer comparisons (NodeFitScreen in node_fit.h). ClusterState is the only
// writer; it keeps the usage in step with pods, reservations and nominations (cluster_state.h
// states the invariants). Thread-safety: none; one writer at a time, readers never overlap a
// writer. Pointers and references handed out are valid until the next change.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memory>

#include "core/name_index.h"
#include "core/node.h"
#include "core/pod.h"

namespace capext {

// What is on one node: its bound, non-terminal pods and the pods /bind reserved on it, alike
// (docs/capacity-semantics.md#6-accounting-used-reservations-nominations: a reserved pod is the pod
// bound to its node for every decision).
struct NodeUsage {
  std::vector<const NormalizedPod*> pods;  // bound and reserved pods, in arrival order
  ResourceList requested;                  // their requests
  int32_t pod_count = 0;                   // pods.size()
};

// The room left on a node for the resources nearly every pod requests, and whether anything
// else on the node needs the full check (see NodeFitScreen).
struct NodeFitSummary {
  int64_t free_cpu = 0;  // allocatable - requested, saturating
  int64_t free_memory = 0;
  int64_t free_ephemeral_storage = 0;
  int64_t free_pods = std::numeric_limits<int64_t>::max();  // unlimited without "pods"
  bool static_checks = false;  // spec.unschedulable, or a NoSchedule/NoExecute taint
  int32_t nominations = 0;     // nominations naming the node (an upper bound: ours + status)
};

// Everything known under one node name: the Node (nullptr while only pods, reservations or
// nominations name it), its usage and its fit summary (first: what /filter reads for most nodes
// is on one cache line).
struct NodeRecord {
  NodeFitSummary fit;
  const Node* node = nullptr;
  NodeUsage usage;
  std::string name;
  int32_t dense = -1;  // the node's index in DenseNodes, when enabled and the node exists
};

// A view of one node: valid while the state is not modified.
struct NodeInfo {
  const Node& node;
  const NodeUsage* usage = nullptr;  // never null for a NodeInfo handed out by the state
};

class DenseNodes;

class NodeTable {
 public:
  NodeTable();
  ~NodeTable();
  NodeTable(const NodeTable&) = delete;
  NodeTable& operator=(const NodeTable&) = delete;
  NodeTable(NodeTable&&) noexcept;
  NodeTable& operator=(NodeTable&&) noexcept;

  void Upsert(Node node);
  void Delete(std::string_view name);

  // Nodes in name order.
  const std::map<std::string, Node, std::less<>>& nodes() const { return nodes_; }
  // The record of `name` (a hash lookup, no allocation), or nullptr when nothing names it.
  const NodeRecord* Find(std::string_view name) const;
  std::optional<NodeInfo> FindNode(std::string_view name) const;
  // The usage of `name` (empty when nothing is on it).
  const NodeUsage& UsageOf(std::string_view name) const;

  // A pod starts or stops being on `node`: a bound, non-terminal pod on its spec.nodeName, or a
  // pending pod /bind reserved there. `pod` must stay at its address while it is on the node.
  void AddPod(std::string_view node, const NormalizedPod& pod);
  void RemovePod(std::string_view node, const NormalizedPod& pod);
  // A nomination naming `node` starts (+1) or stops (-1).
  void ChangeNominations(std::string_view node, int delta);

  // Counted pods' priorities changed in place (a PriorityClass change): the dense mirror, which
  // files them by priority, is rebuilt.
  void PrioritiesChanged() { RebuildDense(); }

  // Keeps a DenseNodes mirror tracking `dims` (see dense_nodes.h) from now on.
  void EnableDense(std::vector<ResourceName> dims);
  // The mirror, or nullptr when not enabled.
  const DenseNodes* dense() const { return dense_.get(); }

 private:
  NodeRecord* FindMutable(std::string_view name);
  NodeRecord& RecordFor(std::string_view name);
  // Drops the record once nothing names it any more.
  void MaybeDrop(NodeRecord& record);
  void RefreshFit(NodeRecord& record);
  void RebuildDense();

  std::map<std::string, Node, std::less<>> nodes_;
  // Freed slots are reused; references into records_ are valid until the next change.
  std::vector<NodeRecord> records_;
  std::vector<uint32_t> free_records_;
  NameIndex index_;
  std::unique_ptr<DenseNodes> dense_;
};

}  // namespace capext
