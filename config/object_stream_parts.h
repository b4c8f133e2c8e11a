// Pieces shared by the streaming Pod and Node decoders (config/object_stream_decoder.h): the
// root object's kind/apiVersion, objects read member by member with json::Member's choice, and
// the pod spec's lists (containers, tolerations, required node affinity). Internal to config/.
// Each reader starts at its value's first token and consumes the whole value; it returns false
// only for malformed JSON and records type or content errors in *status (the first one kept).
// Thread-safety: stateless.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/json_pull_fields.h"
#include "core/pod.h"
#include "core/pod_request.h"

namespace capext::stream_decoding {

using json::FieldPath;
using json::ForEachElement;
using json::ForEachMember;
using json::JsonPullReader;
using json::KeepFirst;
using json::MemberSlot;
using json::Token;

// A member whose value must be an object when present: false (after recording the error and
// skipping it) unless the current token starts an object. Null counts as absent.
bool ObjectOrAbsent(JsonPullReader& r, std::string_view path, Status* status, bool* present);

// The members of the root object every decoded kind reads: kind and apiVersion (strings).
struct RootFields {
  std::string kind;
  std::string api_version;
  MemberSlot kind_slot, api_version_slot;
  // Reads `key`'s value when it is kind or apiVersion (*handled); false on malformed JSON.
  bool Read(JsonPullReader& r, std::string_view key, bool* handled);
};

// One element of a list of objects: a non-object is an error at `path`.
template <class F>
bool ObjectElement(JsonPullReader& r, std::string_view path, Status* status, F&& members) {
  if (r.token() != Token::kStartObject) return json::WrongTypeSkip(r, path, "object", status);
  return members();
}

// An object of which only the member `name` (the best match) is read, by inner(&its status);
// the rest is skipped. Null counts as absent; a non-object is an error at `path`.
template <class F>
bool OnlyMember(JsonPullReader& r, std::string_view path, std::string_view name, Status* status,
                F&& inner) {
  bool present = false;
  if (!ObjectOrAbsent(r, path, status, &present)) return false;
  if (!present) return true;
  MemberSlot slot;
  bool ok = ForEachMember(r, [&](std::string_view key) {
    if (slot.Take(key, name)) return inner(&slot.status);
    return r.SkipValue();
  });
  KeepFirst(status, slot.status);
  return ok;
}

// Reads the root object: kind/apiVersion plus the members `member` handles. Returns the parse
// or root-type error, if any.
template <class F>
Status ReadRoot(JsonPullReader& r, RootFields* root, F&& member) {
  const Token first = r.Next();
  if (first == Token::kError) return r.error();
  bool ok = true;
  if (first != Token::kStartObject) {
    ok = r.SkipValue();
  } else {
    ok = ForEachMember(r, [&](std::string_view key) {
      bool handled = false;
      if (!root->Read(r, key, &handled)) return false;
      return handled ? true : member(key);
    });
  }
  // The whole text must be well-formed, whatever was read of it.
  while (ok) {
    const Token t = r.Next();
    if (t == Token::kEnd) break;
    if (t == Token::kError) ok = false;
  }
  if (r.token() == Token::kError) return r.error();
  if (!ok) return Status::Error("malformed JSON");
  if (first != Token::kStartObject) return Status::Error("expected an object");
  Status s = root->kind_slot.status;
  KeepFirst(&s, root->api_version_slot.status);
  return s;
}

bool ReadTolerations(JsonPullReader& r, std::vector<Toleration>* out, Status* status);
// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.
bool ReadAffinity(JsonPullReader& r, std::vector<NodeSelectorTerm>* terms, Status* status);
bool ReadContainers(JsonPullReader& r, std::string_view path, std::vector<ContainerRequests>* out,
                    Status* status);

}  // namespace capext::stream_decoding
