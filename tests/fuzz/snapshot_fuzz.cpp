// libFuzzer target: the snapshot loader (YAML or JSON streams of Kubernetes objects) and the
// object codec behind it. Any input must either load or fail with a message; never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  capext::Snapshot snapshot;
  capext::DecodeOptions options;
  options.accelerator_model_annotation = "ti.cloud.tencent.com/gpu-type";
  capext::Status s = capext::ParseSnapshot(text, "fuzz", options, &snapshot);
  if (!s.ok() && s.message().empty()) __builtin_trap();
  if (s.ok()) {
    capext::ClusterState state;
    capext::ApplySnapshot(snapshot, &state);
  }
  return 0;
}
