// ExtenderService: the extender verbs (filter, prioritize, preempt, bind) and the read-only views
// (/quotas, /explain) on top of the SchedulerCache. Each verb takes the request body and answers
// a complete HTTP response; malformed input is a 400 with {"error": "..."}.
// Thread-safety: every method may be called concurrently from many threads.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "extender/http/server.h"
#include "extender/metrics.h"
#include "extender/pod_binder.h"
#include "extender/scheduler_cache.h"
#include "extender/wire/extender_wire.h"
#include "policies/node_scorer.h"
#include "policies/victim_order.h"

namespace capext {

struct ServiceOptions {
  int64_t reservation_ttl_ms = 60'000;
  bool ignore_not_ready = false;
};

class ExtenderService {
 public:
  ExtenderService(SchedulerCache* cache, Metrics* metrics, std::unique_ptr<NodeScorer> scorer,
                  std::unique_ptr<VictimOrder> order, PodBinder* binder, ServiceOptions options);

  http::Response Filter(std::string& body);
  http::Response Prioritize(std::string& body);
  http::Response Preempt(std::string& body);
  // Answers through `respond`, possibly later from another thread (the binder's completion).
  void Bind(std::string& body, http::Responder respond);
  http::Response Quotas() const;
  http::Response Explain(std::string& body);
  // Quota gauges in the Prometheus text format (used, min, max per namespace and resource).
  std::string QuotaGauges() const;

  const VictimOrder& victim_order() const { return *order_; }
  SchedulerCache& cache() { return *cache_; }

 private:
  // Adds or refreshes a pending pod seen in a request, so /bind can find its requests later.
  void LearnPod(const Pod& pod);
  std::string BindChecked(const ExtenderBindingArgs& args, bool* reserved);
  void FinishBind(const BindRequest& request, const BindOutcome& outcome);

  SchedulerCache* cache_;
  Metrics* metrics_;
  std::unique_ptr<NodeScorer> scorer_;
  std::unique_ptr<VictimOrder> order_;
  PodBinder* binder_;
  ServiceOptions options_;
  std::mutex in_flight_mutex_;
  std::set<std::string> binds_in_flight_;  // pod uids
};

// Pod uid as the cache keys it.
inline std::string CacheKey(const Pod& pod) {
  return pod.uid.empty() ? pod.Key() : pod.uid;
}

}  // namespace capext
