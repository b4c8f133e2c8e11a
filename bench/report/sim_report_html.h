// report.html (one policy) and compare.html (several policies side by side): single
// self-contained pages with inline SVG charts (svg_chart.h) and tables; no scripts, no external
// resources. Charts: used vs min vs max per tenant over time (cpu, and GPUs when the cluster has
// any), pending pods per tenant, cluster utilisation, wait-time distribution (per tenant in
// report.html, per policy in compare.html). For a quota plan with parents, report.html also
// shows used, min and max per level (sim_quota_tree_html.h).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "bench/report/sim_report_json.h"
#include "bench/sim/simulation.h"

namespace capext {

std::string ReportHtml(const SimulationResult& result, const ReportContext& context);
std::string CompareHtml(const std::vector<SimulationResult>& results, const ReportContext& context);

}  // namespace capext
