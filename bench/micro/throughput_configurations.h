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
//   product-gate          gate mode (docs/workloads.md#3-gate-mode-the-admission-queue): the pods
//                         are created carrying our scheduling gate, as /mutate would create them,
//                         kube-scheduler has no extender entry, and the product (admissionMode
//                         gate) lifts the gates. Its process starts in the window, with
//                         kube-scheduler: otherwise it would lift every gate before the window
//                         opens. Its start (the first lists) is counted, in time and CPU.
//   product-filter-hold   capacity-extender --reserve-at filter, filter alone: /filter holds
//                         the quota and kube-scheduler binds; one extender call per pod
//                         (docs/capacity-semantics.md#6-accounting-used-reservations-nominations);
// Measurements of changes not built yet, run only when named in --configs (issue 24 asks what
// they would save before they are built):
//   go-noop-json-watch    go-noop that also watches every pod in JSON, as capacity-extender
//                         does, discarding the events;
//   go-noop-protobuf-watch  the same watch in protobuf, as kube-scheduler's: against the JSON
//                         one, the API server's saving from a protobuf watch.
// How each one's extender runs, and the extender entry kube-scheduler gets (deploy/'s
// settings): throughput_extender.h.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

namespace capext::bench {

enum class ExtenderKind { kNone, kGoNoop, kProduct };

struct ThroughputConfiguration {
  std::string name{};   // as in the JSON and --configs
  std::string title{};  // for the printed tables
  ExtenderKind kind = ExtenderKind::kNone;
  bool prioritize = false;  // filter is always configured when there is an extender
  bool preempt = false;
  bool bind = true;
  bool gated = false;  // pods carry our gate; the extender is no extender entry of kube-scheduler
  std::vector<std::string> product_flags{};  // besides deploy/'s config file
  std::string go_watch{};                    // the Go extender's pod watch: "", json, protobuf
  bool on_request = false;                   // runs only when named in --configs
  std::string unavailable{};                 // why it cannot run yet; "" when it can
  bool is_product() const { return kind == ExtenderKind::kProduct; }
};

inline std::vector<ThroughputConfiguration> ThroughputConfigurations() {
  using K = ExtenderKind;
  return {
      {.name = "no-extender", .title = "no extender", .kind = K::kNone},
      {.name = "go-noop", .title = "do-nothing Go extender: filter, bind", .kind = K::kGoNoop},
      {.name = "product-filter-bind", .title = "product: filter, bind", .kind = K::kProduct},
      {.name = "product-full",
       .title = "product: filter, prioritize, preempt, bind",
       .kind = K::kProduct,
       .prioritize = true,
       .preempt = true},
      {.name = "product-scoring-none",
       .title = "product --scoring none: filter, preempt, bind",
       .kind = K::kProduct,
       .preempt = true,
       .product_flags = {"--scoring", "none"}},
      {.name = "product-gate",
       .title = "product, gate mode: kube-scheduler alone, the product lifts gates",
       .kind = K::kProduct,
       .gated = true,
       // kube-scheduler runs here without leader election: deploy/'s follow-scheduler would
       // find no Lease and never lift a gate.
       .product_flags = {"--admission-mode", "gate", "--leader-election", "off"}},
      {.name = "product-filter-hold",
       .title = "product --reserve-at filter: filter, kube-scheduler binds",
       .kind = K::kProduct,
       .bind = false,
       .product_flags = {"--reserve-at", "filter"}},
      {.name = "go-noop-json-watch",
       .title = "do-nothing Go extender + a JSON pod watch",
       .kind = K::kGoNoop,
       .go_watch = "json",
       .on_request = true},
      {.name = "go-noop-protobuf-watch",
       .title = "do-nothing Go extender + a protobuf pod watch",
       .kind = K::kGoNoop,
       .go_watch = "protobuf",
       .on_request = true},
  };
}

}  // namespace capext::bench
