#include "bench/report/fairness_summary.h"

#include <algorithm>

namespace capext {

FairnessSummary SummarizeFairness(const SimulationResult& r) {
  FairnessSummary out;
  std::vector<std::size_t> planned;
  for (std::size_t i = 0; i < r.tenants.size(); ++i) {
    if (!r.tenants[i].in_plan) continue;
    planned.push_back(i);
    out.applies = out.applies || r.tenants[i].weight_milli != 1000;
  }
  out.applies = out.applies || r.policy.starts_with("fair");
  if (!out.applies) return out;
  for (std::size_t i : planned) {
    FairnessSummary::Tenant t;
    t.name = r.tenants[i].name;
    t.weight_milli = r.tenants[i].weight_milli;
    out.tenants.push_back(std::move(t));
  }
  std::vector<bool> ever_borrowed(planned.size(), false);
  std::vector<int> borrowing_points(planned.size(), 0);
  double jain_sum = 0;
  int borrowed_points = 0;
  for (const TimelinePoint& point : r.metrics.timeline()) {
    out.t_s.push_back(static_cast<double>(point.t_ms) / 1000.0);
    std::vector<double> borrowed(planned.size(), 0);
    double total = 0, sum_x = 0, sum_x2 = 0;
    int wanting = 0;
    for (std::size_t k = 0; k < planned.size(); ++k) {
      const std::size_t i = planned[k];
      const TenantPlanView& view = r.tenants[i];
      const int64_t min = view.min ? view.min->Get("cpu") : 0;
      const auto& level = point.tenants[i];
      borrowed[k] = static_cast<double>(std::max<int64_t>(0, level.cpu - min));
      total += borrowed[k];
      if (borrowed[k] > 0) ever_borrowed[k] = true;
      if (view.weight_milli > 0 && (borrowed[k] > 0 || level.pending > 0)) {
        const double x = borrowed[k] * 1000.0 / static_cast<double>(view.weight_milli);
        sum_x += x;
        sum_x2 += x * x;
        ++wanting;
      }
    }
    for (std::size_t k = 0; k < planned.size(); ++k) {
      const double share = total > 0 ? borrowed[k] / total : 0;
      out.tenants[k].borrowed_share.push_back(share);
      if (total > 0) out.tenants[k].borrowed_share_mean += share;
    }
    if (total > 0) ++borrowed_points;
    if (wanting >= 2 && sum_x2 > 0) {
      jain_sum += sum_x * sum_x / (wanting * sum_x2);
      ++out.points;
    }
  }
  double weights = 0;
  for (std::size_t k = 0; k < planned.size(); ++k) {
    if (ever_borrowed[k]) weights += static_cast<double>(out.tenants[k].weight_milli);
  }
  for (std::size_t k = 0; k < planned.size(); ++k) {
    FairnessSummary::Tenant& t = out.tenants[k];
    if (borrowed_points > 0) t.borrowed_share_mean /= borrowed_points;
    if (ever_borrowed[k] && weights > 0)
      t.weight_proportion = static_cast<double>(t.weight_milli) / weights;
  }
  if (out.points > 0) out.jain_mean = jain_sum / out.points;
  return out;
}

}  // namespace capext
