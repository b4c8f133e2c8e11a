// Typed reads of the value under a JsonPullReader, with exactly the semantics of json_fields.h
// (null = absent, the same type checks, the same quantity and time parsing), for decoders that
// pull tokens instead of walking a DOM. Each Pull* starts at the value's first token, consumes
// the whole value, and returns its type or content error (the first one, for a value with
// several parts; ok when none): an error never stops the walk.
//
// Malformed JSON is the reader's own state, not a result of these helpers: the tape holds only
// well-formed text, and a malformed or truncated one makes the reader answer kError (or kEnd)
// from then on. The walkers (ForEachMember, ForEachElement) return false when they meet it where
// a token of the object or array was due, so an enclosing walker stops too and the decoder's
// root (ReadRoot) reports it. A walker's callback returns whether to go on walking: true after it
// consumed its value, whatever the value's content.
//
// Member selection follows json::Member: MemberSlot::Take says whether a key selects a field now.
//
// Thread-safety: stateless helpers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/json_pull_reader.h"
#include "core/label_selector.h"
#include "core/resource_list.h"
#include "core/status.h"

namespace capext::json {

// One field of an object read from a token stream. json::Member picks the first exact match of
// a name, else the first case-insensitive one; a later member replaces an earlier choice only
// when it matches better, so Take() tells the caller to reset the field and decode this value.
struct MemberSlot {
  int rank = 0;  // 0 none yet, 1 case-insensitive match, 2 exact match
  Status status;
  bool Take(std::string_view key, std::string_view name);
  // The status of the value just taken (Take() reset it to ok). An ok one is not even moved:
  // this runs once per decoded field of every watch event.
  void Keep(Status s) {
    if (!s.ok()) status = std::move(s);
  }
};

// Keeps the first error. Inline: called per list element and per field on the decode path.
inline void KeepFirst(Status* into, const Status& s) {
  if (into->ok() && !s.ok()) *into = s;
}

// Calls member(key) for each member of the object whose kStartObject is current; `member` must
// consume the value (its first token is current when called). False on malformed JSON.
template <class F>
bool ForEachMember(JsonPullReader& r, F&& member) {
  while (true) {
    Token t = r.Next();
    if (t == Token::kEndObject) return true;
    if (t != Token::kKey) return false;
    const std::string_view key = r.text();  // stays valid: the tape does not move
    t = r.Next();
    if (t == Token::kEnd || t == Token::kError || t == Token::kKey) return false;
    if (!member(key)) return false;
  }
}

// Calls element(index) for each element of the array whose kStartArray is current.
template <class F>
bool ForEachElement(JsonPullReader& r, F&& element) {
  for (size_t i = 0;; ++i) {
    Token t = r.Next();
    if (t == Token::kEndArray) return true;
    if (t == Token::kEnd || t == Token::kError || t == Token::kKey || t == Token::kEndObject) {
      return false;
    }
    if (!element(i)) return false;
  }
}

// A field path for messages ("spec.containers[0].resources"), built on the stack.
class FieldPath {
 public:
  FieldPath(std::string_view base, std::string_view suffix);
  FieldPath(std::string_view base, size_t index);  // base[index]
  std::string_view view() const { return {buffer_.data(), buffer_.size()}; }
  operator std::string_view() const { return view(); }

 private:
  fmt::basic_memory_buffer<char, 192> buffer_;
};

// Skips the current value and returns "{path}: expected {want}, got {type of the current token}".
Status WrongTypeSkip(JsonPullReader& r, std::string_view path, const char* want);

// Null leaves *out unchanged (absent), as in json_fields.h.
Status PullString(JsonPullReader& r, std::string_view path, std::string* out);
Status PullBool(JsonPullReader& r, std::string_view path, bool* out);
Status PullInt32(JsonPullReader& r, std::string_view path, std::optional<int32_t>* out);
Status PullTime(JsonPullReader& r, std::string_view path, int64_t* out_ms);
// An object of strings (null members skipped); keys and values cut at a NUL, as the DOM's.
Status PullStringMap(JsonPullReader& r, std::string_view path, Labels* out);
Status PullStringArray(JsonPullReader& r, std::string_view path, std::vector<std::string>* out);
// An object of quantities in decision units; *out is set (possibly empty) when it is an object.
Status PullResourceList(JsonPullReader& r, std::string_view path, bool allow_negative,
                        std::optional<ResourceList>* out);

// The members of the object whose kStartObject is current that name string fields: names[f]
// (selected as MemberSlot does) is pulled into *fields[f], at `path`.name; other members are
// skipped. The first field's error, if any (a taint, a toleration).
template <std::size_t N>
Status PullStringFields(JsonPullReader& r, std::string_view path,
                        const std::array<std::string_view, N>& names,
                        const std::array<std::string*, N>& fields) {
  MemberSlot slots[N];
  ForEachMember(r, [&](std::string_view key) {
    for (std::size_t f = 0; f < N; ++f) {
      if (slots[f].Take(key, names[f])) {
        fields[f]->clear();
        slots[f].Keep(PullString(r, FieldPath(path, FieldPath(".", names[f])), fields[f]));
        return true;
      }
    }
    return r.SkipValue();
  });
  Status first;
  for (const auto& slot : slots)
    KeepFirst(&first, slot.status);
  return first;
}

}  // namespace capext::json
