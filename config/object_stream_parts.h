// Pieces shared by the streaming Pod and Node decoders (config/object_stream_decoder.h): the
// root object's kind/apiVersion, objects read member by member with json::Member's choice, and
// the pod spec's lists (containers, tolerations, required node affinity). Internal to config/.
// Each reader starts at its value's first token, consumes the whole value and returns its first
// type or content error (ok when none); malformed JSON is the reader's state, which the walkers
// and ReadRoot report (config/json_pull_fields.h).
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

// A member whose value must be an object when present: *present says whether the current token
// starts an object; a value of another type is skipped and its error returned. Null is absent.
Status ObjectOrAbsent(JsonPullReader& r, std::string_view path, bool* present);

// The members of the root object every decoded kind reads: kind and apiVersion (strings).
struct RootFields {
  std::string kind;
  std::string api_version;
  MemberSlot kind_slot, api_version_slot;
  // Reads `key`'s value into its slot when it is kind or apiVersion; says whether it was.
  bool Read(JsonPullReader& r, std::string_view key);
};

// One element of a list of objects, read by members() (which returns its Status); a non-object
// is an error at `path`.
template <class F>
Status ObjectElement(JsonPullReader& r, std::string_view path, F&& members) {
  if (r.token() != Token::kStartObject) return json::WrongTypeSkip(r, path, "object");
  return members();
}

// An object of which only the member `name` (the best match) is read, by inner() (which
// returns its Status); the rest is skipped. Null counts as absent; a non-object is an error at
// `path`.
template <class F>
Status OnlyMember(JsonPullReader& r, std::string_view path, std::string_view name, F&& inner) {
  bool present = false;
  Status object = ObjectOrAbsent(r, path, &present);
  if (!present) return object;
  MemberSlot slot;
  ForEachMember(r, [&](std::string_view key) {
    if (!slot.Take(key, name)) return r.SkipValue();
    slot.Keep(inner());
    return true;
  });
  return slot.status;
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
    ok = ForEachMember(r, [&](std::string_view key) { return root->Read(r, key) || member(key); });
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

Status ReadTolerations(JsonPullReader& r, std::vector<Toleration>* out);
// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.
Status ReadAffinity(JsonPullReader& r, std::vector<NodeSelectorTerm>* terms);
Status ReadContainers(JsonPullReader& r, std::string_view path,
                      std::vector<ContainerRequests>* out);

}  // namespace capext::stream_decoding
