// PodBinder: makes a pod's binding real once /bind has reserved its quota. Embedded mode updates
// the in-memory state and completes inline; live mode POSTs pods/{name}/binding through the
// Binding client and completes from that client's thread when the answer (or a timeout) arrives,
// or at once when the bind's deadline passes before the POST could be sent. No thread is created
// or blocked per binding (docs/architecture.md#how-a-bind-travels).
// Thread-safety: Bind is called from several threads at once.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace capext {

struct BindRequest {
  std::string ns;
  std::string name;
  std::string uid;  // the pod's uid ("" for a pod known without one)
  std::string node;
  std::string key;  // the pod's store key in the cluster state
  // The Binding is never sent at or after this instant (its /bind's arrival + bindDeadline).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::string client;  // the /bind's caller ("ip:port"; "" when unknown), for the log
};

struct BindOutcome {
  bool ok = false;
  int http_status = 0;  // the API server's answer (0 in embedded mode or without an answer)
  std::string error;    // why it failed, for ExtenderBindingResult.Error
  // True when the binding is already visible in the cache (embedded mode); false when it will be
  // confirmed later by the watch (the reservation then stays until then or its TTL).
  bool applied = false;
  // A failed binding that may still have been made: it was sent and no answer came. False when
  // the API server answered or the binding was never sent: then it certainly was not made.
  bool may_have_bound = false;
  bool deadline_passed = false;         // never sent: the deadline passed while it waited
  std::chrono::microseconds queued{0};  // how long it waited for a connection
};

// Runs exactly once per Bind call, possibly before Bind returns. It must not block: in live mode
// it runs on the Binding client's only thread.
using BindDone = std::function<void(BindOutcome)>;

class PodBinder {
 public:
  virtual ~PodBinder() = default;
  // Must not send the binding at or after request.deadline: a binding still waiting then
  // completes at once with deadline_passed.
  virtual void Bind(const BindRequest& request, BindDone done) = 0;
};

}  // namespace capext
