#include "core/plan_what_if.h"

#include <algorithm>
#include <limits>

#include "core/device_demand.h"
#include "core/node_fit.h"

namespace capext {

namespace {

// The free amounts of node fit's summary (NodeFitSummary) with the node's requested change of
// cpu, memory and ephemeral storage (`change`, PlanWhatIf::change_) and of its pod count.
PlanWhatIf::Need FreeOf(const NodeRecord& record, const PlanWhatIf::Need& change, int32_t pods) {
  const NodeFitSummary& fit = record.fit;
  return {SaturatingSub(fit.free_cpu, change[0]), SaturatingSub(fit.free_memory, change[1]),
          SaturatingSub(fit.free_ephemeral_storage, change[2]), SaturatingSub(fit.free_pods, pods)};
}

// Where a resource's requested change is kept in a Need (cpu, memory, ephemeral storage), or -1.
int NeedIndexOf(ResourceName name) {
  if (name == kCpuName) return 0;
  if (name == kMemoryName) return 1;
  if (name == kEphemeralStorageName) return 2;
  return -1;
}

}  // namespace

PlanWhatIf::PlanWhatIf(const ClusterState& state) : state_(state), totals_(state.totals()) {
  for (const auto& [name, node] : state.nodes()) {
    const NodeRecord* record = state.FindNodeRecord(name);
    if (record == nullptr || record->node == nullptr) continue;
    index_.emplace(record->name, static_cast<int>(records_.size()));
    records_.push_back(record);
  }
  requested_.resize(records_.size());
  change_.assign(records_.size(), Need{0, 0, 0, 0});
  pods_.assign(records_.size(), 0);
  is_dirty_.assign(records_.size(), false);
  while (leaves_ < node_count())
    leaves_ *= 2;
  const int64_t none = std::numeric_limits<int64_t>::min();
  max_.assign(static_cast<std::size_t>(2 * leaves_), Need{none, none, none, none});
  for (int i = 0; i < node_count(); ++i)
    max_[static_cast<std::size_t>(leaves_ + i)] = FreeOf(record(i), Need{0, 0, 0, 0}, 0);
  for (int at = leaves_ - 1; at >= 1; --at) {
    for (std::size_t k = 0; k < 4; ++k) {
      max_[static_cast<std::size_t>(at)][k] = std::max(
          max_[static_cast<std::size_t>(2 * at)][k], max_[static_cast<std::size_t>(2 * at + 1)][k]);
    }
  }
}

int PlanWhatIf::NodeOf(const NormalizedPod& pod) const {
  std::string_view node = pod.node_name;
  if (node.empty()) {
    const Reservation* r = state_.FindReservation(pod.store_key());
    if (r == nullptr) return -1;
    node = r->node;
  }
  const auto it = index_.find(node);
  return it == index_.end() ? -1 : it->second;
}

void PlanWhatIf::Remove(const std::vector<const NormalizedPod*>& pods,
                        const std::vector<int>& nodes) {
  for (std::size_t i = 0; i < pods.size(); ++i) {
    if (pods[i]->group.empty() || removed_.insert(pods[i]).second) Change(*pods[i], nodes[i], -1);
  }
}

void PlanWhatIf::Restore(const std::vector<const NormalizedPod*>& pods,
                         const std::vector<int>& nodes) {
  for (std::size_t i = 0; i < pods.size(); ++i) {
    if (pods[i]->group.empty() || removed_.erase(pods[i]) != 0) Change(*pods[i], nodes[i], +1);
  }
}

void PlanWhatIf::Reserve(int node, const NormalizedPod& pod, int sign) {
  ChangeNode(node, pod, sign);
}

const ResourceList& PlanWhatIf::UsedOf(int tree_node) const {
  for (const auto& [n, used] : used_) {
    if (n == tree_node) return used;
  }
  return state_.ledger().NodeUsed(tree_node);
}

ResourceList* PlanWhatIf::MutableUsed(int tree_node) {
  for (auto& [n, used] : used_) {
    if (n == tree_node) return &used;
  }
  used_.emplace_back(tree_node, state_.ledger().NodeUsed(tree_node));
  return &used_.back().second;
}

// The ledger's and the node table's arithmetic for a pod that leaves (-1) or comes back (+1):
// its requests on its node (when it has one), its quota request on its leaf, every ancestor and
// the totals (a held pod has no node: its quota only).
void PlanWhatIf::Change(const NormalizedPod& pod, int node, int sign) {
  if (node >= 0) ChangeNode(node, pod, sign);
  if (state_.QuotaFor(pod.ns) == nullptr) return;
  // docs/devices.md#5-a-shared-claim-is-charged-once, "Victims": the devices of a claim another
  // holder keeps are not freed (victim selection's rule).
  const DeviceDemand* devices = pod.device_demand();
  const bool kept = devices != nullptr && !devices->kept.empty();
  ResourceList freed;
  if (kept) {
    freed = pod.quota_request();
    freed.Subtract(devices->kept);
  }
  const ResourceList& change = kept ? freed : pod.quota_request();
  const QuotaTree& tree = state_.ledger().tree();
  const int leaf = tree.LeafOf(pod.ns);
  for (int n = leaf; n >= 0; n = tree.parent(n)) {
    ResourceList* used = MutableUsed(n);
    for (const auto& [name, amount] : change.entries())
      used->AddTo(name, sign > 0 ? amount : SaturatingSub(0, amount));
  }
  const ElasticQuota& root = tree.quota(tree.RootOf(leaf));
  for (const auto& [name, amount] : change.entries()) {
    if (CountsInTotals(state_.semantics(), root, name))
      totals_.used.AddTo(name, sign > 0 ? amount : SaturatingSub(0, amount));
  }
}

void PlanWhatIf::ChangeNode(int node, const NormalizedPod& pod, int sign) {
  ResourceList& requested = requested_[static_cast<std::size_t>(node)];
  Need& change = change_[static_cast<std::size_t>(node)];
  for (const auto& [name, amount] : pod.requests.entries()) {
    const int64_t delta = sign > 0 ? amount : SaturatingSub(0, amount);
    requested.AddTo(name, delta);
    // The same saturating sum as the list's (AddTo), kept where FreeOf reads it.
    if (const int k = NeedIndexOf(name); k >= 0)
      change[static_cast<std::size_t>(k)] =
          SaturatingAdd(change[static_cast<std::size_t>(k)], delta);
  }
  pods_[static_cast<std::size_t>(node)] += sign;
  if (!is_dirty_[static_cast<std::size_t>(node)]) {
    is_dirty_[static_cast<std::size_t>(node)] = true;
    dirty_.push_back(node);
  }
}

void PlanWhatIf::Flush() {
  for (const int node : dirty_) {
    Refresh(node);
    is_dirty_[static_cast<std::size_t>(node)] = false;
  }
  dirty_.clear();
}

// A subtree's maxima depend on its children's only: the walk up stops at the first that stays.
void PlanWhatIf::Refresh(int node) {
  const auto i = static_cast<std::size_t>(node);
  std::size_t at = static_cast<std::size_t>(leaves_) + i;
  const Need leaf = FreeOf(record(node), change_[i], pods_[i]);
  if (leaf == max_[at]) return;
  max_[at] = leaf;
  for (at /= 2; at >= 1; at /= 2) {
    Need up;
    for (std::size_t k = 0; k < 4; ++k)
      up[k] = std::max(max_[2 * at][k], max_[2 * at + 1][k]);
    if (up == max_[at]) return;
    max_[at] = up;
  }
}

PlanWhatIf::Need PlanWhatIf::NeedOf(const NormalizedPod& pod) {
  Need need{0, 0, 0, 1};
  for (const auto& [name, amount] : pod.requests.entries()) {
    if (amount <= 0) continue;
    if (name == kCpuName) need[0] = amount;
    if (name == kMemoryName) need[1] = amount;
    if (name == kEphemeralStorageName) need[2] = amount;
  }
  return need;
}

bool PlanWhatIf::NeedsFullCheck(const NormalizedPod& pod) {
  if (!pod.node_selector.empty() || !pod.required_affinity.empty()) return true;
  return std::any_of(pod.requests.entries().begin(), pod.requests.entries().end(),
                     [](const auto& e) {
                       return e.second > 0 && e.first != kPodsName && e.first != kCpuName &&
                              e.first != kMemoryName && e.first != kEphemeralStorageName;
                     });
}

bool PlanWhatIf::FitsOn(const NormalizedPod& pod, const Need& need, bool full_check, int node,
                        const std::unordered_set<std::string>& skip) const {
  const NodeRecord& rec = record(node);
  const auto i = static_cast<std::size_t>(node);
  if (!full_check && !rec.fit.static_checks && rec.fit.nominations == 0) {
    // NodeFitScreen's summary test, on the changed free amounts.
    return SummaryFits(FreeOf(rec, change_[i], pods_[i]), need);
  }
  if (!CheckNodeStatic(pod, *rec.node).ok()) return false;
  ResourceList requested = rec.usage.requested;
  requested.Add(requested_[i]);
  int32_t pod_count = rec.usage.pod_count + pods_[i];
  if (state_.HasNominations()) {
    const std::string& self = pod.store_key();
    state_.ForEachNomination([&](const Nomination& n) {
      if (n.node != rec.name || n.uid == self || n.priority < pod.priority) return;
      if (skip.count(n.uid) != 0 || removed_.count(state_.FindPod(n.uid)) != 0) return;
      requested.Add(n.node_request);
      ++pod_count;
    });
  }
  return CheckNodeResources(pod, *rec.node, requested, pod_count).ok();
}

}  // namespace capext

