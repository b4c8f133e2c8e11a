#include "config/protobuf_wire.h"

namespace capext::protobuf {

std::string_view WireErrorText(WireError error) {
  switch (error) {
    case WireError::kNone:
      return "no error";
    case WireError::kTruncated:
      return "truncated protobuf field";
    case WireError::kVarintOverflow:
      return "protobuf varint longer than 64 bits";
    case WireError::kFieldNumberZero:
      return "protobuf field number 0";
    case WireError::kFieldNumberLarge:
      return "protobuf field number above 2^29-1";
    case WireError::kGroup:
      return "protobuf group (wire type 3 or 4)";
    case WireError::kBadWireType:
      return "invalid protobuf wire type";
  }
  return "invalid protobuf";
}

bool ReadVarint(std::string_view data, size_t* pos, uint64_t* out, WireError* error) {
  uint64_t value = 0;
  size_t p = *pos;
  for (int i = 0; i < 10; ++i, ++p) {
    if (p >= data.size()) {
      *error = WireError::kTruncated;
      return false;
    }
    const uint64_t byte = static_cast<unsigned char>(data[p]);
    // The 10th byte holds bit 63 only: anything more does not fit 64 bits.
    if (i == 9 && (byte & 0x7F) > 1) {
      *error = WireError::kVarintOverflow;
      return false;
    }
    value |= (byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) {
      *pos = p + 1;
      *out = value;
      return true;
    }
  }
  *error = WireError::kVarintOverflow;
  return false;
}

bool WireReader::Next(Field* field) {
  if (error_ != WireError::kNone || pos_ >= data_.size()) return false;
  size_t p = pos_;
  uint64_t tag = 0;
  WireError error = WireError::kNone;
  if (!ReadVarint(data_, &p, &tag, &error)) return Fail(error);
  const uint64_t number = tag >> 3;
  if (number == 0) return Fail(WireError::kFieldNumberZero);
  if (number > kMaxFieldNumber) return Fail(WireError::kFieldNumberLarge);
  const auto type = static_cast<WireType>(tag & 7);
  field->number = static_cast<uint32_t>(number);
  field->type = type;
  field->value = 0;
  field->bytes = {};
  const size_t left = data_.size() - p;
  switch (type) {
    case WireType::kVarint:
      if (!ReadVarint(data_, &p, &field->value, &error)) return Fail(error);
      break;
    case WireType::kFixed64:
    case WireType::kFixed32: {
      const size_t n = type == WireType::kFixed64 ? 8 : 4;
      if (left < n) return Fail(WireError::kTruncated);
      for (size_t i = 0; i < n; ++i) {
        field->value |= static_cast<uint64_t>(static_cast<unsigned char>(data_[p + i])) << (8 * i);
      }
      p += n;
      break;
    }
    case WireType::kLengthDelimited: {
      uint64_t length = 0;
      if (!ReadVarint(data_, &p, &length, &error)) return Fail(error);
      // Compared as 64 bits: a length near 2^64 must not wrap around.
      if (length > data_.size() - p) return Fail(WireError::kTruncated);
      field->bytes = data_.substr(p, static_cast<size_t>(length));
      p += static_cast<size_t>(length);
      break;
    }
    case WireType::kStartGroup:
    case WireType::kEndGroup:
      return Fail(WireError::kGroup);
    default:
      return Fail(WireError::kBadWireType);
  }
  pos_ = p;
  return true;
}

}  // namespace capext::protobuf
