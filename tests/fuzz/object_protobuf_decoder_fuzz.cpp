// libFuzzer target: the protobuf decoders (config/object_protobuf_decoder.h) and envelopes
// (extender/kube/protobuf_envelopes.h, ParseApiStatus). Any input: never crash, never read out of
// bounds (ASan), an error always has a message, *out untouched on error, and an object parsed
// out of an envelope or a watch frame is a view into the input. The input is tried as a bare
// Pod / Node message, as an enveloped object, and as a watch frame whose object is decoded.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/object_protobuf_decoder.h"
#include "extender/kube/api_envelopes.h"
#include "extender/kube/protobuf_envelopes.h"

namespace {

bool Within(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

void DecodeObject(std::string_view raw) {
  capext::DecodeOptions options;
  options.accelerator_model_annotation = "ti.cloud.tencent.com/gpu-type";
  capext::Pod pod;
  pod.name = "sentinel";
  capext::Status s = capext::DecodePodProtobuf(raw, options, &pod);
  if (!s.ok() && (s.message().empty() || pod.name != "sentinel")) __builtin_trap();
  capext::Node node;
  node.name = "sentinel";
  s = capext::DecodeNodeProtobuf(raw, &node);
  if (!s.ok() && (s.message().empty() || node.name != "sentinel")) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string_view input(bytes);
  DecodeObject(input);

  capext::kube::ProtobufObject object;
  if (capext::kube::ParseProtobufObject(input, &object).ok()) {
    if (!Within(object.raw, input) || !Within(object.kind, input)) __builtin_trap();
    DecodeObject(object.raw);
  }
  capext::kube::ProtobufWatchEvent event;
  if (capext::kube::ParseProtobufWatchEvent(input, &event).ok()) {
    if (event.type.empty() || !Within(event.object, input)) __builtin_trap();
    if (capext::kube::ParseProtobufObject(event.object, &object).ok()) DecodeObject(object.raw);
  }
  capext::kube::ApiStatus status;
  (void)capext::kube::ParseApiStatus(input, &status);
  return 0;
}