namespace capext {

PlanWhatIf::Need PlanWhatIf::AmountsOf(const NormalizedPod& pod) {
  Need amounts{0, 0, 0, 0};
  for (const auto& [name, amount] : pod.requests.entries()) {
    if (const int k = NeedIndexOf(name); k >= 0) amounts[static_cast<std::size_t>(k)] = amount;
  }
  return amounts;
}

bool PlanWhatIf::FitsOnWithout(const NormalizedPod& pod, const Need& need, bool full_check,
                               int node, const std::unordered_set<std::string>& skip,
                               const std::vector<const NormalizedPod*>& without) {
  if (without.empty()) return FitsOn(pod, need, full_check, node, skip);
  const NodeRecord& rec = record(node);
  const auto i = static_cast<std::size_t>(node);
  if (!full_check && !rec.fit.static_checks && rec.fit.nominations == 0) {
    // FitsOn's summary test on the change that Reserve(node, *p, -1) for each would leave: the
    // same saturating sums, in the same order (ChangeNode's).
    Need change = change_[i];
    for (const NormalizedPod* p : without) {
      for (const auto& [name, amount] : p->requests.entries()) {
        if (const int k = NeedIndexOf(name); k >= 0)
          change[static_cast<std::size_t>(k)] =
              SaturatingAdd(change[static_cast<std::size_t>(k)], SaturatingSub(0, amount));
      }
    }
    return SummaryFits(FreeOf(rec, change, pods_[i] - static_cast<int32_t>(without.size())), need);
  }
  for (const NormalizedPod* p : without)
    ChangeNode(node, *p, -1);
  const bool fits = FitsOn(pod, need, full_check, node, skip);
  for (const NormalizedPod* p : without)
    ChangeNode(node, *p, +1);
  return fits;
}

}  // namespace capext
