// A reader of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/) over a
// std::string_view: the fields of one message, one at a time, for the hand-written decoders of
// Kubernetes objects in their protobuf encoding (the Pod and Node decoders of config/). No schema,
// no allocation, no exceptions; every length is checked against the bytes that remain.
//
// What is malformed (WireReader::Next returns false with error() set; nothing past it is read):
//   - a truncated tag, varint, fixed32/64 or length-delimited payload;
//   - a varint longer than 10 bytes, or a 10-byte one whose value does not fit 64 bits;
//   - field number 0, or one above 2^29 - 1 (protobuf's largest);
//   - wire types 3 and 4 (groups: deprecated, and never written by Kubernetes' gogo-protobuf
//     code) and the undefined types 6 and 7.
// Unknown fields of the four valid wire types are the caller's to skip: Next() has already
// stepped over them (a length-delimited field's payload is a view, never parsed).
//
// Thread-safety: a WireReader is a cursor for one thread; the functions are stateless.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace capext::protobuf {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,  // rejected
  kEndGroup = 4,    // rejected
  kFixed32 = 5,
};

enum class WireError : uint8_t {
  kNone,
  kTruncated,         // the message ends inside a field
  kVarintOverflow,    // more than 10 bytes, or more than 64 bits
  kFieldNumberZero,   // field number 0
  kFieldNumberLarge,  // field number above 2^29 - 1
  kGroup,             // wire type 3 or 4
  kBadWireType,       // wire type 6 or 7
};

// "truncated", "varint longer than 64 bits", ... for messages.
std::string_view WireErrorText(WireError error);

// protobuf's largest field number.
inline constexpr uint32_t kMaxFieldNumber = (1u << 29) - 1;

// One field of a message as the wire carries it.
struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  // kVarint: the value as unsigned 64 bits (int32/int64/bool fields cast it, as Go does);
  // kFixed64 / kFixed32: the little-endian value.
  uint64_t value = 0;
  std::string_view bytes;  // kLengthDelimited: the payload, a view into the message

  bool is_bytes() const { return type == WireType::kLengthDelimited; }
  bool is_varint() const { return type == WireType::kVarint; }
};

// Reads a varint at data[*pos]; advances *pos past it. False (with *error set and *pos
// unchanged) on truncation or overflow.
bool ReadVarint(std::string_view data, size_t* pos, uint64_t* out, WireError* error);

class WireReader {
 public:
  explicit WireReader(std::string_view message) : data_(message) {}

  // Reads the next field into *field. False at the end of the message (error() == kNone) or on
  // malformed data (error() says what; offset() is where the bad field starts).
  bool Next(Field* field);

  WireError error() const { return error_; }
  bool ok() const { return error_ == WireError::kNone; }
  // Bytes consumed so far (where the next field starts, or where the bad one started).
  size_t offset() const { return pos_; }

 private:
  bool Fail(WireError error) {
    error_ = error;
    return false;
  }

  std::string_view data_;
  size_t pos_ = 0;
  WireError error_ = WireError::kNone;
};

}  // namespace capext::protobuf
