// RestClient: blocking HTTP(S) calls to the Kubernetes API server from our own threads, and
// streaming watches. Built on cpprestsdk, whose headers stay inside rest_client.cpp.
//
// TLS: the server certificate is verified against KubeConfig::ca_pem (only those roots) or, when
// that is empty, the system roots; the host name must match. Verification is off only when the
// kubeconfig asked for insecure-skip-tls-verify. Client certificates and bearer tokens are sent
// when configured; the token is fetched for every request, so a rotated token file is used as
// soon as it is re-read, and a 401 forces a re-read plus one retry.
//
// Thread-safety: every method may be called concurrently from any number of threads, but never
// from inside a cpprestsdk continuation (the calls block on cpprestsdk tasks).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "core/status.h"
#include "extender/kube/kube_config.h"

namespace capext::kube {

// Sizes cpprestsdk's shared I/O thread pool. Call once, early in main(), before any request;
// later calls are ignored (logged). Without it cpprestsdk starts its default pool on first use.
void InitializeHttpThreadPool(size_t threads);

struct RestResponse {
  int status = 0;     // HTTP status code; 0 when no response arrived (see error)
  std::string body;   // the response body, whatever the status
  std::string error;  // why no response arrived (connect, TLS, timeout, cancelled); else empty
  bool ok() const { return status >= 200 && status < 300; }
};

struct RestClientOptions {
  // Inactivity timeout of ordinary requests (cpprestsdk restarts it whenever bytes move).
  std::chrono::milliseconds request_timeout{30000};
  std::string user_agent = "capacity-extender";
};

struct WatchResult {
  int status = 0;          // HTTP status of the watch response; 0 when none arrived
  std::string body;        // the response body when status != 200
  std::string error;       // why the stream broke (dropped connection, timeout); empty otherwise
  bool stopped = false;    // ended by the stop token or by on_line returning false
  bool completed = false;  // the server ended the stream normally (terminating chunk)
  uint64_t lines = 0;      // complete lines handed to on_line
};

class RestClient {
 public:
  // Checks the TLS material (CA, client certificate and key must parse) and builds the client.
  static Status Create(const KubeConfig& config, const RestClientOptions& options,
                       std::unique_ptr<RestClient>* out);
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  // `path` is the request target below the server URL, with its query: "/api/v1/pods?limit=5".
  // A stop request aborts the call (the result then carries error "cancelled").
  RestResponse Get(const std::string& path, std::stop_token stop = {});
  RestResponse Post(const std::string& path, std::string body,
                    const std::string& content_type = "application/json");
  RestResponse Put(const std::string& path, std::string body,
                   const std::string& content_type = "application/json");
  RestResponse Patch(const std::string& path, std::string body, const std::string& content_type);
  RestResponse Delete(const std::string& path);
  RestResponse Send(const std::string& method, const std::string& path, std::string body,
                    const std::string& content_type, std::stop_token stop = {});

  // Called with each complete line of a watch stream (without its '\n'; empty lines skipped).
  // Returning false ends the watch (the connection is closed).
  using LineCallback = std::function<bool(std::string_view line)>;

  // GETs `path` (which should carry watch=1) and streams the response body line by line until
  // the server ends it, the connection breaks, `inactivity_timeout` passes without a byte, the
  // callback returns false, or `stop` is requested (then it returns promptly). A trailing
  // partial line of a broken stream is dropped, never delivered. Runs on the calling thread.
  WatchResult Watch(const std::string& path, std::chrono::milliseconds inactivity_timeout,
                    const LineCallback& on_line, std::stop_token stop);

  const std::string& server() const;

 private:
  class Impl;
  explicit RestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace capext::kube
