// The messages of the HTTP transport and the handler contract between the transport and whatever
// serves it (extender/routes.h for capacity-extender). http/ is a leaf: nothing here knows the
// application, and no file under extender/http/ includes anything above it
// (scripts/check_layering.sh fails the build's tests on such an include).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace capext::http {

struct Request {
  std::string method;  // "GET", "POST"
  std::string target;  // path + query as received
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  bool tls = false;                                          // arrived over TLS
  bool client_verified = false;  // a client certificate was presented and verified
  std::string peer;              // "ip:port" ("[v6]:port" for IPv6)
  // When the request's first byte was read (the earliest we know of it; /bind's deadline runs
  // from here).
  std::chrono::steady_clock::time_point received{};
  // The client had closed its side of the connection when the request was read whole, with
  // nothing after the request (plain TCP only; false over TLS, where a close is a record). An
  // HTTP/1.1 client closes while waiting only when it gave up on the answer (Go's http.Client at
  // its timeout: kube-scheduler's extender httpTimeout), so nobody will read this answer.
  bool client_gone = false;

  // The value of the first header named `lower_name` (which must be lower-case); "" if absent.
  std::string_view Header(std::string_view lower_name) const;
};

struct Response {
  int status = 200;                               // outside 100..999 is sent as 500
  std::string content_type = "application/json";  // empty: no Content-Type header
  std::string body;
  // Extra headers. Content-Length and Connection are set by the transport; a header whose name or
  // value contains CR or LF is dropped.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Completes a request exactly once; may be called from any thread, later than the handler returns.
// Calls after the first are ignored. If every copy is destroyed without a call, the client gets a
// 500. A call after the connection closed or the Server was destroyed is dropped silently.
using Responder = std::function<void(Response)>;

// Called on a server IO thread, possibly concurrently on several threads. Fast handlers answer
// inline; slow ones (a bind waiting on the API server) hand `respond` to another thread so that
// they never stall the IO threads. An exception thrown by the handler becomes a 500.
using Handler = std::function<void(Request&& request, Responder respond)>;

}  // namespace capext::http
