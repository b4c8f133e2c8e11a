// How ParseRequestBody (extender_wire.h) reads a body; internal to extender_wire.cpp.
//
// The costs it avoids, measured on a /filter body with 500 NodeNames (13.8 KB): RapidJSON's UTF-8
// validation doubled its parse time (a separate pass here skips ASCII eight bytes at a time); its
// iterative parser is slower than the recursive one (used unless the body could nest deeply); and
// three quarters of the parse went to the NodeNames strings, which a dedicated scanner reads
// about four times faster (every other member is parsed by RapidJSON into the same document).
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "extender/wire/json_out.h"

namespace capext::request_body {

// The offset of the first byte of `text` that is not part of a well-formed UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are ill-formed), or npos. Runs of
// ASCII are skipped eight bytes at a time.
inline std::size_t FirstInvalidUtf8(std::string_view text) {
  const auto* begin = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* p = begin;
  const unsigned char* end = begin + text.size();
  while (p < end) {
    while (end - p >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      if ((word & 0x8080808080808080ULL) != 0) break;
      p += 8;
    }
    if (p == end) break;
    const unsigned lead = *p;
    if (lead < 0x80) {
      ++p;
      continue;
    }
    int length;
    uint32_t code;
    uint32_t min;
    if ((lead & 0xE0) == 0xC0) {
      length = 2, code = lead & 0x1F, min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3, code = lead & 0x0F, min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4, code = lead & 0x07, min = 0x10000;
    } else {
      return static_cast<std::size_t>(p - begin);
    }
    if (end - p < length) return static_cast<std::size_t>(p - begin);
    for (int i = 1; i < length; ++i) {
      if ((p[i] & 0xC0) != 0x80) return static_cast<std::size_t>(p - begin);
      code = (code << 6) | (p[i] & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return static_cast<std::size_t>(p - begin);
    }
    p += length;
  }
  return std::string_view::npos;
}

// How many '[' and '{' bytes `text` holds (in strings or not): an upper bound of its nesting depth.
// ('[' | 0x20 == '{', and no other byte maps there.) 16 bytes at a time where SSE2 exists.
inline std::size_t CountOpeners(std::string_view text) {
  std::size_t count = 0;
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i fold = _mm_set1_epi8(0x20);
  const __m128i brace = _mm_set1_epi8('{');
  while (i + 16 <= text.size()) {
    // Per-byte hit counters (each compare adds 0 or 1), summed before they can overflow.
    __m128i counters = _mm_setzero_si128();
    for (int round = 0; round < 255 && i + 16 <= text.size(); ++round, i += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
      counters = _mm_sub_epi8(counters, _mm_cmpeq_epi8(_mm_or_si128(bytes, fold), brace));
    }
    const __m128i sums = _mm_sad_epu8(counters, _mm_setzero_si128());
    count += static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<std::size_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; i < text.size(); ++i)
    count += static_cast<std::size_t>((text[i] | 0x20) == '{');
  return count;
}

// Bodies with at most this many openers are parsed by RapidJSON's recursive parser (faster than
// the iterative one); the bound on their depth keeps its stack use small.
constexpr std::size_t kMaxRecursiveOpeners = 512;

// Forwards RapidJSON's SAX events to the document being built. A handler type of our own gives
// this file its own instantiation of the parser, compiled with everything inlined here
// (Document::ParseInsitu shares one with other files and measured ~25% slower).
class DocumentBuilder {
 public:
  explicit DocumentBuilder(rapidjson::Document& doc) : doc_(doc) {}

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned u) { return doc_.Uint(u); }
  bool Int64(int64_t i) { return doc_.Int64(i); }
  bool Uint64(uint64_t u) { return doc_.Uint64(u); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
    return doc_.RawNumber(s, n, copy);
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return doc_.EndObject(n); }
  bool StartArray() { return doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return doc_.EndArray(n); }

 private:
  rapidjson::Document& doc_;
};

// Parses one value in place from `stream` into the document handed over by
// GenericDocument::Populate; the stream is left after what was parsed.
template <unsigned kFlags>
struct InsituParse {
  rapidjson::InsituStringStream* stream;
  rapidjson::ParseResult result;

