// Devices claimed through DRA in the quota (docs/devices.md): the demand of a pod, the quota
// resource of a class, shared claims charged once, re-filing on claim changes, bad input, and
// victims that keep a shared claim.
#include "core/device_demand.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/preemption.h"
#include "core/quota_admission.h"
#include "tests/support/builders.h"

namespace capext {
namespace device_demand_test {
namespace {

using testing::KeysOf;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;

constexpr const char* kGpu = "nvidia.com/gpu";

DeviceRequest Exactly(std::string name, std::string device_class, int64_t count) {
  DeviceRequest r;
  r.name = std::move(name);
  r.exactly.device_class = std::move(device_class);
  r.exactly.count = count;
  return r;
}

ResourceClaim Claim(std::string ns, std::string name, std::vector<DeviceRequest> requests) {
  ResourceClaim c;
  c.ns = std::move(ns);
  c.name = std::move(name);
  c.requests = std::move(requests);
  return c;
}

// A state with class gpu.nvidia.com mapped to nvidia.com/gpu and a quota eq1 at max 4 GPUs.
ClusterState GpuState() {
  ClusterState state;
  state.SetDeviceClassMappings({DeviceClassMapping{kGpu, {"gpu.nvidia.com"}, std::nullopt}});
  state.UpsertDeviceClass(DeviceClass{"gpu.nvidia.com", ""});
  state.UpsertNode(MakeNode("n1", 64000));
  state.UpsertQuota(MakeQuota("eq1", std::nullopt, ResourceList{{kGpu, 4}}));
  return state;
}

TEST_CASE("the quota resource of a class: extendedResourceName, mapping, deviceclass/<name>",
          "[devices]") {
  ClusterState state;
  state.SetDeviceClassMappings(
      {DeviceClassMapping{"example.com/mapped", {"a", "b"}, std::nullopt}});
  state.UpsertDeviceClass(DeviceClass{"a", ""});
  state.UpsertDeviceClass(DeviceClass{"b", "example.com/extended"});
  state.UpsertDeviceClass(DeviceClass{"c", ""});
  state.UpsertResourceClaim(
      Claim("ns", "x", {Exactly("r1", "a", 2), Exactly("r2", "b", 3), Exactly("r3", "c", 1)}));
  NormalizedPod pod = state.Normalize(MakePod("ns", "p").Cpu(100).Claim("gpus", "x"));
  CHECK(pod.quota_request().Get("example.com/mapped") == 2);
  CHECK(pod.quota_request().Get("example.com/extended") == 3);
  CHECK(pod.quota_request().Get("deviceclass/c") == 1);
  CHECK(pod.quota_request().Get("cpu") == 100);
  // Node fit reads the container requests only
  // (docs/devices.md#6-quota-only-node-fit-ignores-devices).
  CHECK(pod.requests == ResourceList{{"cpu", 100}});

  SECTION("the reference's semantics counts no claim") {
    ClusterState reference(QuotaSemantics::kSchedulerPlugins);
    reference.UpsertDeviceClass(DeviceClass{"c", ""});
    reference.UpsertResourceClaim(Claim("ns", "x", {Exactly("r3", "c", 1)}));
    NormalizedPod p = reference.Normalize(MakePod("ns", "p").Cpu(100).Claim("gpus", "x"));
    CHECK(p.quota_request() == ResourceList{{"cpu", 100}});
  }
}

TEST_CASE("a fifth GPU claimed through a template is refused with the numbers", "[devices]") {
  ClusterState state = GpuState();
  ResourceClaimTemplate tmpl = Claim("eq1", "one-gpu", {Exactly("gpu", "gpu.nvidia.com", 1)});
  state.UpsertResourceClaimTemplate(tmpl);
  for (int i = 0; i < 4; ++i) {
    const std::string name = "w" + std::to_string(i);
    state.UpsertResourceClaim(Claim("eq1", name + "-gpu", {Exactly("gpu", "gpu.nvidia.com", 1)}));
    state.UpsertPod(
        MakePod("eq1", name).ClaimFromTemplate("gpu", "one-gpu", name + "-gpu").BoundTo("n1"));
  }
  CHECK(state.Used("eq1").Get(kGpu) == 4);
  // Before its claim is generated, the fifth is charged through the template.
  NormalizedPod fifth = state.Normalize(MakePod("eq1", "w4").ClaimFromTemplate("gpu", "one-gpu"));
  CHECK(fifth.quota_request().Get(kGpu) == 1);
  Status s = CheckQuota(state, fifth);
  CHECK(s.code() == StatusCode::kUnschedulable);
  CHECK_THAT(s.message(), Catch::Contains("nvidia.com/gpu used 4 + request 1 > max 4"));

  SECTION("a bound pod's deletion gives the GPU back") {
    state.DeletePod("uid-eq1-w0");
    CHECK(state.Used("eq1").Get(kGpu) == 3);
    CHECK(CheckQuota(state, fifth).ok());
  }
}

TEST_CASE("a shared claim is charged once, to one carrier at a time", "[devices]") {
  ClusterState state = GpuState();
  state.UpsertResourceClaim(Claim("eq1", "shared", {Exactly("gpu", "gpu.nvidia.com", 2)}));
  state.UpsertPod(MakePod("eq1", "p1").Claim("g", "shared").BoundTo("n1"));
  CHECK(state.Used("eq1").Get(kGpu) == 2);
  // A pending pod of a held claim adds nothing.
  NormalizedPod p2 = state.Normalize(MakePod("eq1", "p2").Claim("g", "shared"));
  CHECK(p2.quota_request().Get(kGpu) == 0);
  state.UpsertPod(MakePod("eq1", "p2").Claim("g", "shared").BoundTo("n1"));
  CHECK(state.Used("eq1").Get(kGpu) == 2);
  // Another pod's own 3 GPUs: 2 + 3 > 4.
  state.UpsertResourceClaim(Claim("eq1", "three", {Exactly("gpu", "gpu.nvidia.com", 3)}));
  Status s = CheckQuota(state, state.Normalize(MakePod("eq1", "p3").Claim("g", "three")));
  CHECK_THAT(s.message(), Catch::Contains("nvidia.com/gpu used 2 + request 3 > max 4"));
  // The carrier leaves: the other holder carries the claim, the usage stays.
  state.DeletePod("uid-eq1-p1");
  CHECK(state.Used("eq1").Get(kGpu) == 2);
  CHECK(state.FindPod("uid-eq1-p2")->quota_request().Get(kGpu) == 2);
  state.DeletePod("uid-eq1-p2");
  CHECK(state.Used("eq1").Get(kGpu) == 0);

  SECTION("a terminal holder stops holding") {
    state.UpsertPod(MakePod("eq1", "p4").Claim("g", "shared").BoundTo("n1"));
    CHECK(state.Used("eq1").Get(kGpu) == 2);
    state.UpsertPod(
        MakePod("eq1", "p4").Claim("g", "shared").BoundTo("n1").Phase(PodPhase::kSucceeded));
    CHECK(state.Used("eq1").Get(kGpu) == 0);
  }
  SECTION("a reservation holds the claim; its release gives it back") {
    state.UpsertPod(MakePod("eq1", "p5").Claim("g", "shared"));
    state.Reserve("uid-eq1-p5", "n1", 1000, 5000);
    CHECK(state.Used("eq1").Get(kGpu) == 2);
    state.UpsertPod(MakePod("eq1", "p6").Claim("g", "shared").BoundTo("n1"));
    CHECK(state.Used("eq1").Get(kGpu) == 2);
    state.ReleaseReservation("uid-eq1-p5");
    CHECK(state.Used("eq1").Get(kGpu) == 2);  // p6 carries it now
    CHECK(state.FindPod("uid-eq1-p6")->quota_request().Get(kGpu) == 2);
    state.DeletePod("uid-eq1-p6");
    CHECK(state.Used("eq1").Get(kGpu) == 0);
  }
  SECTION("a copy of the state counts the same") {
    state.UpsertPod(MakePod("eq1", "a").Claim("g", "shared").BoundTo("n1"));
    state.UpsertPod(MakePod("eq1", "b").Claim("g", "shared").BoundTo("n1"));
    ClusterState copy(state);
    CHECK(copy.Used("eq1") == state.Used("eq1"));
  }
}

TEST_CASE("a claim's change re-files the pods that name it", "[devices]") {
  ClusterState state = GpuState();
  state.UpsertPod(MakePod("eq1", "p").Claim("g", "c").BoundTo("n1"));
  // Not in the cache yet: a bound pod counts what can be counted; a pending one waits.
  CHECK(state.Used("eq1").Get(kGpu) == 0);
  NormalizedPod pending = state.Normalize(MakePod("eq1", "q").Claim("g", "missing"));
  Status s = CheckQuota(state, pending);
  CHECK(s.code() == StatusCode::kUnschedulable);
  CHECK(s.message() == "pod eq1/q waits for its devices: ResourceClaim eq1/missing not found");
  state.UpsertResourceClaim(Claim("eq1", "c", {Exactly("gpu", "gpu.nvidia.com", 3)}));
  CHECK(state.Used("eq1").Get(kGpu) == 3);
  state.UpsertResourceClaim(Claim("eq1", "c", {Exactly("gpu", "gpu.nvidia.com", 1)}));
  CHECK(state.Used("eq1").Get(kGpu) == 1);
  state.DeleteResourceClaim("eq1", "c");
  CHECK(state.Used("eq1").Get(kGpu) == 0);
  SECTION("a class change re-files them too") {
    state.UpsertResourceClaim(Claim("eq1", "c", {Exactly("gpu", "gpu.nvidia.com", 1)}));
    state.UpsertDeviceClass(DeviceClass{"gpu.nvidia.com", "example.com/xgpu"});
    CHECK(state.Used("eq1").Get(kGpu) == 0);
    CHECK(state.Used("eq1").Get("example.com/xgpu") == 1);
  }
}

TEST_CASE("bad input holds the pod with its reason, and no victim is evicted for it", "[devices]") {
  ClusterState state = GpuState();
  auto reason = [&](Pod pod) {
    return CheckQuota(state, state.Normalize(std::move(pod))).message();
  };
  CHECK(reason(MakePod("eq1", "p").ClaimFromTemplate("g", "nope")) ==
        "pod eq1/p waits for its devices: ResourceClaimTemplate eq1/nope not found");
  state.UpsertResourceClaim(Claim("eq1", "odd", {Exactly("r", "unknown.class", 1)}));
  CHECK(reason(MakePod("eq1", "p").Claim("g", "odd")) ==
        "pod eq1/p waits for its devices: DeviceClass unknown.class not found (request r of "
        "ResourceClaim eq1/odd)");
  ResourceClaim bad = Claim("eq1", "bad", {});
  bad.malformed = "spec.devices.requests[0]: no exactly, deviceClassName or firstAvailable";
  state.UpsertResourceClaim(bad);
  CHECK(reason(MakePod("eq1", "p").Claim("g", "bad")) ==
        "pod eq1/p waits for its devices: ResourceClaim eq1/bad is malformed: "
        "spec.devices.requests[0]: no exactly, deviceClassName or firstAvailable");
  // A namespace without a quota is not held: nothing of it is counted.
  CHECK(CheckQuota(state, state.Normalize(MakePod("free", "p").Claim("g", "none"))).ok());

  state.UpsertPod(MakePod("eq1", "low").Priority(0).Cpu(64000).BoundTo("n1"));
  PreemptionPlan plan =
      FindPreemption(state, state.Normalize(MakePod("eq1", "p").Priority(10).Claim("g", "bad")),
                     PriorityThenStartTimeOrder());
  CHECK_FALSE(plan.found());
  CHECK(plan.outcome == PreemptionPlan::Outcome::kNotEligible);
}

TEST_CASE("allocationMode All and firstAvailable", "[devices]") {
  ClusterState state = GpuState();
  DeviceRequest all = Exactly("all", "gpu.nvidia.com", 0);
  all.exactly.all = true;
  state.UpsertResourceClaim(Claim("eq1", "all", {all}));
  NormalizedPod p = state.Normalize(MakePod("eq1", "p").Claim("g", "all"));
  CHECK(CheckQuota(state, p).message() ==
        "pod eq1/p waits for its devices: allocationMode All of request all before allocation; "
        "configure allocationModeAllCount for DeviceClass gpu.nvidia.com");
  SECTION("a configured count charges it before allocation") {
    state.SetDeviceClassMappings({DeviceClassMapping{kGpu, {"gpu.nvidia.com"}, 8}});
    CHECK(state.Normalize(MakePod("eq1", "p").Claim("g", "all")).quota_request().Get(kGpu) == 8);
  }
  SECTION("once allocated, what the allocation gave") {
    ResourceClaim allocated = Claim("eq1", "all", {all});
    allocated.allocated = true;
    allocated.results = {"all", "all", "all"};
    state.UpsertResourceClaim(allocated);
    CHECK(state.Normalize(MakePod("eq1", "p").Claim("g", "all")).quota_request().Get(kGpu) == 3);
  }
  SECTION("firstAvailable: the largest alternative, then the one allocated") {
    // docs/devices.md#3-what-one-request-charges's worked numbers.
    DeviceRequest b;
    b.name = "b";
    b.first_available = {DeviceSubrequest{"big", "gpu.nvidia.com", false, 4},
                         DeviceSubrequest{"small", "gpu.nvidia.com", false, 1}};
    ResourceClaim c = Claim("eq1", "fa", {Exactly("a", "gpu.nvidia.com", 2), b});
    state.UpsertResourceClaim(c);
    CHECK(state.Normalize(MakePod("eq1", "p").Claim("g", "fa")).quota_request().Get(kGpu) == 6);
    c.allocated = true;
    c.results = {"a", "a", "b/small"};
    state.UpsertResourceClaim(c);
    CHECK(state.Normalize(MakePod("eq1", "p").Claim("g", "fa")).quota_request().Get(kGpu) == 3);
  }
}

TEST_CASE("evicting a holder frees a shared claim's devices only when no other pod keeps it",
          "[devices]") {
  ClusterState state;
  state.SetDeviceClassMappings({DeviceClassMapping{kGpu, {"gpu.nvidia.com"}, std::nullopt}});
  state.UpsertDeviceClass(DeviceClass{"gpu.nvidia.com", ""});
  state.UpsertNode(MakeNode("n1", 64000));
  state.UpsertNode(MakeNode("n2", 64000));
  state.UpsertQuota(MakeQuota("eq1", ResourceList{{kGpu, 2}}, ResourceList{{kGpu, 8}}));
  state.UpsertQuota(MakeQuota("eq2", ResourceList{{kGpu, 2}}, ResourceList{{kGpu, 8}}));
  // eq1 borrows: 4 GPUs over its min of 2, in a claim shared by two pods on two nodes.
  state.UpsertResourceClaim(Claim("eq1", "shared", {Exactly("g", "gpu.nvidia.com", 4)}));
  state.UpsertPod(MakePod("eq1", "a").Claim("g", "shared").Cpu(1000).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "b").Claim("g", "shared").Cpu(1000).BoundTo("n2"));
  CHECK(state.Used("eq1").Get(kGpu) == 4);
  state.UpsertResourceClaim(Claim("eq2", "own", {Exactly("g", "gpu.nvidia.com", 2)}));
  NormalizedPod p = state.Normalize(MakePod("eq2", "p").Claim("g", "own").Cpu(64000));
  // Sum of mins is 4: eq2's 2 GPUs need eq1's borrowed devices back; evicting one pod of the
  // claim frees nothing while the other keeps it, so no single node has victims that help.
  CHECK(state.FindPod("uid-eq1-a")->device_demand()->kept.Get(kGpu) == 4);
  PreemptionPlan plan = FindPreemption(state, p, PriorityThenStartTimeOrder());
  CHECK_FALSE(plan.found());

  SECTION("with the claim held by one pod, evicting it frees the devices") {
    state.DeletePod("uid-eq1-b");
    CHECK(state.FindPod("uid-eq1-a")->device_demand()->kept.empty());
    PreemptionPlan freed = FindPreemption(state, p, PriorityThenStartTimeOrder());
    REQUIRE(freed.found());
    CHECK(KeysOf(freed.chosen.victims) == std::vector<std::string>{"eq1/a"});
  }
}

}  // namespace
}  // namespace device_demand_test
}  // namespace capext
