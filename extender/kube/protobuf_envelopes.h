// The API server's protobuf envelopes (application/vnd.kubernetes.protobuf) around objects: one
// object in its "k8s\0" + runtime.Unknown envelope, and one frame of a protobuf watch stream.
// Objects are handed on as views of their bytes and never decoded here
// (config/object_protobuf_decoder.h decodes a Pod or a Node; ParseApiStatus a Status).
//
// What kube-apiserver 1.26.1 sends, captured (tests/fixtures/kube-apiserver-protobuf/README.md):
//   - a GET or LIST answer, and any error body: "k8s\0" + runtime.Unknown {typeMeta = 1
//     {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3, contentType = 4}, `raw` being the
//     object's own message (a v1.Pod, a v1.PodList, a meta/v1 Status);
//   - a watch (Content-Type "application/vnd.kubernetes.protobuf;stream=watch"): frames, each a
//     4-byte big-endian length and that many bytes; a frame is a bare meta/v1 WatchEvent
//     {type = 1, object = 2 (RawExtension {raw = 1})}, with no magic and no envelope of its own,
//     while the event's object, RawExtension.raw, is enveloped ("k8s\0" + Unknown) as a GET's is.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace capext::kube {

inline constexpr std::string_view kProtobufMagic{"k8s\0", 4};

// One object in the Kubernetes protobuf envelope: "k8s\0" + runtime.Unknown{typeMeta{apiVersion,
// kind}, raw, contentEncoding, contentType}.
struct ProtobufObject {
  std::string_view api_version, kind, raw;  // views into the input
};
// Fails on a missing magic, malformed wire data, or a contentEncoding (kube-apiserver sets none:
// a compressed or otherwise encoded raw would not be the object's message).
Status ParseProtobufObject(std::string_view bytes, ProtobufObject* out);

// One frame of a protobuf watch stream (the bytes after the frame's 4-byte big-endian length).
struct ProtobufWatchEvent {
  std::string type;  // "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
  // The event's object, still in its envelope (for ParseApiStatus, an ERROR's Status).
  std::string_view object;
  // `object`'s envelope, parsed once here: its kind and its own message (`raw`, what
  // DecodePodProtobuf / DecodeNodeProtobuf read). Views into the frame.
  ProtobufObject contents;
  // The object's metadata.resourceVersion (ObjectMeta field 6 of the object's message); empty if
  // none, and for a Status (an ERROR event: its metadata is a ListMeta).
  std::string resource_version;
};
// Fails on malformed wire data, a frame without a type or an object, or an object that is not
// in the envelope.
Status ParseProtobufWatchEvent(std::string_view frame, ProtobufWatchEvent* out);

// One page of a LIST answer: the raw of its envelope (kind "PodList", "NodeList", ...), a
// list message {metadata = 1 (ListMeta {resourceVersion = 2, continue = 3}), items = 2}.
struct ProtobufListPage {
  std::string resource_version;  // the list's point in time
  std::string continue_token;    // empty on the last page
  // Each item's message (a v1.Pod, a v1.Node, without envelope): views into the input.
  std::vector<std::string_view> items;
};
Status ParseProtobufListPage(std::string_view raw, ProtobufListPage* out);

}  // namespace capext::kube
