// RandomChanges: random changes of a ClusterState as the watch, /bind and the reclaim controller
// make them — binds, deletions, pods turning terminal or terminating, new pods, reservations and
// their release, our nominations and status.nominatedNodeName, node updates, additions and
// deletions, PriorityClass, ElasticQuota and PDB changes, expiry — for the tests that check that
// derived structures (the DenseNodes mirror, the ledger, the searches) follow every change.
// New objects come from a RandomCluster (its vocabulary: namespaces, classes, node names).
// Thread-safety: one thread per object.
#pragma once

#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "tests/support/random_cluster.h"

namespace capext::testing {

// Decodes a generated pod (as the snapshot loader does). REQUIRES: a valid Pod object.
Pod DecodeGeneratedPod(const JsonTree& pod, const DecodeOptions& options);

// Builds `c` into *out and mirrors it in a DenseNodes of random extra dimensions (GPUs,
// ephemeral-storage, sometimes `pods`, which never becomes a column). REQUIRES: `c` decodes.
void BuildDenseState(RandomCluster& generator, const ClusterCase& c, ClusterState* out);

// A pod to ask about on `state` as it is now: one of its pending pods (as stored), or a new pod
// (pending, now and then nominated; often of a high priority, so that it may preempt).
NormalizedPod QuestionFor(RandomCluster& generator, const ClusterState& state,
                          const DecodeOptions& options);

class RandomChanges {
 public:
  // `generator` must have generated the state's case (its vocabulary is used).
  RandomChanges(RandomCluster* generator, DecodeOptions options)
      : gen_(generator), options_(std::move(options)) {}

  // Applies one random change to `state`; returns what it did (for test messages).
  std::string Apply(ClusterState* state);

  int64_t now_ms() const { return now_ms_; }

 private:
  // Store keys of the state's pods that satisfy `keep`, sorted (the map's order is not stable).
  template <typename Keep>
  std::vector<std::string> PodKeys(const ClusterState& state, Keep keep) const;
  std::string AnyNode(const ClusterState& state);

  RandomCluster* gen_;
  DecodeOptions options_;
  int64_t now_ms_ = 1'800'000'000'000;
  int nodes_added_ = 0;
};

}  // namespace capext::testing
