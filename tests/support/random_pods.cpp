// RandomCluster: pods (of the cluster and to ask about).
#include <algorithm>

#include "tests/support/quantity_text.h"
#include "tests/support/random_cluster.h"

namespace capext::testing {
namespace {

JsonTree Requests(SeededRandom& rng, int64_t cpu, int64_t memory, int64_t gpu, bool ephemeral) {
  JsonTree r = JsonTree::Object();
  if (cpu > 0) r["cpu"] = CpuText(rng, cpu);
  if (memory > 0) r["memory"] = MemoryText(rng, memory);
  if (gpu > 0) r["nvidia.com/gpu"] = std::to_string(gpu);
  if (ephemeral) r["ephemeral-storage"] = "1Gi";
  return r;
}

JsonTree Container(const std::string& name, JsonTree requests) {
  JsonTree c = JsonTree::Object();
  c["name"] = name;
  c["image"] = "registry.k8s.io/pause:3.9";
  if (requests.size() > 0) c["resources"]["requests"] = std::move(requests);
  return c;
}

bool IsTerminalPhase(const JsonTree& pod) {
  const JsonTree* status = pod.Find("status");
  const JsonTree* phase = status ? status->Find("phase") : nullptr;
  return phase != nullptr && (phase->str() == "Succeeded" || phase->str() == "Failed");
}

}  // namespace

void RandomCluster::FillContainers(JsonTree* spec, int size_class) {
  int64_t cpu = 0, memory = 0, gpu = 0;
  switch (size_class) {
    case 0:
      cpu = rng_.Pick<int64_t>({100, 250, 500, 1000});
      memory = rng_.Pick<int64_t>({128, 256, 512, 1024}) * kMiB;
      break;
    case 1:
      cpu = rng_.Pick<int64_t>({1000, 1500, 2000, 3000, 4000});
      memory = rng_.Pick<int64_t>({1, 2, 4}) * kGiB;
      break;
    case 2:
      cpu = rng_.Pick<int64_t>({4000, 6000, 8000});
      memory = rng_.Pick<int64_t>({8, 16}) * kGiB;
      break;
    case 3:
      cpu = rng_.Pick<int64_t>({12000, 16000, 32000, 100000});
      memory = rng_.Pick<int64_t>({64, 128}) * kGiB;
      gpu = rng_.Chance(30) ? 16 : 0;
      break;
    default:
      cpu = rng_.Pick<int64_t>({500, 1000, 2000});
      memory = rng_.Pick<int64_t>({1, 4}) * kGiB;
      gpu = rng_.Pick<int64_t>({1, 1, 2, 4});
  }
  if (rng_.Chance(40)) memory = 0;
  if (size_class != 4 && rng_.Chance(6)) gpu = rng_.Pick<int64_t>({1, 2});
  const bool ephemeral = rng_.Chance(8);
  if (rng_.Chance(4)) cpu = memory = gpu = 0;  // no requests at all
  last_cpu_ = cpu;
  JsonTree& containers = (*spec)["containers"] = JsonTree::Array();
  if (cpu > 100 && rng_.Chance(30)) {
    // Two containers sharing the request.
    const int64_t part = cpu / 100 * rng_.Between(1, 99) / 100 * 100 + 50;
    containers.Push(Container("main", Requests(rng_, part, memory, gpu, ephemeral)));
    containers.Push(Container("helper", Requests(rng_, cpu - part, 0, 0, false)));
  } else {
    JsonTree& main =
        containers.Push(Container("main", Requests(rng_, cpu, memory, gpu, ephemeral)));
    // A request of 0 (the same as none, for node fit and quotas).
    if (rng_.Chance(3))
      main["resources"]["requests"][rng_.Pick({"memory", "nvidia.com/gpu"})] = "0";
  }
  if (rng_.Chance(15)) {
    // An ordinary init container: its request counts when larger than the containers'.
    const int64_t init_cpu = rng_.Pick<int64_t>({cpu / 2, cpu * 2, 500});
    (*spec)["initContainers"].Push(Container("init", Requests(rng_, init_cpu, memory, 0, false)));
  }
  if (rng_.Chance(8)) {
    // A restartable (sidecar) init container: counts with the containers.
    JsonTree sidecar = Container("sidecar", Requests(rng_, 100, 64 * kMiB, 0, false));
    sidecar["restartPolicy"] = "Always";
    (*spec)["initContainers"].Push(std::move(sidecar));
  }
  if (rng_.Chance(8)) {
    (*spec)["overhead"]["cpu"] = "100m";
    (*spec)["overhead"]["memory"] = "64Mi";
  }
}

void RandomCluster::FillConstraints(JsonTree* spec) {
  if (rng_.Chance(25)) {
    JsonTree& selector = (*spec)["nodeSelector"];
    switch (rng_.Below(3)) {
      case 0:
        selector["topology.kubernetes.io/zone"] = rng_.Pick({"z1", "z2"});
        break;
      case 1:
        selector["pool"] = "gpu";
        break;
      default:
        if (!node_names_.empty()) selector["kubernetes.io/hostname"] = rng_.Pick(node_names_);
    }
  }
  if (rng_.Chance(20)) {
    JsonTree& terms =
        (*spec)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
               ["nodeSelectorTerms"];
    const int count = rng_.Between(1, 2);
    for (int t = 0; t < count; ++t) {
      JsonTree term = JsonTree::Object();
      const int exprs = rng_.Chance(5) ? 0 : rng_.Between(1, 2);  // an empty term matches nothing
      for (int e = 0; e < exprs; ++e) {
        JsonTree expr = JsonTree::Object();
        switch (rng_.Below(4)) {
          case 0:
            expr["key"] = "topology.kubernetes.io/zone";
            expr["operator"] = rng_.Pick({"In", "NotIn"});
            expr["values"].Push(rng_.Pick({"z1", "z2", "z3"}));
            break;
          case 1:
            expr["key"] = "rank";
            expr["operator"] = rng_.Pick({"Gt", "Lt"});
            expr["values"].Push(std::to_string(rng_.Between(2, 8)));
            break;
          case 2:
            expr["key"] = "pool";
            expr["operator"] = rng_.Pick({"Exists", "DoesNotExist"});
            break;
          default:
            expr["key"] = "kubernetes.io/hostname";
            expr["operator"] = "In";
            for (int k = 0; k < 2 && !node_names_.empty(); ++k)
              expr["values"].Push(rng_.Pick(node_names_));
        }
        term["matchExpressions"].Push(std::move(expr));
      }
      if (rng_.Chance(15) && !node_names_.empty()) {
        JsonTree field = JsonTree::Object();
        field["key"] = "metadata.name";
        field["operator"] = rng_.Pick({"In", "NotIn"});
        field["values"].Push(rng_.Pick(node_names_));
        term["matchFields"].Push(std::move(field));
      }
      terms.Push(std::move(term));
    }
  }
  if (rng_.Chance(35)) {
    JsonTree& tolerations = (*spec)["tolerations"];
    JsonTree t = JsonTree::Object();
    switch (rng_.Below(5)) {
      case 0:
        t["key"] = "dedicated";
        t["operator"] = "Equal";
        t["value"] = rng_.Pick({"gpu", "batch"});
        t["effect"] = "NoSchedule";
        break;
      case 1:
        t["key"] = "maintenance";
        t["operator"] = "Exists";
        break;
      case 2:
        t["key"] = "dedicated";
        t["operator"] = "Exists";
        t["effect"] = rng_.Pick({"NoSchedule", "NoExecute"});
        break;
      case 3:
        t["key"] = "node.kubernetes.io/unschedulable";
        t["operator"] = "Exists";
        t["effect"] = "NoSchedule";
        break;
      default:
        t["operator"] = "Exists";  // tolerates every taint
    }
    tolerations.Push(std::move(t));
  }
}

void RandomCluster::FillPriority(JsonTree* spec) {
  const int mode = rng_.Below(100);
  if (mode < 45) {
    (*spec)["priority"] = rng_.Pick({0, 0, 10, 100, 500, 1000, 1000, 100000, -10});
    if (rng_.Chance(40)) (*spec)["priorityClassName"] = rng_.Pick(class_names_);
  } else if (mode < 75) {
    (*spec)["priorityClassName"] = rng_.Pick(class_names_);
  }  // else neither: the global default class, if any
  const int policy = rng_.Below(100);
  if (policy < 10) {
    (*spec)["preemptionPolicy"] = "Never";
  } else if (policy < 20) {
    (*spec)["preemptionPolicy"] = "PreemptLowerPriority";
  }
}

std::string RandomCluster::PlaceBound(int64_t cpu) {
  std::vector<int> fits;
  for (std::size_t n = 0; n < node_names_.size(); ++n) {
    if (node_used_[n] + cpu <= node_cpu_[n]) fits.push_back(static_cast<int>(n));
  }
  int n = -1;
  if (!fits.empty()) {
    n = rng_.Pick(fits);
  } else if (!node_names_.empty() && rng_.Chance(25)) {
    n = rng_.Below(static_cast<int>(node_names_.size()));  // a snapshot may overcommit
  }
  if (n < 0) return "";
  if (rng_.Chance(2)) return "gone-node";  // bound to a node deleted since (pods keep counting)
  node_used_[static_cast<std::size_t>(n)] += cpu;
  return node_names_[static_cast<std::size_t>(n)];
}

PodLifecycle RandomCluster::DrawLifecycle() {
  const int d = rng_.Below(100);
  if (d < 45) return PodLifecycle::kRunning;
  if (d < 50) return PodLifecycle::kBoundPending;
  if (d < 56) return PodLifecycle::kTerminal;
  if (d < 60) return PodLifecycle::kTerminating;
  if (d < 80) return PodLifecycle::kPending;
  if (d < 88) return PodLifecycle::kNominated;
  if (d < 94) return PodLifecycle::kReserved;
  return PodLifecycle::kOurNomination;
}

JsonTree RandomCluster::NewPod(const std::string& ns, PodLifecycle lifecycle,
                               const std::string& node) {
  JsonTree pod = JsonTree::Object();
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  const std::string name = FreshName("p");
  JsonTree& meta = pod["metadata"];
  meta["name"] = name;
  meta["namespace"] = ns;
  meta["uid"] = "uid-" + name;
  // A snapshot's pod may lack a uid (it is then keyed by namespace/name).
  if (rng_.Chance(4)) meta.Erase("uid");
  const int64_t created = NextTimeMs();
  meta["creationTimestamp"] = TimeText(created);
  if (rng_.Chance(55)) meta["labels"]["app"] = rng_.Pick({"a", "b", "c"});
  JsonTree& spec = pod["spec"];
  const bool bound =
      lifecycle == PodLifecycle::kRunning || lifecycle == PodLifecycle::kBoundPending ||
      lifecycle == PodLifecycle::kTerminal || lifecycle == PodLifecycle::kTerminating;
  if (bound) spec["nodeName"] = node;
  FillPriority(&spec);
  FillContainers(&spec, rng_.Pick({0, 0, 1, 1, 1, 2, 4}));
  if (!accelerator_annotation_.empty() && rng_.Chance(40))
    meta["annotations"][accelerator_annotation_] = rng_.Pick({"V100", "A100"});
  // Bound pods may still carry constraints (the state drops them); pending ones use them.
  if (!bound || rng_.Chance(20)) FillConstraints(&spec);
  JsonTree& status = pod["status"];
  switch (lifecycle) {
    case PodLifecycle::kRunning:
    case PodLifecycle::kTerminating:
      status["phase"] = "Running";
      status["startTime"] = TimeText(created + 1000 * rng_.Pick({0, 1, 3}));
      if (lifecycle == PodLifecycle::kTerminating)
        meta["deletionTimestamp"] = TimeText(NextTimeMs());
      break;
    case PodLifecycle::kBoundPending:
      status["phase"] = "Pending";
      break;
    case PodLifecycle::kTerminal:
      status["phase"] = rng_.Pick({"Succeeded", "Failed"});
      status["startTime"] = TimeText(created);
      break;
    case PodLifecycle::kNominated:
      status["nominatedNodeName"] = node;
      [[fallthrough]];
    default:
      status["phase"] = "Pending";
      if (rng_.Chance(40)) {
        JsonTree cond = JsonTree::Object();
        cond["type"] = "PodScheduled";
        cond["status"] = "False";
        cond["reason"] = "Unschedulable";
        status["conditions"].Push(std::move(cond));
      }
  }
  return pod;
}

void RandomCluster::AddPods(ClusterCase* c, const std::string& ns) {
  bool light = false;
  for (const PlannedQuota& plan : plans_)
    light = light || (plan.ns == ns && plan.light);
  const int count = rng_.Between(0, light ? 2 : options_.max_pods_per_namespace);
  for (int i = 0; i < count; ++i) {
    PodLifecycle lifecycle = DrawLifecycle();
    // The request decides where a bound pod goes: draw the pod first, then place it.
    JsonTree pod = NewPod(ns, lifecycle, "");
    std::string node;
    switch (lifecycle) {
      case PodLifecycle::kRunning:
      case PodLifecycle::kBoundPending:
      case PodLifecycle::kTerminating:
        node = PlaceBound(last_cpu_);
        if (!node.empty()) ns_cpu_used_[ns] += last_cpu_;
        if (node.empty()) {
          // Nowhere to go: it waits instead.
          pod["spec"].Erase("nodeName");
          pod["status"] = JsonTree::Object();
          pod["status"]["phase"] = "Pending";
          pod["metadata"].Erase("deletionTimestamp");
        } else {
          pod["spec"]["nodeName"] = node;
        }
        break;
      case PodLifecycle::kTerminal:
        if (!node_names_.empty()) pod["spec"]["nodeName"] = rng_.Pick(node_names_);
        break;
      case PodLifecycle::kNominated:
        pod["status"]["nominatedNodeName"] =
            node_names_.empty() || rng_.Chance(8) ? "gone-node" : rng_.Pick(node_names_);
        break;
      case PodLifecycle::kReserved:
      case PodLifecycle::kOurNomination:
        if (node_names_.empty()) break;
        c->held.push_back({lifecycle == PodLifecycle::kReserved ? HeldRoom::Kind::kReservation
                                                                : HeldRoom::Kind::kNomination,
                           PodKey(pod), rng_.Chance(5) ? "gone-node" : rng_.Pick(node_names_),
                           // Made now: after the pods drawn so far, now and then at the same
                           // time as the last one (a tie that arrival order breaks).
                           lifecycle == PodLifecycle::kReserved ? NextTimeMs() : 0});
        break;
      case PodLifecycle::kPending:
        break;
    }
    if (pod["spec"].Find("nodeName") != nullptr && pod["spec"]["nodeName"].str().empty())
      pod["spec"].Erase("nodeName");
    c->objects.push_back(std::move(pod));
  }
}

JsonTree RandomCluster::Question(const ClusterCase& c) {
  if (rng_.Chance(25)) {
    // A pending pod of the case, as kube-scheduler would send it (a reserved pod is being
    // bound: kube-scheduler does not ask about it again).
    std::vector<const JsonTree*> pending;
    for (const JsonTree* pod : c.ObjectsOf("Pod")) {
      const JsonTree* spec = pod->Find("spec");
      if ((spec != nullptr && spec->Find("nodeName") != nullptr) || IsTerminalPhase(*pod)) continue;
      const std::string key = PodKey(*pod);
      const bool reserved = std::any_of(c.held.begin(), c.held.end(), [&](const HeldRoom& h) {
        return h.pod_key == key && h.kind == HeldRoom::Kind::kReservation;
      });
      if (!reserved) pending.push_back(pod);
    }
    if (!pending.empty()) return *rng_.Pick(pending);
  }
  std::string ns = rng_.Chance(5) ? "f-none" : AnyNamespace();
  // In a forest, often a namespace still within its cpu min: the preemptor's side of the
  // tree's victim rule must be within its guarantee for it to take from siblings and cousins.
  if (forest_ && rng_.Chance(40)) {
    std::vector<std::string> within;
    for (const PlannedQuota& plan : plans_) {
      const QuotaLimits& limits = limits_[plan.Key()];
      if (plan.grouping || !limits.min || limits.min->count("cpu") == 0) continue;
      if (ns_cpu_used_[plan.ns] < limits.min->at("cpu")) within.push_back(plan.ns);
    }
    if (!within.empty()) ns = rng_.Pick(within);
  }
  // Now and then the first pod of a grouping quota's namespace (its parent's own node).
  if (rng_.Chance(4)) {
    for (const PlannedQuota& plan : plans_) {
      if (plan.grouping && rng_.Chance(50)) {
        ns = plan.ns;
        break;
      }
    }
  }
  JsonTree pod = NewPod(ns, rng_.Chance(10) ? PodLifecycle::kNominated : PodLifecycle::kPending,
                        node_names_.empty() ? "gone-node" : rng_.Pick(node_names_));
  const std::string name = FreshName("ask");
  pod["metadata"]["name"] = name;
  pod["metadata"]["uid"] = "uid-" + name;
  JsonTree& spec = pod["spec"];
  // Questions are larger and more important than the average pod: they are the ones that
  // reach the quota limits and preempt.
  spec.Erase("containers");
  spec.Erase("initContainers");
  spec.Erase("overhead");
  FillContainers(&spec, rng_.Pick({0, 0, 1, 1, 1, 2, 2, 3, 4}));
  if (rng_.Chance(55)) spec["priority"] = rng_.Pick({500, 1000, 1000, 100000});
  // Mostly pods that may preempt (what admission writes from their class, or the default).
  if (rng_.Chance(60)) spec["preemptionPolicy"] = "PreemptLowerPriority";
  return pod;
}

}  // namespace capext::testing
