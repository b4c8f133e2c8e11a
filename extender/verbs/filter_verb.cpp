// POST /filter: decode ExtenderArgs, ask core's PodFilter (the admission check once per pod,
// then node fit per node against our cache, which holds reservations and nominations
// kube-scheduler does not know about), encode ExtenderFilterResult.
//
// Cost: one hash lookup and a few comparisons per node (PodFilter::Passes); only nodes with
// taints, nominations or too little room, or a pod with selectors or unusual resources, get the
// full node fit. A quota rejection touches no node at all.
//
// A pending member of a starting group passes only if its quota admits the group's need
// (docs/workloads.md#4-filter-mode); when it passes on some node, the need's members are held
// (quota only, no node) under the write lock, after the rule is checked again there (two groups
// passing at once under the read lock cannot both hold).
//
// With reserveAt: filter, a single pod of a quota namespace that passes holds its own quota the
// same way (docs/capacity-semantics.md#6-accounting-used-reservations-nominations, "Or at
// /filter"); one that does not pass this time ends the hold of its earlier attempt.
#include "core/placement.h"
#include "extender/log.h"
#include "extender/verbs/extender_service.h"
#include "extender/wire/filter_result.h"

namespace capext {

http::Response ExtenderService::Filter(std::string& body) {
  rapidjson::Document doc;
  ExtenderArgs args;
  if (Status s = ParseExtenderArgs(body, cache_->decode_options(), &doc, &args); !s.ok())
    return BadRequest("filter", s);
  if (!cache_->ready()) {
    // No ElasticQuota API under missingQuotaAPI: refuse is never overridden (capacity-semantics
    // 12); ignoreNotReady only lets /filter decide before the first sync.
    const SchedulerCache::QuotaApi api = cache_->quota_api();
    if (!api.served && api.refuse) {
      metrics_->CountDecision("filter", "no-quota-api");
      return {200, "application/json", EncodeFilterNotReady(api.message), {}};
    }
    if (!options_.ignore_not_ready) {
      metrics_->CountDecision("filter", "not-ready");
      const std::string reason = cache_->not_ready_reason();
      return {200,
              "application/json",
              EncodeFilterNotReady(reason.empty() ? "cluster cache not synced yet" : reason),
              {}};
    }
  }
  LearnPod(args.pod);

  FilterVerdicts verdicts(args.node_names.size());
  bool hold_group = false;
  bool holds_itself = false;  // reserveAt: filter, a single pod of a quota namespace
  bool had_hold = false;      // ... holding from an earlier attempt
  Status quota = cache_->Read([&](const ClusterState& state) {
    const DecisionPod pod(state, args.pod);
    if (options_.reserve_at_filter && state.GroupOf(*pod) == nullptr &&
        state.QuotaFor(pod->ns) != nullptr) {
      holds_itself = true;
      const QuotaHold* held = state.ledger().FindHold(pod->store_key());
      had_hold = held != nullptr && !held->derived;
    }
    const PodFilter filter(state, *pod);
    if (!filter.quota().ok()) return filter.quota();
    hold_group = !filter.group_hold().empty();
    for (std::size_t i = 0; i < args.node_names.size(); ++i) {
      const NodeRecord* record = state.FindNodeRecord(args.node_names[i]);
      if (record == nullptr || filter.Passes(*record)) continue;
      if (Status verdict = filter.CheckNode(args.node_names[i]); !verdict.ok())
        verdicts.Fail(i, verdict);
    }
    return Status();
  });
  if (quota.ok() && holds_itself && verdicts.passed() > 0)
    quota = HoldPassingPod(args.pod);
  else if (holds_itself && had_hold)
    ReleasePodHold(args.pod);
  if (!quota.ok()) verdicts.FailAll(quota);
  if (quota.ok() && hold_group && verdicts.passed() > 0) HoldGroupNeed(args.pod);

  StatusOr<std::string> answer = verdicts.Encode(args);
  if (!answer.ok()) return BadRequest("filter", answer.status());
  const char* outcome = !quota.ok()              ? "quota-rejected"
                        : verdicts.passed() == 0 ? "no-node-fits"
                                                 : "pass";
  metrics_->CountDecision("filter", outcome);
  if (!quota.ok() && LogEnabled(LogLevel::kInfo)) {
    Log(LogLevel::kInfo, "filter rejected pod",
        {{"pod", args.pod.Key()}, {"outcome", outcome}, {"reason", quota.message()}});
  }
  return {200, "application/json", std::move(answer).value(), {}};
}

void ExtenderService::HoldGroupNeed(const Pod& raw) {
  const int64_t now = cache_->NowMs();
  cache_->Write([&](ClusterState& state) {
    const NormalizedPod* pod = state.FindPod(StoreKeyOf(raw));
    if (pod == nullptr) return;
    const PodFilter filter(state, *pod);
    if (!filter.quota().ok()) return;  // another group took the room meanwhile: /bind refuses
    const GroupView* group = state.GroupOf(*pod);
    const int64_t timeout = group != nullptr && group->schedule_timeout_ms > 0
                                ? group->schedule_timeout_ms
                                : options_.gang_schedule_timeout_ms;
    for (const auto& key : filter.group_hold())
      state.Hold(key, now, now + timeout);
  });
}

Status ExtenderService::HoldPassingPod(const Pod& raw) {
  const int64_t now = cache_->NowMs();
  return cache_->Write([&](ClusterState& state) {
    const NormalizedPod* pod = state.FindPod(StoreKeyOf(raw));
    if (pod == nullptr || pod->IsBound()) return Status();  // bound meanwhile: usage counts it
    // Checked again under the exclusive lock: another pod may have taken the room since the
    // shared-lock pass. The pod's own hold (a renewal) is not counted against it.
    Status again = PodFilter(state, *pod).quota();
    if (!again.ok()) {
      state.ReleaseHold(pod->store_key());
      return again;
    }
    state.Hold(pod->store_key(), now, now + options_.reservation_ttl_ms);
    return Status();
  });
}

void ExtenderService::ReleasePodHold(const Pod& raw) {
  cache_->Write([&](ClusterState& state) {
    const QuotaHold* held = state.ledger().FindHold(StoreKeyOf(raw));
    if (held != nullptr && !held->derived) state.ReleaseHold(StoreKeyOf(raw));
  });
}

}  // namespace capext
