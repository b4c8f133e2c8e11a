#include "config/json_pull_reader.h"

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <climits>

#include <fmt/format.h>

#include "config/json_fields.h"

namespace capext::json {
namespace {

// Records SAX events onto a tape, leaving out the root's metadata.managedFields values.
class TapeRecorder {
 public:
  explicit TapeRecorder(JsonTape* tape) : tape_(tape) {}

  bool Null() { return Scalar(TapeToken{Token::kNull}); }
  bool Bool(bool b) {
    TapeToken t{Token::kBool};
    t.bool_value = b;
    return Scalar(t);
  }
  bool Int(int i) { return Number(NumberKind::kInt, i, 0, 0); }
  bool Uint(unsigned u) { return Number(NumberKind::kUint, static_cast<int64_t>(u), u, 0); }
  bool Int64(int64_t i) { return Number(NumberKind::kInt64, i, 0, 0); }
  bool Uint64(uint64_t u) { return Number(NumberKind::kUint64, 0, u, 0); }
  bool Double(double d) { return Number(NumberKind::kDouble, 0, 0, d); }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return false; }  // not enabled
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (skipping_) return EndSkippedScalar();
    Push(Token::kString, s, n);
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (skipping_) return true;
    std::string_view key(s, n);
    if (depth_ == 1) in_metadata_ = EqualFold(key, "metadata");
    if (depth_ == 2 && in_metadata_ && EqualFold(key, "managedFields")) {
      skipping_ = true;  // the key and its whole value stay off the tape
      skip_depth_ = 0;
      return true;
    }
    Push(Token::kKey, s, n);
    return true;
  }
  bool StartObject() { return Open(Token::kStartObject); }
  bool EndObject(rapidjson::SizeType) { return Close(Token::kEndObject); }
  bool StartArray() { return Open(Token::kStartArray); }
  bool EndArray(rapidjson::SizeType) { return Close(Token::kEndArray); }

 private:
  bool Scalar(const TapeToken& t) {
    if (skipping_) return EndSkippedScalar();
    tape_->tokens.push_back(t);
    return true;
  }
  bool Number(NumberKind kind, int64_t i, uint64_t u, double d) {
    TapeToken t{Token::kNumber};
    t.number_kind = kind;
    t.int64_value = i;
    t.uint64_value = u;
    t.double_value = d;
    return Scalar(t);
  }
  bool EndSkippedScalar() {
    if (skip_depth_ == 0) skipping_ = false;
    return true;
  }
  bool Open(Token type) {
    ++depth_;
    if (skipping_) {
      ++skip_depth_;
      return true;
    }
    tape_->tokens.push_back(TapeToken{type});
    return true;
  }
  bool Close(Token type) {
    --depth_;
    if (skipping_) {
      if (--skip_depth_ == 0) skipping_ = false;
      return true;
    }
    if (depth_ == 1) in_metadata_ = false;
    tape_->tokens.push_back(TapeToken{type});
    return true;
  }
  void Push(Token type, const char* s, size_t n) {
    TapeToken t{type};
    t.offset = static_cast<uint32_t>(tape_->text.size());
    t.length = static_cast<uint32_t>(n);
    tape_->text.append(s, n);
    tape_->text.push_back('\0');
    tape_->tokens.push_back(t);
  }

  JsonTape* tape_;
  int depth_ = 0;
  bool in_metadata_ = false;  // inside the root's "metadata" member value (any letter case)
  bool skipping_ = false;
  int skip_depth_ = 0;
};

JsonTape& ThreadTape() {
  thread_local JsonTape tape;
  return tape;
}

}  // namespace

JsonPullReader::JsonPullReader(std::string_view json) : tape_(&ThreadTape()) {
  tape_->clear();
  // The same stream type as Document::Parse(const char*, size_t): a MemoryStream read as UTF-8
  // (a BOM skipped; a NUL byte ends the text).
  rapidjson::MemoryStream memory(json.data(), json.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> stream(memory);
  rapidjson::Reader reader;
  TapeRecorder recorder(tape_);
  rapidjson::ParseResult result = reader.Parse<rapidjson::kParseDefaultFlags>(stream, recorder);
  if (result.IsError()) {
    tape_->error = Status::Error(fmt::format("JSON parse error at offset {}: {}", result.Offset(),
                                             rapidjson::GetParseError_En(result.Code())));
    tape_->tokens.clear();
    end_.type = Token::kError;
  } else {
    end_.type = Token::kEnd;
  }
}

Token JsonPullReader::Next() {
  if (current_ == &end_) return end_.type;
  current_ = next_ < tape_->tokens.size() ? &tape_->tokens[next_++] : &end_;
  return current_->type;
}

std::string_view JsonPullReader::text() const {
  return std::string_view(tape_->text.data() + current_->offset, current_->length);
}

const char* JsonPullReader::c_text() const {
  return tape_->text.data() + current_->offset;
}

bool JsonPullReader::IsInt() const {
  switch (current_->number_kind) {
    case NumberKind::kInt:
      return true;
    case NumberKind::kUint:
    case NumberKind::kUint64:
      return current_->uint64_value <= static_cast<uint64_t>(INT_MAX);
    case NumberKind::kInt64:
      return current_->int64_value >= INT_MIN && current_->int64_value <= INT_MAX;
    case NumberKind::kDouble:
      return false;
  }
  return false;
}

bool JsonPullReader::SkipValue() {
  const Token first = token();
  if (first != Token::kStartObject && first != Token::kStartArray) return first != Token::kError;
  int depth = 1;
  while (depth > 0) {
    switch (Next()) {
      case Token::kStartObject:
      case Token::kStartArray:
        ++depth;
        break;
      case Token::kEndObject:
      case Token::kEndArray:
        --depth;
        break;
      case Token::kEnd:
      case Token::kError:
        return false;
      default:
        break;
    }
  }
  return true;
}

}  // namespace capext::json
