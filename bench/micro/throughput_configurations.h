// The configurations bench_throughput_bench compares (issue 24), and the extender process each
// runs. Every configuration schedules the same prequeued pods with the same kube-scheduler; only
// the extender entry of its KubeSchedulerConfiguration, and what answers it, differ:
//   no-extender           kube-scheduler alone (its own binder POSTs the Binding);
//   go-noop               the do-nothing Go extender (bench/noop_extender: net/http and
//                         encoding/json): filter and bind, a Binding POST per bind;
//   product-filter-bind   capacity-extender with filter and bind;
//   product-full          capacity-extender with every verb: filter, prioritize, preempt, bind;
//   product-scoring-none  capacity-extender --scoring none: filter, preempt, bind (deploy/'s
//                         advice: drop prioritizeVerb with scoring none);
//   product-gate          gate mode: not built yet (the workloads issue). Listed so that it takes
//                         its place in the rotation and the report once the product has it.
// How each one's extender runs, and the extender entry kube-scheduler gets (deploy/'s
// settings): throughput_extender.h.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

namespace capext::bench {

enum class ExtenderKind { kNone, kGoNoop, kProduct };

struct ThroughputConfiguration {
  std::string name;   // as in the JSON and --configs
  std::string title;  // for the printed tables
  ExtenderKind kind = ExtenderKind::kNone;
  bool prioritize = false;  // filter and bind are always configured when there is an extender
  bool preempt = false;
  std::vector<std::string> product_flags;  // besides deploy/'s config file
  std::string unavailable;                 // why it cannot run yet; "" when it can
  bool is_product() const { return kind == ExtenderKind::kProduct; }
};

inline std::vector<ThroughputConfiguration> ThroughputConfigurations() {
  return {
      {"no-extender", "no extender", ExtenderKind::kNone, false, false, {}, ""},
      {"go-noop",
       "do-nothing Go extender: filter, bind",
       ExtenderKind::kGoNoop,
       false,
       false,
       {},
       ""},
      {"product-filter-bind",
       "product: filter, bind",
       ExtenderKind::kProduct,
       false,
       false,
       {},
       ""},
      {"product-full",
       "product: filter, prioritize, preempt, bind",
       ExtenderKind::kProduct,
       true,
       true,
       {},
       ""},
      {"product-scoring-none",
       "product --scoring none: filter, preempt, bind",
       ExtenderKind::kProduct,
       false,
       true,
       {"--scoring", "none"},
       ""},
      // Gate mode (the workloads issue): the product lifts a scheduling gate instead of being
      // called by kube-scheduler. Fill in its flags and verbs (probably none) and clear
      // `unavailable`; issue 24's target is gate mode / no extender >= 0.9.
      {"product-gate",
       "product, gate mode",
       ExtenderKind::kProduct,
       false,
       false,
       {},
       "gate mode is not built yet (the workloads issue)"},
  };
}

}  // namespace capext::bench
