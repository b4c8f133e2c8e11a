// Decoding a Pod or a Node straight from its JSON text (a watch event's or a list item's object)
// into the core record, through RapidJSON's SAX reader and a reused token tape (no DOM; nothing
// allocated beyond what the record holds once the tape has grown). metadata.managedFields and
// every member the core does not read are parsed and dropped.
//
// Contract, checked by tests and a fuzz target: for every input the result equals the DOM path
// of object_codec.h, that is rapidjson::Document::Parse(json) then DecodeKubeObject(doc, options,
// "Pod" / "Node"), whenever the object's kind is that one: the same verdict (ok or error) and,
// when ok, the same Pod / Node. Messages name the field like the DOM path's, though with several
// faults the first one named may differ. *kind receives the object's kind (the default when it
// has none) so that a caller can hand any other kind to the DOM path.
//
// A watch event's object parsed by kube::ParseWatchEvent on this thread is not parsed again: the
// tokens it offered are walked (json::JsonPullReader::OfferForReuse).
//
// Thread-safety: any thread (the token tape is per thread).
#pragma once

#include <string>
#include <string_view>

#include "config/object_codec.h"
#include "core/node.h"
#include "core/pod.h"
#include "core/status.h"

namespace capext {

// On error *out is unchanged.
Status DecodePodJson(std::string_view json, const DecodeOptions& options, Pod* out,
                     std::string* kind);
Status DecodeNodeJson(std::string_view json, Node* out, std::string* kind);

}  // namespace capext
