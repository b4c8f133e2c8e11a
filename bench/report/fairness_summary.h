// How fairly a run shared the borrowed cpu (docs/fair-sharing.md), from its timeline: at each
// timeline point, every planned tenant's borrowed cpu (used above its min), its share of all
// borrowed cpu, and the Jain fairness index of the weighted shares x_i = borrowed_i / weight_i
// over the tenants that want to borrow then (borrowing, or with pods waiting; weight > 0):
//   J = (Σ x_i)² / (n · Σ x_i²),  1 when borrowing follows the weights exactly, 1/n at worst.
// Points with fewer than two such tenants, or none borrowing, are left out of the mean.
// Reported in report.json when a tenant of the plan has a weight other than 1 or the policy is
// fair, so other reports keep their bytes.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/sim/simulation.h"

namespace capext {

struct FairnessSummary {
  bool applies = false;
  double jain_mean = 0;  // over the points counted
  int points = 0;        // timeline points counted in jain_mean
  struct Tenant {
    std::string name;
    int64_t weight_milli = 1000;
    double borrowed_share_mean = 0;  // mean over the points where anything is borrowed
    double weight_proportion = 0;    // its weight over the weights of tenants that ever borrowed
    std::vector<double> borrowed_share;  // per timeline point (0 when nothing is borrowed)
  };
  std::vector<Tenant> tenants;  // planned tenants, in the result's order
  std::vector<double> t_s;      // the timeline points' times
};

FairnessSummary SummarizeFairness(const SimulationResult& result);

}  // namespace capext
