#include "core/placement_search.h"

#include <fmt/format.h>

#include "core/best_node.h"
#include "core/node_fit.h"

namespace capext {
namespace {

// The pod's constraints that static checks read, as one string: pods with equal signatures
// pass and fail the same nodes.
std::string StaticSignature(const Pod& pod) {
  std::string key;
  for (const auto& t : pod.tolerations)
    key += fmt::format("t{}\x1f{}\x1f{}\x1f{}\x1e", t.key, t.op, t.value, t.effect);
  for (const auto& [k, v] : pod.node_selector)
    key += fmt::format("s{}\x1f{}\x1e", k, v);
  for (const auto& term : pod.required_affinity) {
    key += "a";
    for (const auto* list : {&term.match_expressions, &term.match_fields}) {
      for (const auto& r : *list)
        key += fmt::format("{}\x1f{}\x1f{}\x1d", r.key, r.op, fmt::join(r.values, "\x1c"));
      key += "\x1e";
    }
  }
  return key;
}

}  // namespace

PlacementResult FindPlacement(const ClusterState& state, const NormalizedPod& pod,
                              const PlacementQuery& query) {
  PlacementResult out;
  const PodFilter filter(state, pod);
  out.quota = filter.quota();
  if (!out.quota.ok()) return out;
  std::vector<const NodeRecord*> nodes;
  for (const auto& [name, node] : state.nodes())
    nodes.push_back(state.FindNodeRecord(name));
  const int total = static_cast<int>(nodes.size());
  BestNode<int> best;
  out.examined = total;
  for (int i = 0; i < total && out.feasible.size() < query.limit; ++i) {
    const int n = (query.start + i) % total;
    if (!filter.Passes(*nodes[n])) continue;
    out.feasible.push_back(n);
    best.Offer(ScoreNode(query.scoring, pod, NodeInfo{*nodes[n]->node, &nodes[n]->usage}), n);
    if (out.feasible.size() == query.limit) out.examined = i + 1;
  }
  out.best = best.id();
  return out;
}

DensePlacement::DensePlacement(const ClusterState& state)
    : state_(state), dense_(*state.dense_nodes()) {
  Reset();
}

void DensePlacement::Reset() {
  generation_ = dense_.generation();
  class_by_signature_.clear();
  masks_.clear();
  shape_by_key_.clear();
  memo_.clear();
}

DensePlacement::Profile DensePlacement::ProfileOf(const NormalizedPod& pod, NodeScoring scoring) {
  if (generation_ != dense_.generation()) Reset();
  Profile p;
  p.generation = generation_;
  p.request = dense_.MakeRequest(pod.requests);
  std::string signature = StaticSignature(pod);
  auto it = class_by_signature_.find(signature);
  if (it == class_by_signature_.end()) {
    std::vector<uint8_t> mask(static_cast<std::size_t>(dense_.size()));
    bool all = true;
    for (int n = 0; n < dense_.size(); ++n) {
      mask[n] = CheckNodeStatic(pod, dense_.node(n)).ok() ? 1 : 0;
      all = all && mask[n] != 0;
    }
    if (all) mask.clear();
    masks_.push_back(std::move(mask));
    it = class_by_signature_.emplace(std::move(signature), static_cast<int>(masks_.size() - 1))
             .first;
  }
  p.static_class = it->second;
  const auto key = std::make_tuple(&scoring.scorer(), p.request.cpu, p.request.memory);
  if (auto s = shape_by_key_.find(key); s != shape_by_key_.end()) {
    p.shape = s->second;
  } else if (static_cast<int>(memo_.size()) < kMaxShapes) {
    p.shape = static_cast<int>(memo_.size());
    memo_.emplace_back(static_cast<std::size_t>(dense_.size()));
    shape_by_key_.emplace(key, p.shape);
  }
  return p;
}

int DensePlacement::Score(NodeScoring scoring, const Profile& profile, int n) {
  if (profile.shape < 0) return dense_.Score(scoring, profile.request, n);
  ScoreMemo& m = memo_[static_cast<std::size_t>(profile.shape)][n];
  if (m.version != dense_.version(n)) {
    m.score = dense_.Score(scoring, profile.request, n);
    m.version = dense_.version(n);
  }
  return m.score;
}

bool DensePlacement::FitsNode(const NormalizedPod& pod, const Profile& profile, int n) const {
  if (!StaticOk(profile, n)) return false;
  if (profile.request.complete && dense_.NominationCount(n) == 0)
    return dense_.Fits(profile.request, n);
  const NodeRecord* record = state_.FindNodeRecord(dense_.name(n));
  return CheckNodeFit(state_, pod, NodeInfo{*record->node, &record->usage}).ok();
}

PlacementResult DensePlacement::Find(const NormalizedPod& pod, const Profile& profile,
                                     const PlacementQuery& query) {
  if (Status quota = CheckQuota(state_, pod); !quota.ok()) {
    PlacementResult out;
    out.quota = std::move(quota);
    return out;
  }
  return ScanNodes(pod, profile, query);
}

void DensePlacement::ScanNodes(const NormalizedPod& pod, const Profile& profile,
                               const PlacementQuery& query, PlacementResult* result) {
  PlacementResult& out = *result;
  out.quota = Status();
  out.best = -1;
  out.examined = 0;
  out.feasible.clear();
  const auto& mask = masks_[profile.static_class];
  const NodeFitScreen screen(state_, pod);
  // Score(), with what it reads held in locals: a scan scores hundreds of nodes per decision, and
  // through members every pointer was loaded again for each.
  ScoreMemo* const memo = profile.shape < 0 ? nullptr : memo_[profile.shape].data();
  const uint32_t* const versions = dense_.versions();
  const DenseNodes& dense = dense_;
  const DenseRequest& request = profile.request;
  const NodeScoring scoring = query.scoring;
  auto score = [memo, versions, &dense, &request, scoring](int n) {
    if (memo == nullptr) return dense.Score(scoring, request, n);
    ScoreMemo& m = memo[n];
    if (m.version != versions[n]) {
      m.score = dense.Score(scoring, request, n);
      m.version = versions[n];
    }
    return static_cast<int>(m.score);
  };
  out.examined = dense_.ScanBest(
      profile.request, mask.empty() ? nullptr : mask.data(), query.start, query.limit,
      &out.feasible, [&](int n) { return screen.Fits(*state_.FindNodeRecord(dense_.name(n))); },
      score, &out.best);
}

}  // namespace capext
