// PodBinder: makes a pod's binding real once /bind has reserved its quota. Embedded mode updates
// the in-memory state and completes inline; live mode POSTs pods/{name}/binding through the API
// client and completes from the client's thread when the answer (or a timeout) arrives. No
// thread is created or blocked per binding.
// Thread-safety: Bind is called from several threads at once.
#pragma once

#include <functional>
#include <string>

namespace capext {

struct BindRequest {
  std::string ns;
  std::string name;
  std::string uid;  // the pod's uid ("" for a pod known without one)
  std::string node;
  std::string key;  // the pod's store key in the cluster state
};

struct BindOutcome {
  bool ok = false;
  int http_status = 0;  // the API server's answer (0 in embedded mode or without an answer)
  std::string error;    // why it failed, for ExtenderBindingResult.Error
  // True when the binding is already visible in the cache (embedded mode); false when it will be
  // confirmed later by the watch (the reservation then stays until then or its TTL).
  bool applied = false;
};

// Runs exactly once per Bind call, possibly before Bind returns. It must not block: in live mode
// it runs on the API client's only thread.
using BindDone = std::function<void(BindOutcome)>;

class PodBinder {
 public:
  virtual ~PodBinder() = default;
  virtual void Bind(const BindRequest& request, BindDone done) = 0;
};

}  // namespace capext
