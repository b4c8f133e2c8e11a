// A tiny protobuf wire-format writer for tests: builds the messages the protobuf readers read
// (config/protobuf_wire.h and the decoders and envelope parsers built on it) field by field, in
// any order and with any wire type, so that tests can make what a server would send, what no
// server sends, and malformed data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace capext::testing {

class ProtoWriter {
 public:
  // A raw varint (no tag).
  static std::string VarintBytes(uint64_t value) {
    std::string out;
    while (value >= 0x80) {
      out += static_cast<char>((value & 0x7F) | 0x80);
      value >>= 7;
    }
    out += static_cast<char>(value);
    return out;
  }
  static std::string Tag(uint32_t field, int wire_type) {
    return VarintBytes((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
  }

  ProtoWriter& Varint(uint32_t field, uint64_t value) {
    bytes_ += Tag(field, 0) + VarintBytes(value);
    return *this;
  }
  ProtoWriter& Bytes(uint32_t field, std::string_view payload) {
    bytes_ += Tag(field, 2) + VarintBytes(payload.size());
    bytes_.append(payload);
    return *this;
  }
  ProtoWriter& Message(uint32_t field, const ProtoWriter& message) {
    return Bytes(field, message.str());
  }
  ProtoWriter& Fixed32(uint32_t field, uint32_t value) {
    bytes_ += Tag(field, 5);
    for (int i = 0; i < 4; ++i)
      bytes_ += static_cast<char>((value >> (8 * i)) & 0xFF);
    return *this;
  }
  ProtoWriter& Fixed64(uint32_t field, uint64_t value) {
    bytes_ += Tag(field, 1);
    for (int i = 0; i < 8; ++i)
      bytes_ += static_cast<char>((value >> (8 * i)) & 0xFF);
    return *this;
  }
  // One entry {key = 1, value = 2} of a map<string, string>.
  ProtoWriter& Entry(uint32_t field, std::string_view key, std::string_view value) {
    return Message(field, ProtoWriter().Bytes(1, key).Bytes(2, value));
  }
  // One entry of a map<string, Quantity>: {key = 1, value = 2 {string = 1}}.
  ProtoWriter& QuantityEntry(uint32_t field, std::string_view key, std::string_view quantity) {
    return Message(field, ProtoWriter().Bytes(1, key).Message(2, ProtoWriter().Bytes(1, quantity)));
  }
  // A metav1.Time {seconds = 1}.
  ProtoWriter& Time(uint32_t field, int64_t seconds) {
    return Message(field, ProtoWriter().Varint(1, static_cast<uint64_t>(seconds)));
  }
  // Any bytes, as they are (a bad tag, a truncated field).
  ProtoWriter& Raw(std::string_view bytes) {
    bytes_.append(bytes);
    return *this;
  }

  const std::string& str() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace capext::testing
