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

using InputStream = rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream>;

// Records SAX events onto a tape, leaving out managedFields of the root's metadata and of the
// root's "object" member's metadata.
class TapeRecorder {
 public:
  TapeRecorder(JsonTape* tape, const InputStream* stream) : tape_(tape), stream_(stream) {}

  bool Null() { return Scalar(TapeToken{Token::kNull}); }
  bool Bool(bool b) {
    TapeToken t{Token::kBool};
    t.bool_value = b;
    return Scalar(t);
  }
  bool Int(int i) { return Number(NumberKind::kInt, static_cast<uint64_t>(int64_t{i})); }
  bool Uint(unsigned u) { return Number(NumberKind::kUint, u); }
  bool Int64(int64_t i) { return Number(NumberKind::kInt64, static_cast<uint64_t>(i)); }
  bool Uint64(uint64_t u) { return Number(NumberKind::kUint64, u); }
  bool Double(double d) { return Number(NumberKind::kDouble, std::bit_cast<uint64_t>(d)); }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return false; }  // not enabled
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (skipping_) return EndSkippedScalar();
    Push(Token::kString, s, n);
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (skipping_) return true;
    std::string_view key(s, n);
    if (depth_ == 1) {
      in_metadata_ = EqualFold(key, "metadata");
      in_object_ = key == "object";
    }
    if (depth_ == 2 && in_object_) in_object_metadata_ = EqualFold(key, "metadata");
    if (((depth_ == 2 && in_metadata_) || (depth_ == 3 && in_object_metadata_)) &&
        EqualFold(key, "managedFields")) {
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
    tape_->tokens.emplace_back(t);
    return true;
  }
  bool Number(NumberKind kind, uint64_t bits) {
    TapeToken t{Token::kNumber};
    t.number_kind = kind;
    t.number_bits = bits;
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
    TapeToken t{type};
    t.byte_offset = static_cast<uint32_t>(stream_->Tell() - 1);  // '{' or '[' was just taken
    tape_->tokens.emplace_back(t);
    return true;
  }
  bool Close(Token type) {
    --depth_;
    if (skipping_) {
      if (--skip_depth_ == 0) skipping_ = false;
      return true;
    }
    if (depth_ == 1) {
      in_metadata_ = false;
      in_object_metadata_ = false;
    }
    if (depth_ == 2) in_object_metadata_ = false;
    TapeToken t{type};
    t.byte_offset = static_cast<uint32_t>(stream_->Tell());
    tape_->tokens.emplace_back(t);
    return true;
  }
  void Push(Token type, const char* s, size_t n) {
    TapeToken t{type};
    t.offset = static_cast<uint32_t>(tape_->text.size());
    t.length = static_cast<uint32_t>(n);
    tape_->text.append(s, n);
    tape_->text.push_back('\0');
    tape_->tokens.emplace_back(t);
  }

  JsonTape* tape_;
  const InputStream* stream_;
  int depth_ = 0;
  bool in_metadata_ = false;         // inside the root's "metadata" member value (any letter case)
  bool in_object_ = false;           // inside the root's "object" member value
  bool in_object_metadata_ = false;  // inside that object's "metadata" member value
  bool skipping_ = false;
  int skip_depth_ = 0;
};

JsonTape& ThreadTape() {
  thread_local JsonTape tape;
  return tape;
}

}  // namespace

JsonPullReader::JsonPullReader(std::string_view json, bool may_reuse)
    : json_(json), tape_(&ThreadTape()) {
  if (may_reuse && Reuse(json)) return;
  tape_->clear();
  // The same stream type as Document::Parse(const char*, size_t): a MemoryStream read as UTF-8
  // (a BOM skipped; a NUL byte ends the text).
  rapidjson::MemoryStream memory(json.data(), json.size());
  InputStream stream(memory);
  rapidjson::Reader reader;
  TapeRecorder recorder(tape_, &stream);
  rapidjson::ParseResult result = reader.Parse<rapidjson::kParseDefaultFlags>(stream, recorder);
  if (result.IsError()) {
    tape_->error = Status::Error(fmt::format("JSON parse error at offset {}: {}", result.Offset(),
                                             rapidjson::GetParseError_En(result.Code())));
    tape_->tokens.clear();
    end_.type = Token::kError;
  } else {
    end_.type = Token::kEnd;
  }
  end_index_ = tape_->tokens.size();
}

void JsonPullReader::OfferForReuse() {
  if (!reused_ && end_.type == Token::kEnd) tape_->source = json_;
}

bool JsonPullReader::Reuse(std::string_view json) {
  const std::string_view source = tape_->source;
  if (source.empty() || json.empty() || json.data() < source.data() ||
      json.data() + json.size() > source.data() + source.size() || json.front() != '{') {
    return false;
  }
  const size_t begin = static_cast<size_t>(json.data() - source.data());
  const size_t end = begin + json.size();
  const auto& tokens = tape_->tokens;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].type != Token::kStartObject || tokens[i].byte_offset != begin) continue;
    int depth = 0;
    for (size_t j = i; j < tokens.size(); ++j) {
      if (tokens[j].type == Token::kStartObject || tokens[j].type == Token::kStartArray) ++depth;
      if (tokens[j].type == Token::kEndObject || tokens[j].type == Token::kEndArray) --depth;
      if (depth == 0) {
        if (tokens[j].byte_offset != end) return false;
        next_ = i;
        end_index_ = j + 1;
        end_.type = Token::kEnd;
        reused_ = true;
        return true;
      }
    }
    return false;
  }
  return false;
}

void JsonPullReader::ForgetSource() {
  ThreadTape().source = {};
}

Token JsonPullReader::Next() {
  if (current_ == &end_) return end_.type;
  current_ = next_ < end_index_ ? &tape_->tokens[next_++] : &end_;
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
      return uint64_value() <= static_cast<uint64_t>(INT_MAX);
    case NumberKind::kInt64:
      return int64_value() >= INT_MIN && int64_value() <= INT_MAX;
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
