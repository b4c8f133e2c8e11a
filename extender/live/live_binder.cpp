#include "extender/live/live_binder.h"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "extender/kube/api_writes.h"

namespace capext {
namespace {

class LiveBinder final : public PodBinder {
 public:
  LiveBinder(kube::RestClient* client, Metrics* metrics,
             std::shared_ptr<const std::atomic<bool>> stopping, FilterPacer* pacer)
      : binder_(client), metrics_(metrics), stopping_(std::move(stopping)), pacer_(pacer) {
    metrics_->AddGauge("capacity_extender_binds_queued", 0);  // rendered from the start
  }
  void Bind(const BindRequest& r, BindDone done) override {
    if (stopping_->load()) {
      return done(BindOutcome{false, 0, "not sent: the extender is stopping", false});
    }
    Queued(+1);
    // Runs once per call at most: a re-send after a stale connection re-queues nothing.
    auto written = std::make_shared<std::atomic<bool>>(false);
    kube::CallOptions options;
    options.timeout = kBindingAnswerTimeout;
    options.send_by = r.deadline;
    options.on_written = [this, written] {
      if (!written->exchange(true)) Queued(-1);
    };
    binder_.BindAsync(
        r.ns, r.name, r.uid, r.node,
        [this, written, done = std::move(done)](kube::ApiWriteResult result) {
          if (!written->exchange(true)) Queued(-1);
          BindOutcome outcome;
          outcome.ok = result.ok;
          outcome.http_status = result.http_status;
          outcome.error = result.ok ? "" : Describe(result);
          outcome.may_have_bound = !result.ok && result.http_status == 0 && result.sent;
          outcome.deadline_passed = result.send_deadline_passed;
          outcome.queued = result.queued;
          done(std::move(outcome));
        },
        std::move(options));
  }

 private:
  static std::string Describe(const kube::ApiWriteResult& r) {
    return r.http_status == 0 ? r.message
                              : fmt::format("HTTP {} {}: {}", r.http_status, r.reason, r.message);
  }
  void Queued(int delta) {
    metrics_->AddGauge("capacity_extender_binds_queued", delta);
    if (pacer_ != nullptr) pacer_->QueuedBindingsChanged(delta);
  }
  kube::Binder binder_;
  Metrics* metrics_;
  std::shared_ptr<const std::atomic<bool>> stopping_;
  FilterPacer* pacer_;
};

}  // namespace

std::unique_ptr<PodBinder> MakeLiveBinder(kube::RestClient* client, Metrics* metrics,
                                          std::shared_ptr<const std::atomic<bool>> stopping,
                                          FilterPacer* pacer) {
  return std::make_unique<LiveBinder>(client, metrics, std::move(stopping), pacer);
}

}  // namespace capext
