// The configurations bench_throughput_bench compares (issue 24), and the extender process each
// runs. Every configuration schedules the same prequeued pods with the same kube-scheduler; only
// the extender entry of its KubeSchedulerConfiguration, what answers it, and how the pods are
// created differ. Each run first creates the pods (its "creation", measured apart, outside the
// window: throughput_run.h), then times kube-scheduler from its start until every pod is bound
// (the window):
//   no-extender           kube-scheduler alone (its own binder POSTs the Binding);
//   go-noop               the do-nothing Go extender (bench/noop_extender: net/http and
//                         encoding/json): filter and bind, a Binding POST per bind;
//   product-filter-bind   capacity-extender with filter and bind;
//   product-full          capacity-extender with every verb: filter, prioritize, preempt, bind;
//   product-scoring-none  capacity-extender --scoring none: filter, preempt, bind (deploy/'s
//                         advice: drop prioritizeVerb with scoring none);
//   product-gate          gate mode as users run it (docs/workloads-live.md#admission-at-creation):
//                         the product (admissionMode gate) starts before the pods exist, its
//                         /mutate webhook registered on kube-apiserver (failurePolicy Fail, scoped
//                         to the quota namespaces, as deploy/webhook/mutating-webhook.yaml), and
//                         the pods are created plain, as a user's controller creates them. Every
//                         quota admits every pod, so /mutate admits each at its creation (the
//                         admitted-at annotation, no gate) and kube-scheduler, with no extender
//                         entry, schedules them at once; a pod that came back gated makes the run
//                         invalid. The webhook's cost (its call in every pod's creation, the
//                         extender's creation holds and watch events) falls in the creation,
//                         reported apart; the window holds kube-scheduler's work and the
//                         product's reaction to it (status.used, the watch of the binds);
//   product-gate-lift     gate mode's other path, the pods that waited: the pods are created
//                         carrying our scheduling gate (as /mutate creates them when something
//                         waits), without the webhook, and the product starts in the window, with
//                         kube-scheduler (otherwise it would lift every gate before the window
//                         opens), and lifts each gate with one PATCH. Its start (the first lists)
//                         is counted, in time and CPU;
//   product-filter-bind-unpaced  product-filter-bind with --filter-hold-limit 0s, run only when
//                         named: what pacing /filter by the Binding queue costs or saves
//                         (docs/architecture.md#pacing-filter-while-bindings-queue);
//   product-filter-bind-json-watch  product-filter-bind with --watch-encoding json, run only
//                         when named: what watching pods and nodes in protobuf saves
//                         (docs/architecture.md#watching-in-protobuf);
//   product-filter-hold   capacity-extender --reserve-at filter, filter alone: /filter holds
//                         the quota and kube-scheduler binds; one extender call per pod
//                         (docs/capacity-semantics.md#6-accounting-used-reservations-nominations);
// The Go extender with a pod watch, run only when named in --configs (issue 24 asked what a
// protobuf watch would save before it was built):
//   go-noop-json-watch    go-noop that also watches every pod in JSON, discarding the events;
//   go-noop-protobuf-watch  the same watch in protobuf, as kube-scheduler's (and the product's,
//                         by default): against the JSON one, the API server's saving.
// Gate mode's configurations both run with --leader-election off (kube-scheduler runs here
// without leader election: deploy/'s follow-scheduler would find no Lease and never act) and
// --gate-scheduler-names default-scheduler (the benchmark's pods are kube-scheduler's own, not
// deploy/'s second scheduler's).
// How each one's extender runs, and the extender entry kube-scheduler gets (deploy/'s
// settings): throughput_extender.h.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

namespace capext::bench {

enum class ExtenderKind { kNone, kGoNoop, kProduct };

// How a run's pods are created, and so when its extender starts (throughput_run.h).
enum class PodCreation {
  kPlain,    // plain pods, before the extender starts (it lists them at its start)
  kGated,    // pods carrying our gate, before the extender, which starts in the window
  kWebhook,  // plain pods through the product's registered /mutate webhook: it starts first
};

struct ThroughputConfiguration {
  std::string name{};   // as in the JSON and --configs
  std::string title{};  // for the printed tables
  ExtenderKind kind = ExtenderKind::kNone;
  bool prioritize = false;  // filter is always configured when there is an extender
  bool preempt = false;
  bool bind = true;
  // kPlain for every configuration but gate mode's; in gate mode the product is no extender
  // entry of kube-scheduler and the control plane keeps spec.schedulingGates.
  PodCreation creation = PodCreation::kPlain;
  std::vector<std::string> product_flags{};  // besides deploy/'s config file
  std::string go_watch{};                    // the Go extender's pod watch: "", json, protobuf
  bool on_request = false;                   // runs only when named in --configs
  std::string unavailable{};                 // why it cannot run yet; "" when it can
  bool is_product() const { return kind == ExtenderKind::kProduct; }
  bool gate_mode() const { return creation != PodCreation::kPlain; }
};

inline std::vector<ThroughputConfiguration> ThroughputConfigurations() {
  using K = ExtenderKind;
  return {
      {.name = "no-extender", .title = "no extender", .kind = K::kNone},
      {.name = "go-noop", .title = "do-nothing Go extender: filter, bind", .kind = K::kGoNoop},
      {.name = "product-filter-bind", .title = "product: filter, bind", .kind = K::kProduct},
      {.name = "product-filter-bind-unpaced",
       .title = "product: filter, bind, /filter not paced",
       .kind = K::kProduct,
       .product_flags = {"--filter-hold-limit", "0s"},
       .on_request = true},
      {.name = "product-filter-bind-json-watch",
       .title = "product: filter, bind, pods and nodes watched in JSON",
       .kind = K::kProduct,
       .product_flags = {"--watch-encoding", "json"},
       .on_request = true},
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
       .title = "product, gate mode: pods admitted at creation by /mutate, kube-scheduler alone",
       .kind = K::kProduct,
       .creation = PodCreation::kWebhook,
       .product_flags = {"--admission-mode", "gate", "--leader-election", "off",
                         "--gate-scheduler-names", "default-scheduler"}},
      {.name = "product-gate-lift",
       .title = "product, gate mode: pods created gated, the product lifts the gates",
       .kind = K::kProduct,
       .creation = PodCreation::kGated,
       .product_flags = {"--admission-mode", "gate", "--leader-election", "off",
                         "--gate-scheduler-names", "default-scheduler"}},
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
