// Pieces shared by the protobuf Pod and Node decoders (config/object_protobuf_decoder.h): walking
// a message's fields, typed reads of one field with its wire type checked, metav1.Time, and the
// map entries of labels and ResourceLists. Internal to config/.
//
// Two kinds of failure, kept apart because the JSON path orders them differently:
//   - wire errors (malformed data, a read field of the wrong wire type): returned at once, and
//     they stop the walk, as a JSON syntax error stops the JSON path;
//   - content errors (a quantity that does not parse, a time out of range): left in a
//     `Status* content` that the caller reports in the JSON path's order once the walk is done.
// `path` names the field for messages ("spec.containers[0].resources.requests"); FieldPath
// builds it on the stack.
// Thread-safety: stateless.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/json_pull_fields.h"
#include "config/protobuf_wire.h"
#include "core/label_selector.h"
#include "core/resource_list.h"
#include "core/status.h"

namespace capext::protobuf_decoding {

using json::FieldPath;
using json::KeepFirst;
using protobuf::Field;
using protobuf::WireReader;
using protobuf::WireType;

// "{path}: {what the wire reader found} at byte {offset}".
Status WireFault(std::string_view path, const WireReader& reader);
// "{path}: protobuf wire type {type}, expected {want}".
Status WrongWireType(std::string_view path, const Field& field, WireType want);

// Calls on_field(field) -> Status for each field of `message`, in wire order; stops at the first
// error it returns, or at malformed data (WireFault at `path`).
template <class F>
Status ForEachField(std::string_view message, std::string_view path, F&& on_field) {
  WireReader reader(message);
  Field field;
  while (reader.Next(&field)) {
    if (Status s = on_field(field); !s.ok()) return s;
  }
  if (!reader.ok()) return WireFault(path, reader);
  return {};
}

// A length-delimited field: its payload (a string, bytes or an embedded message).
Status TakeBytes(const Field& field, std::string_view path, std::string_view* out);
Status TakeString(const Field& field, std::string_view path, std::string* out);
// A varint bool (any non-zero value is true, as Go reads it).
Status TakeBool(const Field& field, std::string_view path, bool* out);
// A varint int32 (the low 32 bits, as Go's decoder keeps them).
Status TakeInt32(const Field& field, std::string_view path, int32_t* out);

// A metav1.Time {int64 seconds = 1; int32 nanos = 2}: seconds * 1000 into *out_ms, which is what
// the JSON path gives for the RFC 3339 text of the same time (whole seconds: Go writes no
// fraction, and kube-apiserver writes nanos 0). An empty message, or Go's zero time written out
// (0001-01-01T00:00:00Z), is what JSON writes as null: 0.
// A time outside the years 0000-9999 (which Go cannot write as JSON) is a content error.
Status TakeTime(const Field& field, std::string_view path, int64_t* out_ms, Status* content);

// One entry {key = 1, value = 2} of a map field; an absent key or value is empty.
Status TakeMapEntry(const Field& field, std::string_view path, std::string_view* key,
                    std::string_view* value);
// One entry of a map<string, string> into *out, key and value cut at a NUL as the JSON path's
// (its keys and values are NUL-terminated C strings).
Status TakeStringMapEntry(const Field& field, std::string_view path, Labels* out);

// One entry of a map<string, Quantity> into *list, in decision units, as the JSON path reads a
// ResourceList: the name cut at a NUL, Quantity::Parse of the text (an absent Quantity or string
// is "0", Go's zero Quantity), negative amounts a content error unless allowed, at most
// ResourceName::kMaxResourceNames distinct names. Once *content holds an error the entry is
// only checked for wire errors (the JSON path stops at the first bad quantity of a list).
Status TakeQuantityEntry(const Field& field, std::string_view path, bool allow_negative,
                         ResourceList* list, Status* content);

// The value of an annotation the JSON path reads by name (json::MemberSlot's choice): an exact
// key wins, else the first key equal to the name ignoring ASCII case. Entries come in key order
// in both encodings (Go sorts map keys in both), so "first" agrees; a repeated key (not written
// by Go) replaces its own earlier value, as Go's map keeps the last.
struct AnnotationPick {
  int rank = 0;  // 0 none, 1 case-insensitive match, 2 exact
  std::string key;
  std::string value;
  void Offer(std::string_view entry_key, std::string_view name, std::string_view entry_value);
};

}  // namespace capext::protobuf_decoding
