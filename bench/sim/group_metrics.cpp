#include "bench/sim/group_metrics.h"

#include <algorithm>

namespace capext {

int GroupMetrics::AddGroup(int tenant, int32_t min_member, int64_t arrival_ms) {
  Group g;
  g.tenant = tenant;
  g.min_member = min_member;
  g.arrival_ms = arrival_ms;
  groups_.push_back(g);
  ++counters_[tenant].submitted;
  return static_cast<int>(groups_.size()) - 1;
}

void GroupMetrics::AdvanceTo(int64_t t) {
  if (t <= now_) return;
  for (int gi : partial_) {
    Group& g = groups_[gi];
    if (!g.was_partial) {
      g.was_partial = true;
      ++counters_[g.tenant].ever_partial;
    }
  }
  now_ = t;
}

void GroupMetrics::Settle(int tenant) {
  const auto i = static_cast<std::size_t>(tenant);
  const int64_t dt = now_ - settled_ms_[i];
  if (dt <= 0) return;
  settled_ms_[i] = now_;
  counters_[i].partial_cpu_milli_ms += static_cast<__int128>(partial_cpu_[i]) * dt;
  counters_[i].partial_gpu_ms += static_cast<__int128>(partial_gpu_[i]) * dt;
}

void GroupMetrics::Leave(int gi) {
  const Group& g = groups_[gi];
  if (!g.Partial()) return;
  Settle(g.tenant);
  partial_cpu_[g.tenant] -= g.cpu;
  partial_gpu_[g.tenant] -= g.gpu;
  partial_.erase(gi);
}

void GroupMetrics::Enter(int gi) {
  const Group& g = groups_[gi];
  if (!g.Partial()) return;
  Settle(g.tenant);
  partial_cpu_[g.tenant] += g.cpu;
  partial_gpu_[g.tenant] += g.gpu;
  partial_.insert(gi);
}

void GroupMetrics::MemberStarted(int gi, int64_t cpu, int64_t gpu) {
  Group& g = groups_[gi];
  Leave(gi);
  // A new run when time passed with no member running.
  if (g.running == 0 && now_ > g.idle_since) g.run_complete = g.finishing = false;
  ++g.running;
  g.cpu += cpu;
  g.gpu += gpu;
  if (g.running >= g.min_member) g.run_complete = true;
  if (!g.started && g.running >= g.min_member) {
    g.started = true;
    GroupCounters& c = counters_[g.tenant];
    ++c.started;
    c.start_waits_ms.push_back(now_ - g.arrival_ms);
  }
  Enter(gi);
}

void GroupMetrics::MemberStopped(int gi, int64_t cpu, int64_t gpu, bool evicted) {
  Group& g = groups_[gi];
  Leave(gi);
  --g.running;
  g.cpu -= cpu;
  g.gpu -= gpu;
  if (evicted) ++counters_[g.tenant].member_evictions;
  if (!evicted && g.run_complete) g.finishing = true;
  if (g.running == 0) g.idle_since = now_;
  Enter(gi);
}

void GroupMetrics::Finish(int64_t end_ms) {
  AdvanceTo(end_ms);
  for (std::size_t i = 0; i < counters_.size(); ++i)
    Settle(static_cast<int>(i));
  for (const Group& g : groups_) {
    if (g.Partial()) ++counters_[g.tenant].partial_now;
  }
  for (auto& c : counters_)
    std::sort(c.start_waits_ms.begin(), c.start_waits_ms.end());
}

}  // namespace capext
