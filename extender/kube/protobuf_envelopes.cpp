#include "extender/kube/protobuf_envelopes.h"

#include <fmt/format.h>

#include "config/protobuf_wire.h"

namespace capext::kube {
namespace {

using protobuf::Field;
using protobuf::WireReader;

Status Malformed(std::string_view what, const WireReader& reader) {
  return Status::Error(fmt::format("{}: {} at byte {}", what,
                                   protobuf::WireErrorText(reader.error()), reader.offset()));
}

Status WrongType(std::string_view what, const Field& field) {
  return Status::Error(fmt::format("{}: field {} has protobuf wire type {}", what, field.number,
                                   static_cast<int>(field.type)));
}

// The length-delimited field `number` of `message` (the last one, as protobuf reads a repeated
// scalar), or an empty view with *found false.
Status BytesField(std::string_view message, uint32_t number, std::string_view what,
                  std::string_view* out, bool* found) {
  WireReader reader(message);
  Field field;
  *found = false;
  while (reader.Next(&field)) {
    if (field.number != number) continue;
    if (!field.is_bytes()) return WrongType(what, field);
    *out = field.bytes;
    *found = true;
  }
  if (!reader.ok()) return Malformed(what, reader);
  return {};
}

}  // namespace

Status ParseProtobufObject(std::string_view bytes, ProtobufObject* out) {
  if (bytes.substr(0, kProtobufMagic.size()) != kProtobufMagic) {
    return Status::Error("protobuf object: no \"k8s\\0\" prefix");
  }
  ProtobufObject object;
  std::string_view type_meta, encoding;
  bool has_type_meta = false;
  WireReader reader(bytes.substr(kProtobufMagic.size()));
  Field field;
  while (reader.Next(&field)) {
    if (field.number > 4) continue;
    if (!field.is_bytes()) return WrongType("protobuf object", field);
    switch (field.number) {
      case 1:
        type_meta = field.bytes;
        has_type_meta = true;
        break;
      case 2:
        object.raw = field.bytes;
        break;
      case 3:
        encoding = field.bytes;
        break;
      default:
        break;  // contentType: the server leaves it empty; raw is protobuf either way
    }
  }
  if (!reader.ok()) return Malformed("protobuf object", reader);
  if (!encoding.empty()) {
    return Status::Error(
        fmt::format("protobuf object: unsupported contentEncoding \"{}\"", encoding));
  }
  if (has_type_meta) {
    WireReader meta(type_meta);
    while (meta.Next(&field)) {
      if (field.number != 1 && field.number != 2) continue;
      if (!field.is_bytes()) return WrongType("protobuf object typeMeta", field);
      (field.number == 1 ? object.api_version : object.kind) = field.bytes;
    }
    if (!meta.ok()) return Malformed("protobuf object typeMeta", meta);
  }
  *out = object;
  return {};
}

Status ParseProtobufWatchEvent(std::string_view frame, ProtobufWatchEvent* out) {
  std::string_view type, extension;
  bool has_type = false, has_object = false;
  WireReader reader(frame);
  Field field;
  while (reader.Next(&field)) {
    if (field.number != 1 && field.number != 2) continue;
    if (!field.is_bytes()) return WrongType("watch event", field);
    if (field.number == 1) {
      type = field.bytes;
      has_type = true;
    } else {
      extension = field.bytes;
      has_object = true;
    }
  }
  if (!reader.ok()) return Malformed("watch event", reader);
  if (!has_type || type.empty()) return Status::Error("watch event without a type");
  std::string_view raw;
  bool has_raw = false;
  if (has_object) {
    if (Status s = BytesField(extension, 1, "watch event object", &raw, &has_raw); !s.ok()) {
      return s;
    }
  }
  if (!has_raw || raw.empty()) {
    return Status::Error(fmt::format("watch event {} without an object", type));
  }
  ProtobufObject object;
  if (Status s = ParseProtobufObject(raw, &object); !s.ok()) {
    return Status::Error(fmt::format("watch event {}: {}", type, s.message()));
  }
  // metadata (field 1 of every object's message) .resourceVersion (ObjectMeta field 6); a
  // Status's metadata is a ListMeta, whose field 6 means nothing.
  std::string_view version;
  if (object.kind != "Status") {
    std::string_view meta;
    bool has_meta = false, has_version = false;
    if (Status s = BytesField(object.raw, 1, "watch event object", &meta, &has_meta); !s.ok()) {
      return s;
    }
    if (has_meta) {
      if (Status s = BytesField(meta, 6, "watch event object metadata", &version, &has_version);
          !s.ok()) {
        return s;
      }
    }
  }
  out->type.assign(type);
  out->object = raw;
  out->contents = object;
  out->resource_version.assign(version);
  return {};
}

Status ParseProtobufListPage(std::string_view raw, ProtobufListPage* out) {
  ProtobufListPage page;
  WireReader reader(raw);
  Field field;
  while (reader.Next(&field)) {
    if (field.number != 1 && field.number != 2) continue;
    if (!field.is_bytes()) return WrongType("list", field);
    if (field.number == 2) {
      page.items.push_back(field.bytes);
      continue;
    }
    WireReader meta(field.bytes);
    Field m;
    while (meta.Next(&m)) {
      if (m.number != 2 && m.number != 3) continue;
      if (!m.is_bytes()) return WrongType("list metadata", m);
      (m.number == 2 ? page.resource_version : page.continue_token).assign(m.bytes);
    }
    if (!meta.ok()) return Malformed("list metadata", meta);
  }
  if (!reader.ok()) return Malformed("list", reader);
  *out = std::move(page);
  return {};
}

}  // namespace capext::kube
