// The live binder: Bindings through the API server's Binding client
// (docs/architecture.md#how-a-bind-travels, step 3).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "extender/filter_pacer.h"
#include "extender/kube/rest_client.h"
#include "extender/metrics.h"
#include "extender/pod_binder.h"

namespace capext {

// Once written, a Binding waits this long for the API server's answer. Longer than
// kube-scheduler's httpTimeout on purpose: a Binding cut short could still be made by the API
// server after we answered the error, so we keep waiting and let a retry join the outcome
// (docs/architecture.md#how-a-bind-travels). The API server's own request timeout is 60 s.
inline constexpr std::chrono::milliseconds kBindingAnswerTimeout{30000};

// Binds through `client` (the Binding client of its own): completes on that client's thread, no
// thread per bind, and never writes the POST after the bind's deadline (CallOptions::send_by).
// Keeps the gauge capacity_extender_binds_queued (Bindings waiting for a connection) and reports
// each change of it to `pacer` (nullptr: none), which paces /filter by it.
// `stopping` is set by LiveMode::Stop before the client goes: a bind started then (a retry that
// waited for a Binding the stopping client cancelled) fails at once instead of using it.
// `client`, `metrics` and `pacer` outlive the binder.
std::unique_ptr<PodBinder> MakeLiveBinder(kube::RestClient* client, Metrics* metrics,
                                          std::shared_ptr<const std::atomic<bool>> stopping,
                                          FilterPacer* pacer);

}  // namespace capext
