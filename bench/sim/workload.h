// A workload for `capacity-sim run`: pods that arrive at a time, ask for resources and, once
// started, run for a fixed duration. Produced by the trace reader (trace_reader.h) or the
// synthetic generator (synthetic_workload.h); consumed by the simulation (simulation.h).
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/resource_list.h"

namespace capext {

// The node label that carries a node's GPU model (the trace's `model` column); a pod's
// acceptable models become a required node affinity on it.
inline constexpr const char* kGpuModelLabel = "alibaba.com/gpu-model";

struct WorkloadPod {
  std::string name;          // unique within the workload; also the pod's uid
  std::string tenant;        // the pod's namespace
  int64_t arrival_ms = 0;    // creation time
  int64_t duration_ms = 1;   // run time once started (>= 1)
  // The pod's own priority; when absent the tenant's priority from the quota plan applies
  // (0 without one).
  std::optional<int32_t> priority;
  ResourceList requests;                // decision units, only amounts > 0
  std::vector<std::string> gpu_models;  // acceptable kGpuModelLabel values; empty = any node
};

struct Workload {
  std::string source;              // "trace FILE" or "synthetic seed N", for reports
  std::vector<WorkloadPod> pods;   // sorted by (arrival_ms, name)
  std::vector<std::string> notes;  // how the input was read: skipped rows and why, counts
};

// Sorts `pods` by (arrival_ms, name): the order arrivals are submitted in.
void SortByArrival(std::vector<WorkloadPod>* pods);

}  // namespace capext
