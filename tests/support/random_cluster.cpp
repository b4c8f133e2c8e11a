// RandomCluster: the cluster-level objects (nodes, priority classes, PDBs) and the case assembly.
// Quotas are drawn in random_quotas.cpp, pods in random_pods.cpp.
#include "tests/support/random_cluster.h"

#include <algorithm>

#include "tests/support/quantity_text.h"

namespace capext::testing {

RandomCluster::RandomCluster(uint64_t seed, RandomClusterOptions options)
    : rng_(seed), options_(options) {}

std::string RandomCluster::FreshName(const std::string& prefix) {
  return prefix + "-" + std::to_string(++counter_);
}

int64_t RandomCluster::NextTimeMs() {
  // A tie with the previous time now and then (victim order then falls back on arrival order).
  now_ms_ += 1000 * rng_.Pick({0, 1, 1, 2, 5});
  return now_ms_;
}

std::string RandomCluster::AnyNamespace() {
  if (quota_namespaces_.empty() || (!free_namespaces_.empty() && !rng_.Chance(75)))
    return free_namespaces_.empty() ? "f-none" : rng_.Pick(free_namespaces_);
  return rng_.Pick(quota_namespaces_);
}

JsonTree RandomCluster::NewNode(const std::string& name) {
  JsonTree node = JsonTree::Object();
  node["apiVersion"] = "v1";
  node["kind"] = "Node";
  node["metadata"]["name"] = name;
  JsonTree& labels = node["metadata"]["labels"];
  labels["kubernetes.io/hostname"] = name;
  labels["topology.kubernetes.io/zone"] = rng_.Pick({"z1", "z2", "z3"});
  labels["rank"] = std::to_string(rng_.Between(1, 9));
  if (rng_.Chance(30)) labels["pool"] = rng_.Pick({"gpu", "batch"});
  if (rng_.Chance(22)) {
    const int taints = rng_.Chance(20) ? 2 : 1;
    JsonTree& list = node["spec"]["taints"];
    for (int i = 0; i < taints; ++i) {
      JsonTree taint = JsonTree::Object();
      switch (rng_.Below(3)) {
        case 0:
          taint["key"] = "dedicated";
          taint["value"] = rng_.Pick({"gpu", "batch"});
          taint["effect"] = "NoSchedule";
          break;
        case 1:
          taint["key"] = "maintenance";
          taint["effect"] = "NoExecute";
          break;
        default:
          taint["key"] = "soft";
          taint["value"] = "x";
          taint["effect"] = "PreferNoSchedule";
      }
      list.Push(std::move(taint));
    }
  }
  if (rng_.Chance(8)) node["spec"]["unschedulable"] = true;
  const int64_t cpu = rng_.Pick<int64_t>({2000, 4000, 4000, 8000, 8000, 8000, 16000, 3500});
  const int64_t memory = rng_.Pick<int64_t>({4, 8, 16, 16, 32, 64}) * kGiB;
  JsonTree& alloc = node["status"]["allocatable"];
  alloc["cpu"] = CpuText(rng_, cpu);
  alloc["memory"] = MemoryText(rng_, memory);
  const int pods_draw = rng_.Below(100);
  if (pods_draw < 70) {
    alloc["pods"] = "110";
  } else if (pods_draw < 87) {
    alloc["pods"] = std::to_string(rng_.Between(1, 4));
  } else if (pods_draw < 90) {
    alloc["pods"] = "0";
  }  // else no pods allocatable: unlimited
  int64_t gpu = 0;
  if (rng_.Chance(25)) {
    gpu = rng_.Pick<int64_t>({1, 2, 4, 8});
    alloc["nvidia.com/gpu"] = std::to_string(gpu);
  }
  if (rng_.Chance(30)) alloc["ephemeral-storage"] = MemoryText(rng_, 100 * kGiB);
  if (rng_.Chance(3)) alloc.Erase("memory");  // scoring then averages cpu alone
  node["status"]["capacity"] = alloc;
  node_names_.push_back(name);
  node_cpu_.push_back(cpu);
  node_used_.push_back(0);
  total_cpu_ += cpu;
  total_memory_ += memory;
  total_gpu_ += gpu;
  return node;
}

std::vector<JsonTree> RandomCluster::PriorityClasses() {
  struct Class {
    const char* name;
    int value;
    bool never;
  };
  // "missing" is named by pods but never created (its pods get priority 0).
  const Class kClasses[] = {{"batch", 100, false},
                            {"service", 1000, false},
                            {"critical", 100000, rng_.Chance(50)},
                            {"never-mid", 500, true}};
  class_names_ = {"batch", "service", "critical", "never-mid", "missing"};
  std::vector<JsonTree> out;
  auto make = [&](const std::string& name, int value, bool never, bool global_default) {
    JsonTree pc = JsonTree::Object();
    pc["apiVersion"] = "scheduling.k8s.io/v1";
    pc["kind"] = "PriorityClass";
    pc["metadata"]["name"] = name;
    pc["value"] = value;
    if (global_default) pc["globalDefault"] = true;
    if (never || rng_.Chance(30)) pc["preemptionPolicy"] = never ? "Never" : "PreemptLowerPriority";
    out.push_back(std::move(pc));
  };
  for (const Class& c : kClasses) {
    if (rng_.Chance(85)) make(c.name, c.value, c.never, false);
  }
  // Global defaults: none, one, or two (the smallest value wins).
  if (rng_.Chance(50)) make("default-a", rng_.Pick({0, 10, 1000}), rng_.Chance(15), true);
  if (rng_.Chance(15)) make("default-b", rng_.Pick({5, 2000}), false, true);
  return out;
}

JsonTree RandomCluster::NewPdb(const ClusterCase& c, const std::string& ns) {
  JsonTree pdb = JsonTree::Object();
  pdb["apiVersion"] = "policy/v1";
  pdb["kind"] = "PodDisruptionBudget";
  pdb["metadata"]["name"] = FreshName("pdb");
  pdb["metadata"]["namespace"] = ns;
  JsonTree& selector = pdb["spec"]["selector"] = JsonTree::Object();
  const int form = rng_.Below(10);
  if (form < 6) {
    selector["matchLabels"]["app"] = rng_.Pick({"a", "b", "c"});
  } else if (form < 9) {
    JsonTree expr = JsonTree::Object();
    expr["key"] = "app";
    expr["operator"] = rng_.Pick({"In", "NotIn", "Exists"});
    if (expr["operator"].str() != "Exists") expr["values"].Push(rng_.Pick({"a", "b"}));
    selector["matchExpressions"].Push(std::move(expr));
  }  // else an empty selector: selects nothing (as kube-scheduler's preemption reads it)
  pdb["status"]["disruptionsAllowed"] = rng_.Pick({0, 0, 1, 2});
  // Pods already being disrupted (evicted, not yet gone) are not counted again.
  for (const JsonTree* pod : c.ObjectsOf("Pod")) {
    if (pod->Find("metadata")->Find("namespace")->str() == ns && rng_.Chance(15))
      pdb["status"]["disruptedPods"][pod->Find("metadata")->Find("name")->str()] =
          "2026-01-01T00:00:00Z";
  }
  return pdb;
}

ClusterCase RandomCluster::Generate() {
  ClusterCase c;
  c.semantics = rng_.Chance(options_.scheduler_plugins_percent) ? QuotaSemantics::kSchedulerPlugins
                                                                : QuotaSemantics::kCapacityExtender;
  semantics_ = c.semantics;
  node_names_.clear();
  node_cpu_.clear();
  node_used_.clear();
  ns_cpu_used_.clear();
  total_cpu_ = total_memory_ = total_gpu_ = 0;
  accelerator_annotation_ = rng_.Chance(15) ? "ti.cloud.tencent.com/gpu-type" : "";
  c.accelerator_annotation = accelerator_annotation_;

  // Mostly 3-6 nodes; names sort as strings ("n10" < "n2"), as the node order does.
  const int nodes = std::clamp(rng_.Chance(70) ? rng_.Between(3, 6) : rng_.Between(1, 12),
                               options_.min_nodes, options_.max_nodes);
  for (int i = 1; i <= nodes; ++i)
    c.objects.push_back(NewNode("n" + std::to_string(i)));
  for (JsonTree& pc : PriorityClasses())
    c.objects.push_back(std::move(pc));

  quota_namespaces_.clear();
  free_namespaces_.clear();
  limits_.clear();
  min_left_.clear();
  plans_ = PlanQuotas();
  for (const PlannedQuota& plan : plans_) {
    c.objects.push_back(NewQuota(plan));
    if (!plan.grouping) quota_namespaces_.push_back(plan.ns);
    // A second quota in a root's namespace now and then: reported and ignored (or, when it is
    // the one in use, the root's children lose their parent).
    if (plan.depth == 0 && rng_.Chance(3)) {
      PlannedQuota dup = plan;
      dup.name += "-dup";
      dup.parent.clear();
      dup.depth = 1;
      c.objects.push_back(NewQuota(dup));
    }
  }
  const int free = rng_.Between(0, options_.max_free_namespaces);
  for (int i = 1; i <= free; ++i)
    free_namespaces_.push_back("f" + std::to_string(i));

  std::vector<std::string> all = quota_namespaces_;
  all.insert(all.end(), free_namespaces_.begin(), free_namespaces_.end());
  for (const std::string& ns : all) {
    AddPods(&c, ns);
    if (rng_.Chance(30)) c.objects.push_back(NewPdb(c, ns));
  }
  return c;
}

}  // namespace capext::testing
