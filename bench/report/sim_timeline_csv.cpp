#include "bench/report/sim_timeline_csv.h"

#include <fmt/format.h>

namespace capext {
namespace {

// "12.5" / "3" / "0.125": fixed 3 decimals with trailing zeros trimmed.
std::string Decimal(double v) {
  std::string s = fmt::format("{:.3f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string Limit(const std::optional<ResourceList>& list, const std::string& resource, double scale) {
  if (!list || resource.empty()) return "";
  auto v = list->Find(resource);
  return v ? Decimal(static_cast<double>(*v) / scale) : "";
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

std::string TimelineCsv(const SimulationResult& r) {
  std::string out =
      "time_s,tenant,used_cpu,min_cpu,max_cpu,used_memory_gib,min_memory_gib,max_memory_gib,"
      "used_gpu,min_gpu,max_gpu,pending,running\n";
  const double gpu_scale = static_cast<double>(r.gpu_scale);
  for (const auto& p : r.metrics.timeline()) {
    const std::string t = Decimal(static_cast<double>(p.t_ms) / 1000.0);
    int64_t pending = 0, running = 0;
    for (std::size_t i = 0; i < p.tenants.size() && i < r.tenants.size(); ++i) {
      const auto& s = p.tenants[i];
      const auto& q = r.tenants[i];
      pending += s.pending;
      running += s.running;
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", t, q.name,
                         Decimal(static_cast<double>(s.cpu) / 1000.0), Limit(q.min, "cpu", 1000.0),
                         Limit(q.max, "cpu", 1000.0), Decimal(static_cast<double>(s.memory) / kGiB),
                         Limit(q.min, "memory", kGiB), Limit(q.max, "memory", kGiB),
                         Decimal(static_cast<double>(s.gpu) / gpu_scale), Limit(q.min, r.gpu_resource, gpu_scale),
                         Limit(q.max, r.gpu_resource, gpu_scale), s.pending, s.running);
    }
    out += fmt::format("{},(cluster),{},,{},{},,{},{},,{},{},{}\n", t,
                       Decimal(static_cast<double>(p.cluster_cpu) / 1000.0),
                       Decimal(static_cast<double>(r.allocatable_cpu) / 1000.0),
                       Decimal(static_cast<double>(p.cluster_memory) / kGiB),
                       Decimal(static_cast<double>(r.allocatable_memory) / kGiB),
                       Decimal(static_cast<double>(p.cluster_gpu) / gpu_scale),
                       Decimal(static_cast<double>(r.allocatable_gpu) / gpu_scale), pending, running);
  }
  return out;
}

}  // namespace capext
