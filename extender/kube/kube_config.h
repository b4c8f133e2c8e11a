// KubeConfig: how to reach and authenticate to the API server, from a kubeconfig file or from
// the service-account files Kubernetes mounts into every pod (in-cluster).
//
// Thread-safety: a value type (the token source it holds is itself thread-safe).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/status.h"
#include "extender/kube/bearer_token_source.h"

namespace capext::kube {

struct KubeConfig {
  std::string server;  // base URL, "https://host:port" plus an optional path; no trailing '/'
  // PEM certificates that are the only roots trusted for the server's certificate. Empty: the
  // system's roots.
  std::string ca_pem;
  // Server certificate not verified. Only ever true when the kubeconfig says
  // `insecure-skip-tls-verify: true`; loading such a file logs a warning.
  bool insecure_skip_tls_verify = false;
  std::string client_cert_pem;  // client certificate chain (PEM); set together with the key
  std::string client_key_pem;
  std::shared_ptr<BearerTokenSource> token;  // null: no bearer token is sent
  std::string namespace_name;                // the context's / service account's namespace
  std::string origin;  // where this came from, for log lines: "kubeconfig F, context C"
};

struct KubeConfigFileOptions {
  std::string context;  // empty: the file's current-context
  std::chrono::milliseconds token_recheck_interval{2000};
};

// Loads the cluster, user and namespace of one context of a kubeconfig file. Relative file paths
// in it are relative to the file's directory (as kubectl resolves them). `*-data` fields are
// base64. A `tokenFile` wins over `token` (it is re-read when it changes). Returns an error naming
// the file and the field for anything missing or unreadable; exec and auth-provider plugins are
// not supported and are reported as errors.
Status LoadKubeConfigFile(const std::string& path, const KubeConfigFileOptions& options,
                          KubeConfig* out);

// Where in-cluster configuration comes from. Tests point the files elsewhere and set host/port.
struct InClusterSource {
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
  std::string host;  // empty: $KUBERNETES_SERVICE_HOST
  std::string port;  // empty: $KUBERNETES_SERVICE_PORT
  std::chrono::milliseconds token_recheck_interval{2000};
};

// True when the environment looks like a pod's ($KUBERNETES_SERVICE_HOST is set).
bool RunningInCluster();

// Builds the in-cluster config: https://host:port (IPv6 hosts bracketed), the rotating token
// file, the CA file; the namespace file is optional. Errors name the missing piece.
Status LoadInClusterConfig(const InClusterSource& source, KubeConfig* out);

// The live-mode rule: `--kubeconfig FILE` when given, else in-cluster when running in a pod,
// else an error saying both were missing.
Status LoadKubeConfig(const std::string& kubeconfig_path, KubeConfig* out);

}  // namespace capext::kube
