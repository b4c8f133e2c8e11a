// The Alibaba trace readers: column mapping, the documented rules for odd rows (deletion before
// creation, never scheduled), GPU sharing modes, gpu_spec affinity, errors with line numbers.
#include "bench/sim/trace_reader.h"

#include <catch2/catch.hpp>

#include "tests/support/test_paths.h"

namespace capext {
namespace trace_reader_test {
namespace {

constexpr int64_t kMi = int64_t{1} << 20;

const char* kPods =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_"
    "time,scheduled_time\n"
    "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,100,0\n"
    "openb-pod-0001,6000,12288,1,460,V100M16|V100M32,BE,Running,10,70,12\n"
    "openb-pod-0002,4000,0,0,0,,Burstable,Pending,20,50,\n"
    "openb-pod-0003,8000,30517,1,230,,BE,Pending,40,40,\n"
    "openb-pod-0004,88000,500000,8,1000,,Guaranteed,Running,5,300,5\r\n";

Workload Parse(const TraceOptions& options, const char* text = kPods) {
  Workload w;
  Status s = ParseAlibabaPodList(text, "pods.csv", options, &w);
  REQUIRE(s.ok());
  return w;
}

TEST_CASE("pod list rows become workload pods in arrival order", "[sim][trace]") {
  Workload w = Parse(TraceOptions{});
  REQUIRE(w.pods.size() == 4);  // pod 0003 has deletion_time == creation_time
  CHECK(w.pods[0].name == "openb-pod-0000");
  CHECK(w.pods[1].name == "openb-pod-0004");  // arrival 5 s
  CHECK(w.pods[2].name == "openb-pod-0001");
  CHECK(w.pods[3].name == "openb-pod-0002");

  const WorkloadPod& p0 = w.pods[0];
  CHECK(p0.tenant == "ls");
  CHECK(p0.arrival_ms == 0);
  CHECK(p0.duration_ms == 100'000);
  CHECK(p0.requests.Get("cpu") == 12000);
  CHECK(p0.requests.Get("memory") == 16384 * kMi);
  CHECK(p0.requests.Get(kGpuResource) == 1);
  CHECK(p0.gpu_models.empty());
  CHECK_FALSE(p0.priority.has_value());

  const WorkloadPod& p1 = w.pods[2];
  CHECK(p1.tenant == "be");
  CHECK(p1.arrival_ms == 10'000);
  CHECK(p1.duration_ms == 60'000);            // deletion - creation, not deletion - scheduled
  CHECK(p1.requests.Get(kGpuResource) == 1);  // gpu_milli 460 rounds up to one GPU
  CHECK(p1.gpu_models == std::vector<std::string>{"V100M16", "V100M32"});

  const WorkloadPod& p2 = w.pods[3];
  CHECK(p2.tenant == "burstable");
  CHECK_FALSE(p2.requests.Has("memory"));  // zero amounts are not requests
  CHECK_FALSE(p2.requests.Has(kGpuResource));

  CHECK(w.pods[1].tenant == "guaranteed");
  CHECK(w.pods[1].requests.Get(kGpuResource) == 8);
}

TEST_CASE("notes report every rule applied", "[sim][trace]") {
  Workload w = Parse(TraceOptions{});
  REQUIRE(w.notes.size() == 4);
  CHECK(w.notes[0] == "pods.csv: 5 rows read, 4 submitted");
  CHECK(w.notes[1].find("1 rows skipped: deletion_time <= creation_time") == 0);
  CHECK(w.notes[2].find("1 rows never scheduled") == 0);  // 0002 (0003 was skipped first)
  CHECK(w.notes[3].find("1 GPU-sharing pods") == 0);      // 0001
}

TEST_CASE("never-scheduled pods can be skipped", "[sim][trace]") {
  TraceOptions options;
  options.skip_unscheduled = true;
  Workload w = Parse(options);
  REQUIRE(w.pods.size() == 3);
  for (const auto& p : w.pods)
    CHECK(p.name != "openb-pod-0002");
  CHECK(w.notes[0] == "pods.csv: 5 rows read, 3 submitted");
}

TEST_CASE("milli GPU sharing requests the share", "[sim][trace]") {
  TraceOptions options;
  options.gpu_sharing = GpuSharing::kMilli;
  Workload w = Parse(options);
  CHECK(w.pods[2].requests.Get(kGpuMilliResource) == 460);
  CHECK_FALSE(w.pods[2].requests.Has(kGpuResource));
  CHECK(w.pods[1].requests.Get(kGpuMilliResource) == 8000);
}

TEST_CASE("hash tenants follow the pod name", "[sim][trace]") {
  TraceOptions options;
  StatusOr<TenantRule> tenants = ParseTenantRule("hash:3");
  REQUIRE(tenants.ok());
  options.tenants = *tenants;
  Workload w = Parse(options);
  for (const auto& p : w.pods)
    CHECK(p.tenant == TenantOf(options.tenants, p.name, ""));
}

TEST_CASE("pod list errors name the file, line and column", "[sim][trace]") {
  Workload w;
  Status s = ParseAlibabaPodList(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,creation_time,deletion_time\n"
      "a,1000,10,0,0,LS,0,10\n"
      "b,x,10,0,0,LS,0,10\n",
      "p.csv", TraceOptions{}, &w);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "p.csv:3: cpu_milli: expected a non-negative integer, got 'x'");

  Workload none;
  Status missing = ParseAlibabaPodList("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,0,0\n",
                                       "m.csv", TraceOptions{}, &none);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.message().find("no 'creation_time' column") != std::string::npos);
}

TEST_CASE("node list rows become nodes", "[sim][trace]") {
  std::vector<Node> nodes;
  NodeListOptions options;
  options.max_pods = 64;
  Status s = ParseAlibabaNodeList(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "openb-node-0000,32000,262144,0,\n"
      "openb-node-0227,96000,393216,8,G2\n",
      "nodes.csv", options, &nodes);
  REQUIRE(s.ok());
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].name == "openb-node-0000");
  CHECK(nodes[0].allocatable.Get("cpu") == 32000);
  CHECK(nodes[0].allocatable.Get("memory") == 262144 * kMi);
  CHECK(nodes[0].allocatable.Get("pods") == 64);
  CHECK_FALSE(nodes[0].allocatable.Has(kGpuResource));
  CHECK(nodes[0].labels.count(kGpuModelLabel) == 0);
  CHECK(nodes[1].allocatable.Get(kGpuResource) == 8);
  CHECK_FALSE(nodes[1].allocatable.Has(kGpuMilliResource));
  CHECK(nodes[1].labels.at(kGpuModelLabel) == "G2");
  CHECK(nodes[1].labels.at("kubernetes.io/hostname") == "openb-node-0227");

