// libFuzzer target: the extender wire codecs (ExtenderArgs, ExtenderPreemptionArgs,
// ExtenderBindingArgs) on arbitrary bytes. Malformed input must give an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "extender/wire/extender_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (int verb = 0; verb < 3; ++verb) {
    std::string body(reinterpret_cast<const char*>(data), size);
    rapidjson::Document doc;
    capext::Status s = capext::ParseRequestBody(body, &doc);
    if (!s.ok()) return 0;
    if (verb == 0) {
      capext::ExtenderArgs args;
      if (capext::DecodeExtenderArgs(doc, {}, &args).ok() && args.node_items != nullptr) {
        for (const auto& item : args.node_items->GetArray()) {
          rapidjson::StringBuffer buffer;
          capext::JsonWriter writer(buffer);  // one document per item
          capext::WriteBounded(item, &writer);
        }
      }
    } else if (verb == 1) {
      capext::ExtenderPreemptionArgs args;
      (void)capext::DecodeExtenderPreemptionArgs(doc, {}, &args);
    } else {
      capext::ExtenderBindingArgs args;
      (void)capext::DecodeExtenderBindingArgs(doc, &args);
    }
  }
  return 0;
}
