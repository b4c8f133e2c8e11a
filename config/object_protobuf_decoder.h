// Decoding a Pod or a Node from its Kubernetes protobuf encoding
// (application/vnd.kubernetes.protobuf) into the core record, with the hand-written wire reader
// of config/protobuf_wire.h (no libprotobuf, no generated code). Only the fields the JSON
// decoders read are looked at; every other field, known or not, is stepped over unparsed.
// Field numbers are those of k8s.io/api core/v1 and k8s.io/apimachinery meta/v1 generated.proto
// (kubernetes/api and kubernetes/apimachinery tag kubernetes-1.26.1, commits d8429a47d18a and
// 373a5f752d44); the fields 1.26 lacks are cited where they are read
// (config/object_protobuf_pod.cpp).
//
// `message`: the bytes of one v1.Pod / v1.Node message: the `raw` of the runtime.Unknown
// envelope (kube::ParseProtobufObject, without the "k8s\0" magic), or one item of a v1.PodList.
//
// Contract, checked by tests against objects captured from a real kube-apiserver and by a fuzz
// target: for every object the API server sends, the result equals what DecodePodJson /
// DecodeNodeJson (config/object_stream_decoder.h) give for the same object's JSON encoding: the
// same verdict and, when ok, the same Pod / Node, every member
// (docs/architecture.md#the-protobuf-decoders). In particular:
//   - quantities (`message Quantity { optional string string = 1; }`, the canonical text the
//     JSON carries too) are parsed by the same Quantity::Parse; an absent one reads as "0", as
//     Go's zero Quantity does;
//   - metav1.Time {int64 seconds = 1; int32 nanos = 2} gives seconds * 1000: the JSON text has
//     whole seconds only (kube-apiserver writes nanos = 0); an empty Time is the zero
//     time, which JSON writes as null (absent);
//   - maps are repeated entry messages {key = 1, value = 2}; labels and node selectors are cut at
//     a NUL as the JSON path's are; the annotations the JSON path reads are chosen as it chooses
//     them (an exact key, else the first case-insensitive one, in key order, which both
//     encodings share);
//   - a message or repeated field that occurs twice is merged (later scalars win, lists append),
//     as Go's decoder merges it before the server's JSON encoder would see it.
// On error *out is unchanged and the message names the field like the JSON path does
// ("spec.containers[0].resources.requests.cpu: quantity ...", "spec.preemptionPolicy: unknown
// preemption policy ..."). Content errors come in the JSON path's order (metadata, then spec in
// its order of checks, then status). Malformed wire data (truncation, bad lengths, wrong wire
// types for a field that is read, groups, field number 0) is an error naming the innermost
// field being read; it is never a crash and never allocates more than the input's size.
//
// Thread-safety: stateless.
#pragma once

#include <string_view>

#include "config/object_codec.h"
#include "core/node.h"
#include "core/pod.h"
#include "core/status.h"

namespace capext {

// `message`: the bytes of one v1.Pod / v1.Node message: the `raw` of the runtime.Unknown
// envelope (no "k8s\0" magic), or one item of a v1.PodList.
Status DecodePodProtobuf(std::string_view message, const DecodeOptions& options, Pod* out);
Status DecodeNodeProtobuf(std::string_view message, Node* out);

}  // namespace capext
