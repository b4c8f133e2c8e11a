// A coordination.k8s.io/v1 Lease as leader election reads it: who holds it, for how long a
// holder's renewal counts, how often it changed hands, and the resourceVersion that tells one
// write from the next. renewTime and acquireTime are deliberately not read: they are written by
// another machine's clock, and the extender judges a lease on its own clock only
// (docs/architecture.md#two-replicas-one-actor).
//
// Thread-safety: value types and pure functions; ReadLease is as thread-safe as RestClient (not
// on the client thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>

#include "core/status.h"
#include "extender/kube/rest_client.h"

namespace capext::kube {

struct LeaseRecord {
  bool exists = false;           // false: the API server answered 404
  std::string resource_version;  // metadata.resourceVersion: changes with every write
  std::string holder;            // spec.holderIdentity; "" when absent or released
  int64_t duration_seconds = 0;  // spec.leaseDurationSeconds; 0 when absent
  int64_t transitions = 0;       // spec.leaseTransitions; 0 when absent
  bool operator==(const LeaseRecord&) const = default;
};

// Parses a Lease object (JSON). Errors name the malformed field.
Status ParseLease(std::string_view json, LeaseRecord* out);

// GET /apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}. A 404 is a success with
// exists = false; any other failure is kUnavailable with the status and message. `stop` aborts
// the request; `timeout` > 0 bounds it.
Status ReadLease(RestClient* client, const std::string& namespace_name, const std::string& name,
                 LeaseRecord* out, std::stop_token stop = {},
                 std::chrono::milliseconds timeout = {});

}  // namespace capext::kube
