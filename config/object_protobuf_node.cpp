// DecodeNodeProtobuf (config/object_protobuf_decoder.h). Field numbers: k8s.io/api core/v1 and
// k8s.io/apimachinery meta/v1 generated.proto at tag kubernetes-1.26.1 (see the header).
#include <optional>

#include "config/object_protobuf_decoder.h"
#include "config/object_protobuf_parts.h"

namespace capext {
namespace {

using namespace protobuf_decoding;  // NOLINT: the decoder's own toolkit

// ObjectMeta {name = 1, labels = 11}; NodeSpec {unschedulable = 4, taints = 5};
// NodeStatus {capacity = 1, allocatable = 2}; Taint {key = 1, value = 2, effect = 3}.
constexpr uint32_t kNodeName = 1, kNodeLabels = 11;
constexpr uint32_t kNodeUnschedulable = 4, kNodeTaints = 5;
constexpr uint32_t kNodeCapacity = 1, kNodeAllocatable = 2;

Status ReadTaint(const Field& f, std::vector<Taint>* out) {
  const FieldPath path("spec.taints", out->size());
  std::string_view message;
  if (Status s = TakeBytes(f, path, &message); !s.ok()) return s;
  Taint taint;
  Status s = ForEachField(message, path, [&](const Field& t) -> Status {
    switch (t.number) {
      case 1:
        return TakeString(t, FieldPath(path, ".key"), &taint.key);
      case 2:
        return TakeString(t, FieldPath(path, ".value"), &taint.value);
      case 3:
        return TakeString(t, FieldPath(path, ".effect"), &taint.effect);
      default:
        return {};
    }
  });
  out->push_back(std::move(taint));
  return s;
}

}  // namespace

Status DecodeNodeProtobuf(std::string_view message, Node* out) {
  Node node;
  bool meta_present = false;
  // An empty map is not on the wire, as JSON omits it: present means at least one entry.
  bool allocatable_present = false;
  ResourceList allocatable, capacity;
  Status allocatable_content, capacity_content;
  Status wire = ForEachField(message, "Node", [&](const Field& f) -> Status {
    std::string_view body;
    switch (f.number) {
      case 1:
        if (Status s = TakeBytes(f, "metadata", &body); !s.ok()) return s;
        meta_present = true;
        return ForEachField(body, "metadata", [&](const Field& m) -> Status {
          if (m.number == kNodeName) return TakeString(m, "metadata.name", &node.name);
          if (m.number == kNodeLabels) {
            return TakeStringMapEntry(m, "metadata.labels", &node.labels);
          }
          return {};
        });
      case 2:
        if (Status s = TakeBytes(f, "spec", &body); !s.ok()) return s;
        return ForEachField(body, "spec", [&](const Field& sf) -> Status {
          if (sf.number == kNodeUnschedulable) {
            return TakeBool(sf, "spec.unschedulable", &node.unschedulable);
          }
          if (sf.number == kNodeTaints) return ReadTaint(sf, &node.taints);
          return {};
        });
      case 3:
        if (Status s = TakeBytes(f, "status", &body); !s.ok()) return s;
        return ForEachField(body, "status", [&](const Field& sf) -> Status {
          if (sf.number == kNodeAllocatable) {
            allocatable_present = true;
            return TakeQuantityEntry(sf, "status.allocatable", false, &allocatable,
                                     &allocatable_content);
          }
          if (sf.number == kNodeCapacity) {
            return TakeQuantityEntry(sf, "status.capacity", false, &capacity, &capacity_content);
          }
          return {};
        });
      default:
        return {};
    }
  });
  if (!wire.ok()) return wire;
  if (!meta_present) return Status::Error("metadata: missing");
  // The JSON path checks allocatable before capacity.
  if (!allocatable_content.ok()) return allocatable_content;
  if (!capacity_content.ok()) return capacity_content;
  node.allocatable = allocatable_present ? std::move(allocatable) : std::move(capacity);
  *out = std::move(node);
  return {};
}

}  // namespace capext
