// InformerSink: where informers deliver what they list and watch. Implemented by the cluster
// state's writer (decoding lives there); informers only hand over each object's encoded text:
// JSON, or for a watch in protobuf the object's message
// (docs/architecture.md#watching-in-protobuf).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace capext::kube {

enum class WatchEventType { kAdded, kModified, kDeleted };

// How an object handed to Apply is encoded. kProtobuf: the bytes of the object's own message
// (a v1.Pod or v1.Node), taken out of the Kubernetes protobuf envelope, whose kind is the one
// the resource holds.
enum class ObjectEncoding { kJson, kProtobuf };

// Called on the RestClient's client thread (one thread for every informer of a client). Calls for
// one resource arrive in the order the API server produced them: a Replace, then Applies with
// increasing resourceVersions, then possibly another Replace (after a 410 relist or a periodic
// resync) that supersedes everything before it.
class InformerSink {
 public:
  virtual ~InformerSink() = default;
  // The complete current set of objects of `resource` (after a list/relist): each element is
  // one object's JSON text, with kind and apiVersion present.
  virtual void Replace(const std::string& resource, std::vector<std::string> objects_json) = 0;
  // One watch event. For kDeleted the object is its last state, encoded as `encoding` says
  // (kJson: its JSON text, with kind and apiVersion). The view is valid only during the call.
  virtual void Apply(const std::string& resource, WatchEventType type, ObjectEncoding encoding,
                     std::string_view object) = 0;
};

}  // namespace capext::kube
