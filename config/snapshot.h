// Snapshot files (docs/architecture.md#embedded-and-live-mode): a YAML or JSON stream of Kubernetes
// objects, several `---` documents or one `kind: List` with `items` — what `kubectl get
// nodes,pods,elasticquotas,priorityclasses,poddisruptionbudgets -A -o yaml` prints. Kinds read:
// Node, Pod, ElasticQuota (both API groups), PriorityClass, PodDisruptionBudget; others are skipped
// with a note. Errors name the document, kind/namespace/name and field.
// Thread-safety: stateless functions; a Snapshot is a value.
#pragma once

#include <string>
#include <vector>

#include "config/object_codec.h"
#include "core/cluster_state.h"

namespace capext {

struct Snapshot {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  std::vector<ElasticQuota> quotas;
  std::vector<PriorityClass> priority_classes;
  std::vector<PodDisruptionBudget> pdbs;
  std::vector<std::string> notes;  // skipped kinds, and the like
};

// `source` names the input in messages (a file name).
Status ParseSnapshot(const std::string& text, const std::string& source,
                     const DecodeOptions& options, Snapshot* out);
// Adds one decoded object (or every item of a List) to `out`; `where` prefixes errors.
Status AddToSnapshot(const rapidjson::Value& object, const DecodeOptions& options,
                     const std::string& where, Snapshot* out);
Status LoadSnapshotFile(const std::string& path, const DecodeOptions& options, Snapshot* out);

// Adds every object to `state` (priority classes first, so pod priorities resolve).
void ApplySnapshot(const Snapshot& snapshot, ClusterState* state);

// Reads a whole file. Fails with a message naming the path.
Status ReadFileToString(const std::string& path, std::string* out);

}  // namespace capext
