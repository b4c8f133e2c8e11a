// ChangeJournal: what changed in a ClusterState, in order, so that a reader keeping a view
// derived from the state (the reclaim loop's index of pending pods) learns what to look at again
// without scanning the state. ClusterState records into it from its mutation paths once
// EnableChangeJournal was called; nothing is recorded (and nothing is paid) otherwise.
//
// Each change is one entry, a kind and a key, numbered by a sequence that only grows:
//   kPod          a pod's store key: added, removed, or changed in a field decisions read
//                 (including its reservation and our nomination of it starting or ending);
//   kNode         a node's name: added, removed, its spec changed, or what holds room on it
//                 changed (a counted pod came or went, a reservation, a nomination naming it);
//   kUsage        a namespace whose used (bound + reserved) changed;
//   kQuota        a namespace whose ElasticQuota in use was added, removed or changed its spec
//                 (min, max, parent, identity; not status.used);
//   kNominations  a namespace where a nomination (ours or status.nominatedNodeName) started,
//                 ended or changed;
//   kPriorityClass  a PriorityClass added, removed or changed (the pods whose priority changes
//                 with it are not recorded one by one: this entry stands for all of them);
//   kPdb          a namespace where a PodDisruptionBudget was added, replaced or removed.
// Only real changes are recorded: an upsert of what the state already holds (a watch resync, an
// update of a field the state does not keep, such as an annotation or ElasticQuota status.used)
// records nothing, so a quiet cluster leaves the journal quiet.
//
// Bounded: the last `capacity` entries are kept. A reader that fell further behind is told it
// overflowed and must re-derive everything from the state.
// Pure: no clocks, no threads. Thread-safety: none; ClusterState serialises writers and readers
// (Since is const: concurrent readers are fine while no writer runs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/elastic_quota.h"
#include "core/node.h"
#include "core/pod.h"
#include "core/priority_class.h"

namespace capext {

class ChangeJournal {
 public:
  enum class Kind : uint8_t { kPod, kNode, kUsage, kQuota, kNominations, kPriorityClass, kPdb };

  static constexpr std::size_t kDefaultCapacity = 65'536;

  // REQUIRES: capacity > 0.
  explicit ChangeJournal(std::size_t capacity = kDefaultCapacity);

  // Records one change (a reader may have read up to the entry before: nothing is merged).
  void Record(Kind kind, std::string_view key);

  // --- what ClusterState's mutation paths record --------------------------------------------
  // A pod stored over `before` (nullptr: a new pod): nothing when no field decisions read
  // differs; else the pod, the nodes it counts on before and after, and its namespace's usage
  // when what it counts there changed.
  void PodUpserted(const NormalizedPod* before, const NormalizedPod& after);
  // A pod removed: the pod, and its node and namespace usage when it counted.
  void PodErased(const NormalizedPod& pod);
  // A node stored over `before` (nullptr: a new node or one only pods named): the node when
  // anything decisions read differs.
  void NodeUpserted(const Node* before, const Node& after);
  // A reservation of the pod on `node` started or ended: the pod, its namespace's usage, the node.
  void ReservationChanged(std::string_view pod_key, std::string_view ns, std::string_view node);
  // A nomination of the pod to `node` started, ended or changed: the pod, its namespace's
  // nominations, the node.
  void NominationChanged(std::string_view pod_key, std::string_view ns, std::string_view node);
  // True when the quota in use would change from `before` (nullptr: none) to `after`.
  static bool QuotaSpecDiffers(const ElasticQuota* before, const ElasticQuota& after);
  // A PriorityClass stored over `before` (nullptr: new): recorded when it differs.
  void PriorityClassUpserted(const PriorityClass* before, const PriorityClass& after);

  // --- reading ---------------------------------------------------------------------------------
  // The sequence number of the last entry recorded; 0 before the first.
  uint64_t last_sequence() const { return next_sequence_ - 1; }

  struct Changes {
    // Entries after `since` were dropped (or `since` is not a sequence of this journal): the
    // lists are empty and the reader must re-derive everything from the state.
    bool overflowed = false;
    uint64_t through = 0;  // the last sequence covered: the reader's next `since`
    // Keys by kind, sorted, without duplicates.
    std::vector<std::string> pods, nodes, usage, quotas, nominations, priority_classes, pdbs;
    bool empty() const;
  };
  // Every change recorded after sequence `since` (0 = from the start).
  Changes Since(uint64_t since) const;

  std::size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    Kind kind = Kind::kPod;
    std::string key;
  };

  std::size_t capacity_;
  std::vector<Entry> ring_;  // entry of sequence s at (s - 1) % capacity_
  uint64_t next_sequence_ = 1;
};

// True when no field a decision reads differs between the two (every member of Pod, and the
// quota request normalisation derived).
bool SameForDecisions(const NormalizedPod& a, const NormalizedPod& b);
// True when no field a decision reads differs (every member of Node).
bool SameForDecisions(const Node& a, const Node& b);

}  // namespace capext
