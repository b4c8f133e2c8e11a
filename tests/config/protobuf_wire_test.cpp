// The protobuf wire reader (config/protobuf_wire.h): every wire type read and stepped over, and
// every kind of malformed data rejected where it starts.
#include "config/protobuf_wire.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/protobuf_writer.h"

namespace capext::protobuf {
namespace protobuf_wire_test {
namespace {

using capext::testing::ProtoWriter;

std::vector<Field> ReadAll(std::string_view bytes, WireError* error) {
  WireReader reader(bytes);
  std::vector<Field> fields;
  Field f;
  while (reader.Next(&f))
    fields.push_back(f);
  *error = reader.error();
  return fields;
}

TEST_CASE("protobuf wire: every valid wire type is read with its value", "[protobuf]") {
  const std::string bytes = ProtoWriter()
                                .Varint(1, 150)
                                .Fixed64(2, 0x0102030405060708ull)
                                .Bytes(3, "hello")
                                .Fixed32(4, 0xA1B2C3D4u)
                                .Varint(kMaxFieldNumber, ~0ull)
                                .Bytes(5, "")
                                .str();
  WireError error = WireError::kNone;
  const std::vector<Field> fields = ReadAll(bytes, &error);
  CHECK(error == WireError::kNone);
  REQUIRE(fields.size() == 6);
  CHECK(fields[0].number == 1);
  CHECK(fields[0].type == WireType::kVarint);
  CHECK(fields[0].value == 150);
  CHECK(fields[1].type == WireType::kFixed64);
  CHECK(fields[1].value == 0x0102030405060708ull);
  CHECK(fields[2].type == WireType::kLengthDelimited);
  CHECK(fields[2].bytes == "hello");
  CHECK(fields[3].type == WireType::kFixed32);
  CHECK(fields[3].value == 0xA1B2C3D4u);
  CHECK(fields[4].number == kMaxFieldNumber);
  CHECK(fields[4].value == ~0ull);
  CHECK(fields[5].bytes.empty());
  CHECK(fields[5].number == 5);
}

TEST_CASE("protobuf wire: varints up to 10 bytes, and no more than 64 bits", "[protobuf]") {
  size_t pos = 0;
  uint64_t value = 0;
  WireError error = WireError::kNone;
  const std::string max = ProtoWriter::VarintBytes(~0ull);
  REQUIRE(max.size() == 10);
  CHECK(ReadVarint(max, &pos, &value, &error));
  CHECK(value == ~0ull);
  CHECK(pos == 10);
  // A non-canonical but valid 10-byte encoding of 1.
  const std::string padded = std::string("\x81\x80\x80\x80\x80\x80\x80\x80\x80\x00", 10);
  pos = 0;
  CHECK(ReadVarint(padded, &pos, &value, &error));
  CHECK(value == 1);
  // The 10th byte may hold bit 63 only.
  std::string over = max;
  over[9] = 0x02;
  pos = 0;
  CHECK_FALSE(ReadVarint(over, &pos, &value, &error));
  CHECK(error == WireError::kVarintOverflow);
  CHECK(pos == 0);
  // 11 bytes.
  const std::string eleven = std::string(10, '\x80') + '\x01';
  pos = 0;
  CHECK_FALSE(ReadVarint(eleven, &pos, &value, &error));
  CHECK(error == WireError::kVarintOverflow);
  // Truncated.
  pos = 0;
  CHECK_FALSE(ReadVarint("\x80\x80", &pos, &value, &error));
  CHECK(error == WireError::kTruncated);
  pos = 0;
  CHECK_FALSE(ReadVarint("", &pos, &value, &error));
  CHECK(error == WireError::kTruncated);
}

TEST_CASE("protobuf wire: malformed data stops the reader where the bad field starts",
          "[protobuf]") {
  struct Case {
    std::string bytes;
    WireError error;
    size_t good_fields;
  };
  const std::string ok = ProtoWriter().Varint(1, 1).str();  // 2 bytes
  const Case cases[] = {
      {ok + ProtoWriter::Tag(0, 0) + "\x01", WireError::kFieldNumberZero, 1},
      {ok + ProtoWriter::Tag(2, 3), WireError::kGroup, 1},
      {ok + ProtoWriter::Tag(2, 4), WireError::kGroup, 1},
      {ok + ProtoWriter::Tag(2, 6), WireError::kBadWireType, 1},
      {ok + ProtoWriter::Tag(2, 7), WireError::kBadWireType, 1},
      {ok + ProtoWriter::VarintBytes((uint64_t{kMaxFieldNumber} + 1) << 3),
       WireError::kFieldNumberLarge, 1},
      {ok + ProtoWriter::Tag(2, 0), WireError::kTruncated, 1},
      {ok + ProtoWriter::Tag(2, 0) + "\xFF", WireError::kTruncated, 1},
      {ok + ProtoWriter::Tag(2, 1) + "1234567", WireError::kTruncated, 1},
      {ok + ProtoWriter::Tag(2, 5) + "123", WireError::kTruncated, 1},
      {ok + ProtoWriter::Tag(2, 2), WireError::kTruncated, 1},
      {ok + ProtoWriter::Tag(2, 2) + "\x05" + "abcd", WireError::kTruncated, 1},
      // A length near 2^64 must not wrap around the bounds check.
      {ok + ProtoWriter::Tag(2, 2) + ProtoWriter::VarintBytes(~0ull) + "abc", WireError::kTruncated,
       1},
      {ok + ProtoWriter::Tag(2, 2) + ProtoWriter::VarintBytes(uint64_t{1} << 62),
       WireError::kTruncated, 1},
      {ok + std::string(11, '\x80'), WireError::kVarintOverflow, 1},
  };
  for (const auto& c : cases) {
    INFO(c.bytes.size());
    WireReader reader(c.bytes);
    Field f;
    size_t read = 0;
    while (reader.Next(&f))
      ++read;
    CHECK(read == c.good_fields);
    CHECK(reader.error() == c.error);
    CHECK(reader.offset() == ok.size());
    CHECK_FALSE(reader.Next(&f));  // stays failed
    CHECK_FALSE(WireErrorText(reader.error()).empty());
  }
}

TEST_CASE("protobuf wire: an empty message has no fields and no error", "[protobuf]") {
  WireReader reader("");
  Field f;
  CHECK_FALSE(reader.Next(&f));
  CHECK(reader.ok());
}

}  // namespace
}  // namespace protobuf_wire_test
}  // namespace capext::protobuf
