// libFuzzer target: the streaming Pod/Node decoder (config/object_stream_decoder.h) against the
// DOM path it replaces. Any input: never crash, the same verdict, and the same record when both
// decode it. A difference traps, with both results printed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "config/object_stream_decoder.h"
#include "tests/support/object_decoding.h"

namespace {

template <class Record>
void Check(const std::string& json, const capext::DecodeOptions& options) {
  Record dom_record, sax_record;
  std::string dom_kind = std::is_same_v<Record, capext::Pod> ? "Pod" : "Node";
  std::string sax_kind;
  capext::Status dom = capext::testing::DomDecode(json, options, &dom_record, &dom_kind);
  capext::Status sax;
  if constexpr (std::is_same_v<Record, capext::Pod>) {
    sax = capext::DecodePodJson(json, options, &sax_record, &sax_kind);
  } else {
    sax = capext::DecodeNodeJson(json, &sax_record, &sax_kind);
  }
  if (!sax.ok() && sax.message().empty()) __builtin_trap();
  const bool same =
      dom.ok() == sax.ok() &&
      (!dom.ok() || (capext::testing::Text(dom_record) == capext::testing::Text(sax_record) &&
                     dom_kind == sax_kind));
  if (!same) {
    std::fprintf(stderr, "DOM: %s\nSAX: %s\n",
                 dom.ok() ? capext::testing::Text(dom_record).c_str() : dom.message().c_str(),
                 sax.ok() ? capext::testing::Text(sax_record).c_str() : sax.message().c_str());
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  capext::DecodeOptions plain, accel;
  accel.accelerator_model_annotation = "ti.cloud.tencent.com/gpu-type";
  Check<capext::Pod>(json, plain);
  Check<capext::Pod>(json, accel);
  Check<capext::Node>(json, plain);
  return 0;
}