  bool operator()(rapidjson::Document& doc) {
    DocumentBuilder builder(doc);
    rapidjson::Reader reader;
    result = reader.Parse<kFlags | rapidjson::kParseInsituFlag>(*stream, builder);
    return !result.IsError();
  }
};

// RapidJSON's recursive parser unless `iterative` (see CountOpeners).
template <unsigned kFlags>
rapidjson::ParseResult ParseInsitu(rapidjson::InsituStringStream* stream, bool iterative,
                                   rapidjson::Document* doc) {
  if (iterative) {
    InsituParse<kFlags | rapidjson::kParseIterativeFlag> parse{stream, {}};
    doc->Populate(parse);
    return parse.result;
  }
  InsituParse<kFlags> parse{stream, {}};
  doc->Populate(parse);
  return parse.result;
}

// --- the member-by-member path -----------------------------------------------------------------

// A parse error: RapidJSON's code and the byte offset in the body.
struct ParseError {
  rapidjson::ParseErrorCode code = rapidjson::kParseErrorNone;
  std::size_t offset = 0;
  bool failed() const { return code != rapidjson::kParseErrorNone; }
};

// True for "NodeNames" in any case (json::Member's ASCII case folding, as DecodeExtenderArgs
// finds the member).
inline bool IsNodeNamesKey(std::string_view key) {
  constexpr std::string_view kFolded = "nodenames";
  if (key.size() != kFolded.size()) return false;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c =
        key[i] >= 'A' && key[i] <= 'Z' ? static_cast<char>(key[i] + ('a' - 'A')) : key[i];
    if (c != kFolded[i]) return false;
  }
  return true;
}

// NodeNames arrays of plain strings that ObjectReader read without making DOM values of them
// (the document holds an empty array there): the member's index in the top-level object and the
// strings, as views into the body.
struct CapturedNames {
  std::vector<std::pair<std::size_t, std::vector<std::string_view>>> arrays;

  const std::vector<std::string_view>* Find(std::size_t member_index) const {
    for (const auto& [index, names] : arrays) {
      if (index == member_index) return &names;
    }
    return nullptr;
  }
};

// Reads a top-level JSON object member by member into `doc`: values of members named NodeNames
// (as Go matches names: case-insensitively) that are arrays go through a scanner for plain
// strings, everything else through RapidJSON. Same document, same errors as parsing it whole.
class ObjectReader {
 public:
  // `text` is the NUL-terminated body, `end` its terminating NUL; parsed in place.
  // With `captured`, NodeNames arrays of plain strings are captured there instead (see
  // CapturedNames); without, every value is in the document.
  ObjectReader(char* text, char* end, bool iterative, rapidjson::Document* doc,
               CapturedNames* captured = nullptr)
      : begin_(text), p_(text), end_(end), iterative_(iterative), doc_(doc), captured_(captured) {}

  // REQUIRES: the first non-whitespace byte is '{'.
  ParseError Read() {
    rapidjson::Document::AllocatorType& allocator = doc_->GetAllocator();
    doc_->SetObject();
    SkipWhitespace();
    ++p_;  // '{'
    SkipWhitespace();
    if (*p_ == '}') {
      ++p_;
      return Finish();
    }
    for (;;) {
      if (*p_ != '"') return Error(rapidjson::kParseErrorObjectMissName);
      rapidjson::Value key;
      if (ParseError e = ReadString(&key); e.failed()) return e;
      SkipWhitespace();
      if (*p_ != ':') return Error(rapidjson::kParseErrorObjectMissColon);
      ++p_;
      SkipWhitespace();
      rapidjson::Value value;
      const bool names =
          *p_ == '[' && IsNodeNamesKey(std::string_view(key.GetString(), key.GetStringLength()));
      if (ParseError e = names ? ReadNameArray(&value) : ReadValue(&value); e.failed()) return e;
      doc_->AddMember(key, value, allocator);
      SkipWhitespace();
      if (*p_ == ',') {
        ++p_;
        SkipWhitespace();
        continue;
      }
      if (*p_ == '}') {
        ++p_;
        return Finish();
      }
      return Error(rapidjson::kParseErrorObjectMissCommaOrCurlyBracket);
    }
  }

 private:
  ParseError Error(rapidjson::ParseErrorCode code) const {
    return {code, static_cast<std::size_t>(p_ - begin_)};
  }

