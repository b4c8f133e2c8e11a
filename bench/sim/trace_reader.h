// Readers for the Alibaba GPU cluster trace v2023 (bench/data/alibaba-gpu-v2023, the CSVs of
// the ATC'23 paper "Beware of Fragmentation").
//
// Node list (`sn,cpu_milli,memory_mib,gpu,model`) -> one Node per row, named by `sn`:
//   cpu_milli -> cpu (milli-units), memory_mib -> memory (Mi, i.e. memory_mib * 2^20 bytes),
//   gpu -> nvidia.com/gpu (and, with GpuSharing::kMilli, alibaba.com/gpu-milli = gpu * 1000),
//   pods -> NodeListOptions::max_pods (the trace has none; kubelet's default is 110),
//   labels: kubernetes.io/hostname = sn, alibaba.com/gpu-model = model when non-empty.
//
// Pod list (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
// deletion_time,scheduled_time`; columns are found by header name, gpu_spec, qos and
// scheduled_time are optional) -> one WorkloadPod per row:
//   arrival = creation_time (seconds); duration = deletion_time - creation_time (the pod's
//   lifetime in the original cluster, including its original wait, which is at most a few
//   seconds for 99% of pods). Rows with deletion_time <= creation_time are skipped (they never
//   existed long enough to run; the default trace has one). Rows with an empty scheduled_time
//   (never scheduled in the original cluster: 897 "Pending" pods in the default trace) are
//   submitted like the others by default, since their demand was real; TraceOptions::
//   skip_unscheduled drops them instead. Both rules are reported in Workload::notes.
//   cpu_milli -> cpu, memory_mib -> memory (Mi), tenant from TraceOptions::tenants
//   (tenant_rule.h), gpu_spec "A|B" -> required node affinity alibaba.com/gpu-model In [A, B].
//   GPUs: GpuSharing::kRoundUp (default) requests nvidia.com/gpu = num_gpu, so a GPU-sharing pod
//   (gpu_milli < 1000) takes one whole GPU, as on a cluster without a GPU-sharing device plugin
//   (this over-counts the demand of sharing pods); GpuSharing::kMilli requests
//   alibaba.com/gpu-milli = num_gpu * gpu_milli instead (nodes offer gpu * 1000), which counts the
//   shares exactly but ignores which physical GPU a share lands on.
//   Pod groups (docs/workloads.md; not in the Alibaba trace, for traces prepared with them):
//   optional columns `group` (the group's name; empty = a single pod) and `min_member` (the
//   group's minimum, empty = 0); a group's pods belong to one tenant, the tenant of the group's
//   name under hash:N (of its first row's qos under qos), since a job's pods share a namespace.
//   A group's minimum is its oldest member's value (WorkloadGroup); disagreements are noted.
// Errors name the file and line.
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/sim/tenant_rule.h"
#include "bench/sim/workload.h"
#include "core/node.h"
#include "core/status.h"

namespace capext {

inline constexpr const char* kGpuResource = "nvidia.com/gpu";
inline constexpr const char* kGpuMilliResource = "alibaba.com/gpu-milli";

enum class GpuSharing { kRoundUp, kMilli };

// "round-up" / "milli".
bool ParseGpuSharing(std::string_view text, GpuSharing* out);
const char* GpuSharingName(GpuSharing sharing);

struct NodeListOptions {
  GpuSharing gpu_sharing = GpuSharing::kRoundUp;
  int64_t max_pods = 110;
};

struct TraceOptions {
  TenantRule tenants;
  GpuSharing gpu_sharing = GpuSharing::kRoundUp;
  bool skip_unscheduled = false;
  // --load-scale F: every arrival time is divided by F (durations kept), so the offered load is F
  // times the trace's; the trace peaks at 0.6% of its cluster's cpu, where quotas never bind and
  // every policy looks the same (issue 22).
  double load_scale = 1.0;
};

Status ParseAlibabaNodeList(std::string_view text, const std::string& source,
                            const NodeListOptions& options, std::vector<Node>* out);
Status ReadAlibabaNodeList(const std::string& path, const NodeListOptions& options,
                           std::vector<Node>* out);

// Appends to out->pods (sorted by arrival afterwards) and out->notes.
Status ParseAlibabaPodList(std::string_view text, const std::string& source,
                           const TraceOptions& options, Workload* out);
Status ReadAlibabaPodList(const std::string& path, const TraceOptions& options, Workload* out);

}  // namespace capext
