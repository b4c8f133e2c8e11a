#include "bench/sim/sim_engine.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include "bench/sim/trace_reader.h"
#include "bench/sim/workload.h"
#include "core/quota_admission.h"
#include "core/quota_semantics.h"
#include "policies/node_scorers.h"
#include "policies/policies.h"
#include "policies/victim_orders.h"

namespace capext {
namespace {

// kube-scheduler's numFeasibleNodesToFind (schedule_one.go).
std::size_t NumFeasibleNodesToFind(std::size_t nodes, int percentage) {
  constexpr std::size_t kMinFeasible = 100;
  if (nodes < kMinFeasible) return nodes;
  int64_t pct = percentage;
  if (pct <= 0) pct = std::max<int64_t>(5, 50 - static_cast<int64_t>(nodes) / 125);
  const std::size_t n = nodes * static_cast<std::size_t>(std::min<int64_t>(pct, 100)) / 100;
  return std::max(n, kMinFeasible);
}

// DefaultPreemption's candidate count: max(100, 10% of nodes), at most every node.
std::size_t NumPreemptionCandidates(std::size_t nodes) {
  return std::min(nodes, std::max<std::size_t>(100, nodes / 10));
}

}  // namespace

SimEngine::SimEngine(const SimulationInput& input, const SimulationOptions& options,
                     SimulationResult* out)
    : input_(input),
      options_(options),
      out_(out),
      profile_(SimProfilePolicies().default_entry().make()),
      profile_status_(ResolveSimProfile(options.policy, &profile_)),
      state_(options.cluster_quotas.value_or(profile_.semantics)) {
  state_.SetDeviceClassMappings(options.device_class_mappings);
}

int SimEngine::TenantIndex(const std::string& name) const {
  auto it = std::lower_bound(tenants_.begin(), tenants_.end(), name,
                             [](const TenantState& t, const std::string& n) { return t.name < n; });
  return it != tenants_.end() && it->name == name ? static_cast<int>(it - tenants_.begin()) : -1;
}

Status SimEngine::Setup() {
  if (!profile_status_.ok()) return profile_status_;
  const auto* scoring = NodeScoringPolicies().Find(options_.scoring);
  if (scoring == nullptr) {
    return Status::Invalid(fmt::format("unknown --scoring '{}': expected {}", options_.scoring,
                                       NodeScoringPolicies().NamesText()));
  }
  scoring_ = NodeScoring(scoring->make());
  const auto* order = VictimOrderPolicies().Find(options_.victim_order);
  if (order == nullptr) {
    return Status::Invalid(fmt::format("unknown --victim-order '{}': expected {}",
                                       options_.victim_order, VictimOrderPolicies().NamesText()));
  }
  victim_order_ = order->make();
  const SimProfile& setup = profile_;

  // Cluster objects: priority classes first so priorities resolve, then nodes, quotas, PDBs,
  // DRA objects, and the snapshot's bound pods.
  for (const auto& pc : input_.background.priority_classes)
    state_.UpsertPriorityClass(pc);
  for (const auto& node : input_.nodes)
    state_.UpsertNode(node);
  if (options_.cluster_quotas) {
    for (const auto& quota : input_.background.quotas)
      state_.UpsertQuota(quota);
  } else if (setup.quotas) {
    for (const auto& [tenant, quota] : input_.plan.tenants) {
      state_.UpsertQuota(ElasticQuotaFor(tenant, quota, setup.max_equals_min));
    }
  }
  for (const auto& pdb : input_.background.pdbs)
    state_.UpsertPdb(pdb);
  // The DRA objects before the pods that name them (docs/devices.md).
  for (const auto& device_class : input_.background.device_classes)
    state_.UpsertDeviceClass(device_class);
  for (const auto& claim : input_.background.resource_claims)
    state_.UpsertResourceClaim(claim);
  for (const auto& claim_template : input_.background.claim_templates)
    state_.UpsertResourceClaimTemplate(claim_template);
  int64_t skipped_pending = 0;
  for (const auto& pod : input_.background.pods) {
    if (!pod.IsBound() || pod.IsTerminal()) {
      ++skipped_pending;
      continue;
    }
    state_.UpsertPod(pod);
  }
  if (skipped_pending > 0) {
    out_->notes.push_back(
        fmt::format("{} pending or terminal pods of the cluster snapshot ignored (the workload "
                    "supplies pending pods)",
                    skipped_pending));
  }

  // Tenants: every namespace of the plan, the workload, the snapshot's pods and the script's, in
  // name order.
  std::set<std::string> names;
  for (const auto& [t, q] : input_.plan.tenants)
    names.insert(t);
  for (const auto& p : input_.workload.pods)
    names.insert(p.tenant);
  for (const auto& [uid, p] : state_.pods())
    names.insert(p.ns);
  for (const auto& step : input_.script) {
    for (const auto& p : step.create)
      names.insert(p.ns);
  }
  for (const auto& n : names) {
    TenantState t;
    t.name = n;
    t.quota = state_.QuotaFor(n);
    tenants_.push_back(std::move(t));
  }

  // Dimensions of the core's dense mirror: cpu, memory and everything requested.
  std::set<ResourceName> dims = {kCpuName, kMemoryName};
  for (const auto& p : input_.workload.pods) {
    for (const auto& e : p.requests.entries())
      dims.insert(e.first);
  }
  for (const auto& [uid, p] : state_.pods()) {
    for (const auto& e : p.requests.entries())
      dims.insert(e.first);
  }
  for (const auto& step : input_.script) {
    for (const auto& p : step.create) {
      for (const auto& e : p.requests.entries())
        dims.insert(e.first);
    }
  }
  state_.EnableDenseNodes(std::vector<ResourceName>(dims.begin(), dims.end()));
  nodes_ = state_.dense_nodes();
  placement_ = std::make_unique<DensePlacement>(state_);
  num_to_find_ =
      options_.sampling == NodeSampling::kAll
          ? static_cast<std::size_t>(nodes_->size())
          : NumFeasibleNodesToFind(nodes_->size(), options_.percentage_of_nodes_to_score);
  num_candidates_ = options_.sampling == NodeSampling::kAll
                        ? static_cast<std::size_t>(nodes_->size())
                        : NumPreemptionCandidates(nodes_->size());
  reclaim_ = true;  // every policy runs the reclaim controller and kube-scheduler's preemption

  for (ResourceName d : nodes_->dims())
    out_->dims.emplace_back(d.str());
  if (nodes_->DimOf(ResourceName::Of(kGpuMilliResource)) >= 0) {
    out_->gpu_resource = kGpuMilliResource;
    out_->gpu_scale = 1000;
  } else if (nodes_->DimOf(ResourceName::Of(kGpuResource)) >= 0) {
    out_->gpu_resource = kGpuResource;
  }

  // Metrics: the plan's min per tenant and dimension (what "guarantee" means in the report).
  std::vector<std::vector<int64_t>> min_per_dim(tenants_.size());
  for (std::size_t t = 0; t < tenants_.size(); ++t) {
    auto it = input_.plan.tenants.find(tenants_[t].name);
    if (it == input_.plan.tenants.end()) continue;
    min_per_dim[t].assign(out_->dims.size(), 0);
    if (!it->second.min) continue;
    for (std::size_t d = 0; d < out_->dims.size(); ++d)
      min_per_dim[t][d] = it->second.min->Get(out_->dims[d]);
  }
  int64_t horizon = 1;
  for (const auto& p : input_.workload.pods)
    horizon = std::max(horizon, p.arrival_ms + p.duration_ms);
  if (!input_.script.empty()) horizon = std::max(horizon, input_.script.back().t_ms);
  if (options_.until_ms) horizon = *options_.until_ms;
  int64_t interval = options_.sample_interval_ms.value_or(
      (horizon + std::max(1, options_.samples) - 1) / std::max(1, options_.samples));
  if (!options_.sample_interval_ms && interval >= 1000) interval = (interval + 999) / 1000 * 1000;
  metrics_ = std::make_unique<SimMetrics>(
      std::move(min_per_dim), out_->dims.size(), nodes_->DimOf(kCpuName),
      nodes_->DimOf(kMemoryName),
      out_->gpu_resource.empty() ? -1 : nodes_->DimOf(ResourceName::Of(out_->gpu_resource)),
      interval);

  // Pod groups (docs/workloads.md): their members start and stop as the metrics see them.
  gpu_dim_ = out_->gpu_resource.empty() ? -1 : nodes_->DimOf(ResourceName::Of(out_->gpu_resource));
  group_metrics_ = std::make_unique<GroupMetrics>(tenants_.size());
  group_of_.assign(input_.workload.pods.size(), -1);
  for (const WorkloadGroup& g : GroupsOf(input_.workload)) {
    const int gi = group_metrics_->AddGroup(TenantIndex(g.tenant), g.min_member, g.arrival_ms);
    group_min_.push_back(g.min_member);
    for (uint32_t id : g.members)
      group_of_[id] = gi;
  }

  // The snapshot's bound pods count from the start.
  std::vector<const NormalizedPod*> background;
  for (const auto& [uid, p] : state_.pods())
    background.push_back(&p);
  std::sort(background.begin(), background.end(),
            [](const NormalizedPod* a, const NormalizedPod* b) { return a->uid < b->uid; });
  for (const NormalizedPod* pod : background) {
    const DenseRequest& r =
        background_request_of_.emplace(pod->store_key(), nodes_->MakeRequest(pod->requests))
            .first->second;
    metrics_->Background(TenantIndex(pod->ns), r);
  }

  // Pods and their buckets.
  pods_.resize(input_.workload.pods.size());
  pod_by_uid_.reserve(input_.workload.pods.size());
  for (std::size_t i = 0; i < input_.workload.pods.size(); ++i) {
    const WorkloadPod& wp = input_.workload.pods[i];
    if (!pod_by_uid_.emplace(wp.name, static_cast<uint32_t>(i)).second) {
      return Status::Error("workload: pod name '" + wp.name + "' appears twice");
    }
    pods_[i].bucket = BucketFor(wp, TenantIndex(wp.tenant));
    pods_[i].queued_ms = wp.arrival_ms;
  }
  return SetupScript();
}

int SimEngine::BucketFor(const WorkloadPod& wp, int tenant) {
  int32_t priority = 0;
  if (wp.priority) {
    priority = *wp.priority;
  } else if (auto it = input_.plan.tenants.find(wp.tenant);
             it != input_.plan.tenants.end() && it->second.priority) {
    priority = *it->second.priority;
  }
  std::string key = fmt::format("{}\x1f{}\x1f", tenant, priority);
  for (const auto& [name, amount] : wp.requests.entries())
    key += fmt::format("{}={};", name, amount);
  key += '\x1f';
  for (const auto& m : wp.gpu_models)
    key += m + "|";
  // Where the state knows groups (gang admission, fair sharing: every member is filed as one), a
  // member's verdict is its group's (filter mode's group rule), so a group's pending members are
  // a bucket of their own: a group that waits never parks single pods of the same shape.
  if (!wp.group.empty() && (options_.admission == SimAdmission::kGang || profile_.fair_sharing))
    key += "\x1fgroup=" + wp.group;
  auto [it, inserted] = bucket_by_key_.emplace(key, static_cast<int>(buckets_.size()));
  if (!inserted) return it->second;

  BucketInfo info;
  info.tenant = tenant;
  Pod proto;
  proto.ns = wp.tenant;
  proto.spec_priority = priority;
  proto.priority = priority;
  proto.phase = PodPhase::kPending;
  proto.requests = wp.requests;
  if (!wp.gpu_models.empty()) {
    NodeSelectorTerm term;
    term.match_expressions.push_back({kGpuModelLabel, "In", wp.gpu_models});
    proto.required_affinity.push_back(std::move(term));
  }
  info.prototype.emplace(state_.Normalize(std::move(proto)));
  return AddBucket(std::move(info), priority);
}

int SimEngine::AddBucket(BucketInfo info, int32_t priority) {
  const int tenant = info.tenant;
  info.profile = placement_->ProfileOf(*info.prototype, scoring_);
  if (tenants_[tenant].quota != nullptr) {
    // The request alone above the max of its quota or of an ancestor: nothing can ever help.
    const AdmissionPath path = MakeAdmissionPath(state_, *info.prototype);
    for (const auto& level : path.levels) {
      info.never_fits_quota =
          info.never_fits_quota || !ExceedsMax(state_.semantics(), *level.quota, ResourceList{},
                                               info.prototype->quota_request())
                                        .empty();
    }
  }
  info.never_fits_nodes = true;
  for (int n = 0; n < nodes_->size() && info.never_fits_nodes; ++n) {
    if (placement_->StaticOk(info.profile, n) && nodes_->FitsAllocatable(info.request(), n)) {
      info.never_fits_nodes = false;
    }
  }
  buckets_.push_back(std::move(info));
  return queue_.AddBucket(tenant, priority);
}

void SimEngine::Submit(uint32_t id, bool resubmission) {
  SimPod& p = pods_[id];
  const BucketInfo& info = buckets_[p.bucket];
  metrics_->Submitted(info.tenant, info.request(), resubmission);
  if (info.never_fits_quota || info.never_fits_nodes) {
    // Unresolvable: nothing can ever help (docs/capacity-semantics.md#33-resolvable-or-not, and
    // node fit's UnschedulableAndUnresolvable): counted as rejected, never queued.
    ++out_->decisions;
    metrics_->Rejected(info.tenant, info.request(), info.never_fits_quota);
    if (options_.observer) options_.observer("reject", UidOf(id), "", now_);
    p.phase = Phase::kDone;
    return;
  }
  p.phase = Phase::kPending;
  if (GateOnArrival(id)) {
    p.gated = true;
    return;
  }
  queue_.Add(p.bucket, p.queued_ms, id);
}

void SimEngine::ProcessExpiries() {
  if (expiries_.empty() || *expiries_.begin() > now_) return;
  for (const std::string& uid : state_.Expire(now_)) {
    auto it = nominations_.find(uid);
    if (it == nominations_.end() || it->second.expires_ms > now_) continue;
    const int n = it->second.node;
    expiries_.erase(expiries_.find(it->second.expires_ms));
    nominations_.erase(it);
    ++epoch_;
    NominationReleased(n);
  }
}

void SimEngine::Settle() {
  if (now_ >= next_reclaim_ms_) {
    next_reclaim_ms_ = INT64_MAX;
    ReclaimPass();
  }
  AdmitAndSchedule();
  // A controller that is never behind: while a pass could do anything, it runs now. Each pass
  // either executes a reclaim (evictions and a nomination, which a pod holds until it binds or
  // the nomination expires) or marks every parked bucket failed at the current epoch, so this ends.
  while (options_.reclaim_at_once && reclaim_ && ReclaimPassUseful()) {
    ReclaimPass();
    AdmitAndSchedule();
  }
}

void SimEngine::AdmitAndSchedule() {
  // Gang admission, then scheduling, until neither changes anything more at this instant.
  do {
    AdmissionPass();
    Schedule();
  } while ((admission_epoch_ != epoch_ && (gated_ > 0 || HasLostCore())) || !recreate_.empty());
}

bool SimEngine::ReclaimPassUseful() const {
  // The pass would run one interval from now: buckets in their retry delay will be past it.
  for (int b : queue_.parked()) {
    if (queue_.bucket(b).reclaim_failed_epoch != epoch_) return true;
  }
  return false;
}

void SimEngine::Run() {
  const auto& wl = input_.workload.pods;
  const int64_t total = static_cast<int64_t>(wl.size());
  std::size_t next_arrival = 0;
  int64_t last_progress = -1;
  while (true) {
    int64_t t = INT64_MAX;
    if (next_arrival < wl.size()) t = wl[next_arrival].arrival_ms;
    if (next_step_ < input_.script.size()) t = std::min(t, input_.script[next_step_].t_ms);
    if (!completions_.empty()) t = std::min(t, completions_.top().t);
    if (!expiries_.empty()) t = std::min(t, *expiries_.begin());
    t = std::min(t, next_reclaim_ms_);
    t = std::min(t, fair_wake_ms_);
    if (t == INT64_MAX) break;
    if (options_.until_ms && t > *options_.until_ms) break;
    metrics_->AdvanceTo(t);
    group_metrics_->AdvanceTo(t);
    now_ = t;

    while (!completions_.empty() && completions_.top().t == t) {
      const Completion c = completions_.top();
      completions_.pop();
      if (pods_[c.pod].generation != c.generation || pods_[c.pod].phase != Phase::kRunning)
        continue;
      StopPod(c.pod, Stop::kCompleted);
      pods_[c.pod].phase = Phase::kDone;
    }
    ProcessExpiries();
    if (now_ >= fair_wake_ms_) {  // a victim may have reached the minimum run time
      fair_wake_ms_ = INT64_MAX;
      admission_due_ = true;
    }
    while (next_arrival < wl.size() && wl[next_arrival].arrival_ms == t) {
      Submit(static_cast<uint32_t>(next_arrival), false);
      ++next_arrival;
    }
    if (next_step_ < input_.script.size() && input_.script[next_step_].t_ms == t) {
      // Each step settles on its own and is reported: a scenario checks after every step.
      for (; next_step_ < input_.script.size() && input_.script[next_step_].t_ms == t;
           ++next_step_) {
        ApplyStep(input_.script[next_step_]);
        Settle();
        if (options_.after_step) options_.after_step(next_step_, state_);
      }
    } else {
      Settle();
    }
    if (reclaim_ && next_reclaim_ms_ == INT64_MAX && ReclaimPassUseful()) {
      next_reclaim_ms_ = now_ + std::max<int64_t>(1, options_.reclaim_interval_ms);
    }
    if (options_.progress && static_cast<int64_t>(next_arrival) != last_progress &&
        (next_arrival % 4096 == 0 || next_arrival == wl.size())) {
      last_progress = static_cast<int64_t>(next_arrival);
      options_.progress(last_progress, total);
    }
  }
  const int64_t end = options_.until_ms ? *options_.until_ms : now_;
  metrics_->Finish(std::max(end, now_));
  group_metrics_->Finish(std::max(end, now_));
  out_->end_ms = std::max(end, now_);
}

void SimEngine::Collect() {
  out_->policy = options_.policy + (options_.admission == SimAdmission::kGang ? "+gang" : "");
  out_->admission = options_.admission == SimAdmission::kGang ? "gang" : "pod";
  out_->scoring = options_.scoring;
  out_->sampling = options_.sampling == NodeSampling::kAll ? "all" : "kube-scheduler";
  out_->nodes = nodes_->size();
  out_->allocatable_cpu = nodes_->TotalAllocatable(kCpuName);
  out_->allocatable_memory = nodes_->TotalAllocatable(kMemoryName);
  out_->allocatable_gpu = out_->gpu_resource.empty()
                              ? 0
                              : nodes_->TotalAllocatable(ResourceName::Of(out_->gpu_resource));
  const SimProfile& setup = profile_;
  for (const auto& t : tenants_) {
    TenantPlanView v;
    v.name = t.name;
    auto it = input_.plan.tenants.find(t.name);
    v.in_plan = it != input_.plan.tenants.end();
    v.enforced = t.quota != nullptr;
    if (t.quota != nullptr) {
      v.min = t.quota->min;
      v.max = t.quota->max;
    } else if (v.in_plan) {
      v.min = it->second.min;
      v.max = setup.max_equals_min ? it->second.min : it->second.max;
    }
    if (v.in_plan) {
      v.priority = it->second.priority;
      v.parent = it->second.parent;
      v.weight_milli = it->second.weight_milli;
    }
    out_->tenants.push_back(std::move(v));
  }
  const std::size_t n = tenants_.size();
  out_->pending_at_end.assign(n, 0);
  out_->requeued_at_end.assign(n, 0);
  out_->running_at_end.assign(n, 0);
  for (const SimPod& p : pods_) {
    const int t = buckets_[p.bucket].tenant;
    if (p.phase == Phase::kPending) ++(p.started ? out_->requeued_at_end : out_->pending_at_end)[t];
    if (p.phase == Phase::kRunning) ++out_->running_at_end[t];
  }
  for (const auto& note : input_.workload.notes)
    out_->notes.push_back(note);
  out_->metrics = std::move(*metrics_);
  out_->groups = group_metrics_->counters();
  out_->group_count = static_cast<int64_t>(group_metrics_->groups());
}

Status RunSimulation(const SimulationInput& input, const SimulationOptions& options,
                     SimulationResult* out) {
  *out = SimulationResult{};
  SimEngine engine(input, options, out);
  if (Status s = engine.Setup(); !s.ok()) return s;
  auto thread_cpu = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = thread_cpu();
  engine.Run();
  out->engine_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out->engine_cpu_seconds = thread_cpu() - cpu_start;
  engine.Collect();
  return {};
}

}  // namespace capext
