// JsonPullReader: one JSON text as a stream of tokens, pulled one at a time. RapidJSON's SAX
// reader (no DOM) records the tokens onto a flat tape that is reused from call to call, so that
// nothing is allocated per object once the tape has grown; the decoder then pulls tokens in
// document order. It accepts exactly what rapidjson::Document::Parse(data, size) with default
// flags accepts (same input stream type, same grammar, trailing garbage rejected).
//
// `metadata.managedFields` of the root object, and of the root's "object" member (a watch
// event's object), the bulk of a real object and never read by the decoders, is parsed but not
// recorded: a pull decoder never sees it.
//
// One parse for a watch event: after OfferForReuse() on a reader of a well-formed text (the
// watch line), a reader made on a text that is exactly one object recorded on that tape (the
// event's object, a view into the line) walks those recorded tokens instead of parsing again:
// the object was parsed as part of a well-formed text, so its tokens are what a parse of its
// own would give. ForgetSource() ends the offer, and so does the next parse on the thread; the
// caller must call it before the offered text's memory changes.
//
// Thread-safety: one reader per thread; the tape is thread-local.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace capext::json {

enum class Token : uint8_t {
  kNull,
  kBool,
  kNumber,
  kString,
  kKey,
  kStartObject,
  kEndObject,
  kStartArray,
  kEndArray,
  kEnd,    // the root value was complete and nothing but whitespace followed
  kError,  // malformed JSON: see error()
};

// How RapidJSON classified a number (the DOM keeps the same distinction).
enum class NumberKind : uint8_t { kInt, kUint, kInt64, kUint64, kDouble };

struct TapeToken {
  Token type = Token::kNull;
  NumberKind number_kind = NumberKind::kInt;
  bool bool_value = false;
  uint32_t offset = 0;  // kString / kKey: into the tape's text
  uint32_t length = 0;
  // kStartObject: the byte offset of its '{' in the source; kEndObject: the offset after '}'.
  uint32_t byte_offset = 0;
  // kNumber: the int64 (kInt, kUint, kInt64), the uint64 (kUint, kUint64) or the double's bits.
  uint64_t number_bits = 0;
};

static_assert(sizeof(TapeToken) <= 24, "a token is recorded per JSON value: keep it small");

// The recorded tokens of one text. Reused: clear() keeps the capacity.
struct JsonTape {
  std::vector<TapeToken> tokens;
  std::string text;         // every string, each followed by a NUL
  Status error;             // the parse error, if any
  std::string_view source;  // the text the tokens came from, while it may be reused
  void clear() {
    tokens.clear();
    text.clear();
    error = Status::Ok();
    source = {};
  }
};

class JsonPullReader {
 public:
  // Parses `json` onto this thread's tape (valid until the next reader on this thread); with
  // `may_reuse`, walks the offered tape instead when `json` is one object recorded on it.
  explicit JsonPullReader(std::string_view json, bool may_reuse = false);

  // Whether this reader walks tokens recorded by an earlier parse (for tests and benchmarks).
  bool reused() const { return reused_; }
  // kStartObject / kEndObject: see TapeToken::byte_offset.
  size_t byte_offset() const { return current_->byte_offset; }

  // Lets later readers on this thread reuse this reader's tokens (see above). REQUIRES: the text
  // parsed without error; it stays unchanged until ForgetSource().
  void OfferForReuse();
  // Withdraws the offer.
  static void ForgetSource();

  // Advances to the next token. A malformed text yields kError at once (never its tokens);
  // after kEnd or kError it keeps returning that.
  Token Next();
  Token token() const { return current_ ? current_->type : Token::kNull; }

  // kString / kKey: the full text (may contain NULs) and the same bytes NUL-terminated (as the
  // DOM's GetString(), which stops at the first NUL).
  std::string_view text() const;
  const char* c_text() const;
  bool bool_value() const { return current_->bool_value; }
  NumberKind number_kind() const { return current_->number_kind; }
  int64_t int64_value() const {  // kInt, kUint, kInt64
    return static_cast<int64_t>(current_->number_bits);
  }
  uint64_t uint64_value() const { return current_->number_bits; }  // kUint, kUint64
  double double_value() const {                                    // kDouble
    return std::bit_cast<double>(current_->number_bits);
  }
  // The number as rapidjson::Value::IsInt() would see it.
  bool IsInt() const;

  // Consumes the rest of the value whose first token is the current one (an object or array
  // through its end; a scalar needs nothing). Returns false on malformed JSON.
  bool SkipValue();

  // The parse error, "JSON parse error at offset N: ...". REQUIRES: token() == kError.
  const Status& error() const { return tape_->error; }

 private:
  bool Reuse(std::string_view json);

  std::string_view json_;
  JsonTape* tape_;
  size_t next_ = 0;
  size_t end_index_ = 0;  // one past the last token to walk
  bool reused_ = false;
  const TapeToken* current_ = nullptr;
  TapeToken end_;
};

}  // namespace capext::json
