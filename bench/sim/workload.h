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
  std::string name;         // unique within the workload; also the pod's uid
  std::string tenant;       // the pod's namespace
  int64_t arrival_ms = 0;   // creation time
  int64_t duration_ms = 1;  // run time once started (>= 1)
  // The pod's own priority; when absent the tenant's priority from the quota plan applies
  // (0 without one).
  std::optional<int32_t> priority;
  ResourceList requests;                // decision units, only amounts > 0
  std::vector<std::string> gpu_models;  // acceptable kGpuModelLabel values; empty = any node
  // The pod group (docs/workloads.md) the pod belongs to, by name within its tenant; "" = none.
  // A group's minimum is `min_member` of its oldest member (earliest arrival, then name), as the
  // annotation rule of docs/workloads.md says; a group whose minimum is <= 1 is a set of single
  // pods. Members beyond the minimum are the group's surplus (an elastic job's extra replicas).
  std::string group;
  int32_t min_member = 0;
};

// A pod group of a workload, as the simulation sees it: its members (indices into
// Workload::pods, in arrival order) and its effective minimum.
struct WorkloadGroup {
  std::string tenant;
  std::string name;
  int32_t min_member = 0;
  std::vector<uint32_t> members;
  int64_t arrival_ms = 0;  // the oldest member's
};

struct Workload {
  std::string source;              // "trace FILE" or "synthetic seed N", for reports
  std::vector<WorkloadPod> pods;   // sorted by (arrival_ms, name)
  std::vector<std::string> notes;  // how the input was read: skipped rows and why, counts
};

// Sorts `pods` by (arrival_ms, name): the order arrivals are submitted in.
void SortByArrival(std::vector<WorkloadPod>* pods);

// The groups of a workload sorted by arrival (REQUIRES: pods sorted by arrival), keyed by
// (tenant, group): only groups whose effective minimum is >= 2 (smaller ones are single pods).
// `disagreements`, when given, receives the number of groups whose members disagree on
// min_member (the oldest member's value wins).
std::vector<WorkloadGroup> GroupsOf(const Workload& workload, int64_t* disagreements = nullptr);

}  // namespace capext
