// timeline.csv: one row per sample time and tenant, plus a "(cluster)" row per sample time.
// Columns: time_s, tenant, used_cpu, min_cpu, max_cpu, used_memory_gib, min_memory_gib,
// max_memory_gib, used_gpu, min_gpu, max_gpu, pending, running.
// cpu in cores, memory in GiB, gpu in GPUs (alibaba.com/gpu-milli / 1000); min/max empty when
// the tenant has none for that resource (the cluster row's max is the allocatable). Decimal
// numbers have at most 3 decimals, so the file is the same for the same simulation.
// Thread-safety: pure function.
#pragma once

#include <string>

#include "bench/sim/simulation.h"

namespace capext {

std::string TimelineCsv(const SimulationResult& result);

}  // namespace capext
