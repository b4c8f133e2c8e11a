// PodBinder: makes a pod's binding real once /bind has reserved its quota. Embedded mode updates
// the in-memory state; live mode POSTs pods/{name}/binding to the API server.
// Thread-safety: implementations are called from several threads at once.
#pragma once

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
  int http_status = 0;  // the API server's answer (0 in embedded mode)
  std::string error;    // why it failed, for ExtenderBindingResult.Error
  // True when the binding is already visible in the cache (embedded mode); false when it will be
  // confirmed later by the watch (the reservation then stays until then or its TTL).
  bool applied = false;
};

class PodBinder {
 public:
  virtual ~PodBinder() = default;
  virtual BindOutcome Bind(const BindRequest& request) = 0;
  // Whether Bind blocks on the network (then /bind runs it off the IO threads).
  virtual bool blocking() const = 0;
};

}  // namespace capext
