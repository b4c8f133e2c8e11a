// DecodeNodeJson (config/object_stream_decoder.h).
#include <optional>

#include "config/object_stream_decoder.h"
#include "config/object_stream_parts.h"

namespace capext {

using namespace stream_decoding;  // NOLINT: the decoder's own toolkit

namespace {

// spec.taints: a list of {key, value, effect} objects.
Status ReadTaints(JsonPullReader& r, std::vector<Taint>* taints) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartArray) return json::WrongTypeSkip(r, "spec.taints", "array");
  Status first;
  ForEachElement(r, [&](size_t i) {
    const json::FieldPath path("spec.taints", i);
    KeepFirst(&first, ObjectElement(r, path, [&] {
      Taint taint;
      static constexpr std::array<std::string_view, 3> kNames = {"key", "value", "effect"};
      Status element =
          json::PullStringFields<3>(r, path, kNames, {&taint.key, &taint.value, &taint.effect});
      taints->push_back(std::move(taint));
      return element;
    }));
    return true;
  });
  return first;
}

}  // namespace

Status DecodeNodeJson(std::string_view json, Node* out, std::string* kind) {
  JsonPullReader r(json, /*may_reuse=*/true);  // a watch event's object: parsed already
  RootFields root;
  root.kind = "Node";
  Node node;
  bool meta_present = false;
  Status meta_status, spec_status, status_status;
  MemberSlot meta_slot, spec_slot, status_slot;
  MemberSlot name_slot, labels_slot;
  MemberSlot unschedulable_slot, taints_slot;
  MemberSlot allocatable_slot, capacity_slot;
  std::optional<ResourceList> allocatable, capacity;
  Status s = ReadRoot(r, &root, [&](std::string_view key) {
    if (meta_slot.Take(key, "metadata")) {
      node.name.clear();
      node.labels = Labels{};
      name_slot = labels_slot = MemberSlot{};
      meta_status = ObjectOrAbsent(r, "metadata", &meta_present);
      if (!meta_present) return true;
      return ForEachMember(r, [&](std::string_view member) {
        if (name_slot.Take(member, "name")) {
          node.name.clear();
          name_slot.Keep(json::PullString(r, "metadata.name", &node.name));
          return true;
        }
        if (labels_slot.Take(member, "labels")) {
          node.labels = Labels{};
          labels_slot.Keep(json::PullStringMap(r, "metadata.labels", &node.labels));
          return true;
        }
        return r.SkipValue();
      });
    }
    if (spec_slot.Take(key, "spec")) {
      node.unschedulable = false;
      node.taints.clear();
      unschedulable_slot = taints_slot = MemberSlot{};
      bool present = false;
      spec_status = ObjectOrAbsent(r, "spec", &present);
      if (!present) return true;
      return ForEachMember(r, [&](std::string_view member) {
        if (unschedulable_slot.Take(member, "unschedulable")) {
          node.unschedulable = false;
          unschedulable_slot.Keep(json::PullBool(r, "spec.unschedulable", &node.unschedulable));
          return true;
        }
        if (taints_slot.Take(member, "taints")) {
          node.taints.clear();
          taints_slot.Keep(ReadTaints(r, &node.taints));
          return true;
        }
        return r.SkipValue();
      });
    }
    if (status_slot.Take(key, "status")) {
      allocatable.reset();
      capacity.reset();
      allocatable_slot = capacity_slot = MemberSlot{};
      bool present = false;
      status_status = ObjectOrAbsent(r, "status", &present);
      if (!present) return true;
      return ForEachMember(r, [&](std::string_view member) {
        if (allocatable_slot.Take(member, "allocatable")) {
          allocatable.reset();
          allocatable_slot.Keep(
              json::PullResourceList(r, "status.allocatable", false, &allocatable));
          return true;
        }
        if (capacity_slot.Take(member, "capacity")) {
          capacity.reset();
          capacity_slot.Keep(json::PullResourceList(r, "status.capacity", false, &capacity));
          return true;
        }
        return r.SkipValue();
      });
    }
    return r.SkipValue();
  });
  *kind = root.kind;
  if (!s.ok()) return s;
  if (!meta_present) {
    return meta_status.ok() ? Status::Error("metadata: missing") : meta_status;
  }
  for (const Status* part : {&meta_status, &name_slot.status, &labels_slot.status, &spec_status,
                             &unschedulable_slot.status, &taints_slot.status, &status_status,
                             &allocatable_slot.status, &capacity_slot.status}) {
    if (!part->ok()) return *part;
  }
  node.allocatable = allocatable ? std::move(*allocatable) : capacity.value_or(ResourceList{});
  *out = std::move(node);
  return {};
}

}  // namespace capext