  std::vector<Node> milli;
  options.gpu_sharing = GpuSharing::kMilli;
  REQUIRE(ParseAlibabaNodeList("sn,cpu_milli,memory_mib,gpu,model\nn,1000,1,2,T4\n", "n.csv",
                               options, &milli)
              .ok());
  CHECK(milli[0].allocatable.Get(kGpuMilliResource) == 2000);
}

TEST_CASE("the real trace files read", "[sim][trace]") {
  const std::string dir = capext::test::SourcePath("bench/data/alibaba-gpu-v2023/");
  std::vector<Node> nodes;
  REQUIRE(
      ReadAlibabaNodeList(dir + "openb_node_list_all_node.csv", NodeListOptions{}, &nodes).ok());
  CHECK(nodes.size() == 1523);
  Workload w;
  REQUIRE(ReadAlibabaPodList(dir + "openb_pod_list_default.csv", TraceOptions{}, &w).ok());
  CHECK(w.pods.size() == 8151);  // 8,152 rows, one with deletion_time == creation_time
  CHECK(w.source == "trace openb_pod_list_default.csv");
  Workload spec;
  REQUIRE(ReadAlibabaPodList(dir + "openb_pod_list_gpuspec33.csv", TraceOptions{}, &spec).ok());
  CHECK(std::any_of(spec.pods.begin(), spec.pods.end(),
                    [](const WorkloadPod& p) { return !p.gpu_models.empty(); }));
}

}  // namespace
}  // namespace trace_reader_test
}  // namespace capext

namespace capext {
namespace trace_reader_test {
namespace {

TEST_CASE("trace rows with group and min_member columns form pod groups", "[sim][trace]") {
  const char* text =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,creation_time,deletion_time,group,"
      "min_member\n"
      "job-a-0,1000,0,0,0,LS,10,100,job-a,3\n"
      "job-a-1,1000,0,0,0,BE,11,100,job-a,2\n"
      "job-a-2,1000,0,0,0,LS,11,100,job-a,3\n"
      "single,1000,0,0,0,LS,12,100,,\n"
      "pair-0,1000,0,0,0,LS,13,100,pair,1\n";
  TraceOptions options;
  options.tenants.kind = TenantRule::Kind::kHash;
  options.tenants.buckets = 7;
  Workload w;
  REQUIRE(ParseAlibabaPodList(text, "pods.csv", options, &w).ok());
  REQUIRE(w.pods.size() == 5);
  int64_t disagreements = -1;
  const std::vector<WorkloadGroup> groups = GroupsOf(w, &disagreements);
  REQUIRE(groups.size() == 1);  // "pair" has min_member 1: single pods
  CHECK(groups[0].name == "job-a");
  CHECK(groups[0].min_member == 3);  // the oldest row's value
  CHECK(groups[0].members.size() == 3);
  CHECK(disagreements == 1);
  // One tenant for the whole group, from the group's name.
  CHECK(w.pods[0].tenant == TenantOf(options.tenants, "job-a", ""));
  CHECK(w.pods[1].tenant == w.pods[0].tenant);
  CHECK(w.pods[2].tenant == w.pods[0].tenant);
  CHECK(w.notes.back().find("1 pod groups (min_member >= 2) with 3 pods; 1 groups") !=
        std::string::npos);

  Workload bad;
  CHECK(ParseAlibabaPodList("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,"
                            "deletion_time,group,min_member\nx,1,1,0,0,1,2,g,-1\n",
                            "pods.csv", options, &bad)
            .message()
            .find("pods.csv:2: min_member") != std::string::npos);
}

}  // namespace
}  // namespace trace_reader_test
}  // namespace capext