  void SkipWhitespace() {
    while (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')
      ++p_;
  }

  ParseError Finish() {
    SkipWhitespace();
    if (p_ != end_) return Error(rapidjson::kParseErrorDocumentRootNotSingular);
    return {};
  }

  // One value by RapidJSON, in place, into `out` (its memory in the document's allocator).
  ParseError ReadValue(rapidjson::Value* out) {
    rapidjson::InsituStringStream stream(p_);
    rapidjson::Document value(&doc_->GetAllocator());
    const rapidjson::ParseResult result =
        ParseInsitu<rapidjson::kParseStopWhenDoneFlag>(&stream, iterative_, &value);
    if (result.IsError()) {
      return {result.Code(), static_cast<std::size_t>(p_ - begin_) + result.Offset()};
    }
    p_ = stream.src_;
    *out = static_cast<rapidjson::Value&>(value);  // moves
    return {};
  }

  // A string at p_ ('"'): plain ones (no escape, no control character) are terminated in place
  // as RapidJSON's in-situ parser does; the others are left to RapidJSON.
  ParseError ReadString(rapidjson::Value* out) {
    std::string_view plain;
    if (!ScanPlainString(&plain)) return ReadValue(out);
    out->SetString(
        rapidjson::StringRef(plain.data(), static_cast<rapidjson::SizeType>(plain.size())));
    return {};
  }

  // The plain string at p_ ('"'), terminated in place and stepped over; false (p_ unchanged)
  // when it is not plain.
  bool ScanPlainString(std::string_view* out) {
    char* start = p_ + 1;
    char* q = start;
    // Eight bytes at a time while they fit before the terminating NUL.
    while (end_ - q >= 8) {
      uint64_t word;
      std::memcpy(&word, q, 8);
      const uint64_t hits = json_out_detail::EscapeCandidates(word);
      if (hits != 0) {
        q += __builtin_ctzll(hits) / 8;  // the lowest flagged byte is a real one
        break;
      }
      q += 8;
    }
    while (*q != '"' && *q != '\\' && static_cast<unsigned char>(*q) >= 0x20)
      ++q;
    if (*q != '"') return false;
    *q = '\0';
    *out = std::string_view(start, static_cast<std::size_t>(q - start));
    p_ = q + 1;
    return true;
  }

  // An array at p_ ('['): its strings read by ReadString(), anything else by RapidJSON. Captured
  // (no DOM values) while every item is a plain string and there is somewhere to capture it.
  ParseError ReadNameArray(rapidjson::Value* out) {
    ++p_;  // '['
    items_.clear();
    names_.clear();
    bool capturing = captured_ != nullptr;
    SkipWhitespace();
    if (*p_ != ']') {
      for (;;) {
        std::string_view plain;
        if (capturing && *p_ == '"' && ScanPlainString(&plain)) {
          names_.push_back(plain);
        } else {
          if (capturing) {  // from here on, values: the ones captured so far first
            capturing = false;
            for (std::string_view name : names_) {
              items_.emplace_back(
                  rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size())));
            }
          }
          rapidjson::Value item;
          if (ParseError e = *p_ == '"' ? ReadString(&item) : ReadValue(&item); e.failed()) {
            return e;
          }
          items_.push_back(std::move(item));
        }
        SkipWhitespace();
        if (*p_ == ',') {
          ++p_;
          SkipWhitespace();
          continue;
        }
        if (*p_ == ']') break;
        return Error(rapidjson::kParseErrorArrayMissCommaOrSquareBracket);
      }
    }
    ++p_;  // ']'
    out->SetArray();
    if (capturing) {
      captured_->arrays.emplace_back(doc_->MemberCount(), std::move(names_));
      names_ = {};
      return {};
    }
    rapidjson::Document::AllocatorType& allocator = doc_->GetAllocator();
    out->Reserve(static_cast<rapidjson::SizeType>(items_.size()), allocator);
    for (auto& item : items_)
      out->PushBack(item, allocator);
    return {};
  }

  char* begin_;
  char* p_;
  char* end_;
  bool iterative_;
  rapidjson::Document* doc_;
  CapturedNames* captured_;
  std::vector<rapidjson::Value> items_;
  std::vector<std::string_view> names_;
};

}  // namespace capext::request_body
