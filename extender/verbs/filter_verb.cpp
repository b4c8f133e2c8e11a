// POST /filter: decode ExtenderArgs, ask core's PodFilter (the admission check once per pod,
// then node fit per node against our cache, which holds reservations and nominations
// kube-scheduler does not know about), encode ExtenderFilterResult.
//
// Cost: one hash lookup and a few comparisons per node (PodFilter::Passes); only nodes with
// taints, nominations or too little room, or a pod with selectors or unusual resources, get the
// full node fit. A quota rejection touches no node at all.
//
// A pending member of a starting group passes only if its quota admits the group's need
// (docs/workloads.md, "Filter mode"); when it passes on some node, the need's members are held
// (quota only, no node) under the write lock, after the rule is checked again there (two groups
// passing at once under the read lock cannot both hold).
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
  const Status quota = cache_->Read([&](const ClusterState& state) {
    const DecisionPod pod(state, args.pod);
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
  if (!quota.ok()) verdicts.FailAll(quota);
  if (quota.ok() && hold_group && verdicts.passed() > 0) HoldGroupNeed(args.pod);

  std::string answer;
  if (!verdicts.Encode(args, &answer))
    return BadRequest("filter", Status::Invalid("Nodes.items nest too deeply"));
  const char* outcome = !quota.ok()              ? "quota-rejected"
                        : verdicts.passed() == 0 ? "no-node-fits"
                                                 : "pass";
  metrics_->CountDecision("filter", outcome);
  if (!quota.ok() && LogEnabled(LogLevel::kInfo)) {
    Log(LogLevel::kInfo, "filter rejected pod",
        {{"pod", args.pod.Key()}, {"outcome", outcome}, {"reason", quota.message()}});
  }
  return {200, "application/json", std::move(answer), {}};
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

}  // namespace capext
