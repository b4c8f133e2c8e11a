// ClusterCase: a cluster as a test builds it — the Kubernetes objects of a snapshot (Nodes, Pods,
// ElasticQuotas, PriorityClasses, PodDisruptionBudgets, as the API server serves them), plus what
// a snapshot file cannot say: the quota semantics, the accelerator-model annotation, and the room
// held by /bind's reservations and by our reclaim's nominations. It builds a ClusterState through
// the same decoder and ApplySnapshot that `capacity-extender serve --snapshot` uses, prints itself
// as a snapshot YAML for people, and shrinks itself while a failure persists.
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/object_codec.h"
#include "core/cluster_state.h"
#include "tests/support/json_tree.h"

namespace capext::testing {

// A reservation (ClusterState::Reserve, as /bind makes it) or our nomination
// (ClusterState::Nominate, as the reclaim controller makes it) of a pod of the case.
struct HeldRoom {
  enum class Kind { kReservation, kNomination };
  Kind kind = Kind::kReservation;
  std::string pod_key;  // the pod's store key: its uid, else "namespace/name"
  std::string node;
  int64_t reserved_ms = 0;  // a reservation's time (the reserved pod's start for victim order)
};

// Held room never expires within a test (Expire is called with earlier times).
inline constexpr int64_t kHeldExpiresMs = 4'000'000'000'000;

struct ClusterCase {
  uint64_t seed = 0;
  QuotaSemantics semantics = QuotaSemantics::kCapacityExtender;
  std::string accelerator_annotation;  // DecodeOptions::accelerator_model_annotation
  std::vector<JsonTree> objects;       // each with apiVersion and kind
  std::vector<HeldRoom> held;          // applied after the objects, in order

  DecodeOptions decode_options() const;
  // The objects of `kind`.
  std::vector<const JsonTree*> ObjectsOf(const std::string& kind) const;
  // A pod of the case by store key (PodKey), or nullptr.
  const JsonTree* FindPod(const std::string& key) const;
};

// "namespace/name" or "name" of an object, for messages.
std::string ObjectName(const JsonTree& object);
// The store key ClusterState files a pod under: metadata.uid, else "namespace/name".
std::string PodKey(const JsonTree& pod);

// The objects as one JSON List (a snapshot file's text).
std::string SnapshotJson(const ClusterCase& c);

// Decodes the objects, applies them as ApplySnapshot does, then the held room. Fails when an
// object does not decode (a generator bug).
Status BuildState(const ClusterCase& c, ClusterState* out);

// A snapshot YAML for `capacity-extender serve --snapshot` / `explain --snapshot`, headed by
// `notes` (as comments) and by the settings a snapshot cannot carry: --quota-semantics, the
// accelerator annotation, and each held room (which `serve` would not have).
std::string SnapshotYaml(const ClusterCase& c, const std::vector<std::string>& notes);

// The smallest case found by dropping one object or held room at a time while `fails` holds for
// the smaller case (greedy, repeated until no single drop keeps it failing). REQUIRES: fails(c).
// `fails` must tolerate any subset (held room of a dropped pod is ignored by BuildState).
ClusterCase ShrinkCase(ClusterCase c, const std::function<bool(const ClusterCase&)>& fails);

}  // namespace capext::testing
