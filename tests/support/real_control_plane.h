// RealControlPlane: a real etcd + kube-apiserver + kube-scheduler on 127.0.0.1 for one test,
// started and stopped through scripts/control-plane.sh (which documents the facts behind it).
// Every process is stopped by PID when the object goes away, also when a REQUIRE fails; if the
// test process dies without unwinding, the script's watchdog stops them.
//
// The binaries are optional: Unavailable() says why they cannot run here ("" when they can);
// the real_cluster_tests executable then exits 77 and CTest reports its tests skipped
// (docs/architecture.md#tests).
//
// Typical use:
//   RealControlPlane cluster;
//   REQUIRE(cluster.Start().ok());                          // etcd + kube-apiserver (~15 s)
//   REQUIRE(cluster.CreateFakeNodes(3, "8", "32Gi", "110").ok());
//   SchedulerOptions scheduler;
//   scheduler.extender_url = "http://127.0.0.1:" + std::to_string(extender.port());
//   REQUIRE(cluster.StartScheduler(scheduler).ok());
//   cluster.Kubectl("get", "pods", "-A");
//
// Thread-safety: one thread at a time, except api(), whose client is thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "extender/kube/rest_client.h"
#include "tests/support/run_command.h"

namespace capext::test {

struct ControlPlaneOptions {
  std::string
      feature_gates;  // kube-apiserver and kube-scheduler, e.g. "PodSchedulingReadiness=true"
  int apiserver_verbosity = 1;
};

// The generated KubeSchedulerConfiguration. An empty extender_url gives a scheduler without
// extenders; an empty verb leaves that verb out; config_file replaces all of it.
struct SchedulerOptions {
  std::string extender_url;
  std::string filter_verb = "filter";
  std::string prioritize_verb = "prioritize";
  std::string preempt_verb = "preempt";
  std::string bind_verb = "bind";
  int weight = 1;
  std::string http_timeout = "5s";
  bool node_cache_capable = true;
  bool enable_https = false;
  bool ignorable = false;
  std::string scheduler_name = "default-scheduler";
  int verbosity = 2;
  // clientConnection qps and burst of kube-scheduler's API client; 0: its defaults (50, 100),
  // which cap its own Binding POSTs (and Events) at 50 per second after the burst.
  int client_qps = 0;
  int client_burst = 0;
  std::string config_file;
};

// A Node with no kubelet behind it: created, its status patched in (capacity = allocatable,
// Ready=True), and the not-ready taint admission puts on new Nodes replaced by `taints`.
struct FakeNode {
  std::string name;
  std::string cpu = "8";
  std::string memory = "32Gi";
  std::string pods = "110";
  std::map<std::string, std::string> extended;  // e.g. {"nvidia.com/gpu", "4"}
  std::map<std::string, std::string> labels;    // kubernetes.io/hostname=<name> is always set
  std::string taints_json = "[]";               // spec.taints as a JSON list
};

class RealControlPlane {
 public:
  // Why this machine cannot run a real control plane (no binaries, no etcd), or "" when it can.
  static std::string Unavailable();

  explicit RealControlPlane(ControlPlaneOptions options = {});
  ~RealControlPlane();
  RealControlPlane(const RealControlPlane&) = delete;
  RealControlPlane& operator=(const RealControlPlane&) = delete;

  // Starts etcd and kube-apiserver on free ports in a fresh temp folder and connects api().
  Status Start();
  // Starts kube-scheduler, or restarts it with new options (etcd and kube-apiserver stay).
  Status StartScheduler(const SchedulerOptions& options);
  // Stops kube-scheduler by PID (etcd and kube-apiserver stay); nothing to stop is no error.
  Status StopScheduler();
  // SIGKILL to kube-apiserver; RestartApiServer brings it back on the same port and etcd data,
  // and gives api() new connections (the old ones died with the process).
  Status KillApiServer();
  Status RestartApiServer();
  // Stops every process by PID. Idempotent; the destructor calls it.
  void Stop();

  // The folder of this control plane: pki/, etc/ (kubeconfigs), logs/, pids/, etcd-data/.
  const std::string& dir() const { return dir_; }
  std::string server() const;            // https://127.0.0.1:<port>
  std::string AdminKubeconfig() const;   // system:masters
  std::string CaFile() const;            // the CA of kube-apiserver's certificate
  std::string SchedulerLogPath() const;  // the newest kube-scheduler's log
  std::string ApiServerLogPath() const;
  std::string Log(const std::string& path) const;  // a log's contents
  // The PID of "etcd", "kube-apiserver" or "kube-scheduler" while the script runs it, else -1.
  int Pid(const std::string& process) const;
  std::string EtcdUrl() const;  // http://127.0.0.1:<port>: etcd's client URL (and its /metrics)

  // kubectl with the admin kubeconfig.
  CommandResult Kubectl(const std::vector<std::string>& args) const;
  template <class... Args>
  CommandResult Kubectl(const Args&... args) const {
    return Kubectl(std::vector<std::string>{std::string(args)...});
  }
  // kubectl apply of YAML text, or of files/folders (paths relative to the repository root are
  // resolved there).
  Status Apply(const std::string& yaml) const;
  Status ApplyFiles(const std::vector<std::string>& paths) const;

  // A namespace with its `default` ServiceAccount (no controller creates it here, and pods
  // cannot be created without it).
  Status CreateNamespace(const std::string& name);
  Status CreateFakeNode(const FakeNode& node);
  Status CreateFakeNodes(const std::vector<FakeNode>& nodes);
  // `count` nodes <prefix>0 .. <prefix>(count-1), each with the given allocatable.
  Status CreateFakeNodes(int count, const std::string& cpu, const std::string& memory,
                         const std::string& pods, const std::string& prefix = "node-");
  // Marks a bound pod Running and Ready, as a kubelet would.
  Status MarkPodRunning(const std::string& ns, const std::string& name);

  // Sends the requests concurrently over api() and waits for all; an error names every failed
  // one (method, path, status, body).
  struct ApiRequest {
    std::string method, path, body, content_type;
  };
  Status SendAll(const std::vector<ApiRequest>& requests);

  // The product's deploy/ objects the extender needs: namespace capacity-extender, the
  // ElasticQuota CRD (waited for until Established), ServiceAccount capacity-scheduler and its
  // RBAC. Then a kubeconfig for that ServiceAccount (a one-hour token): the extender runs with
  // exactly the rights deploy/rbac grants it.
  Status InstallExtenderRbac();
  Status WriteExtenderKubeconfig(std::string* path);

  // The admin client (the product's own REST client).
  kube::RestClient& api() { return *api_; }

 private:
  CommandResult Script(const std::string& command, const std::vector<std::string>& env = {}) const;
  Status ConnectApi();  // (re)creates api_ from the admin kubeconfig

  ControlPlaneOptions options_;
  std::string dir_;
  std::map<std::string, std::string> state_;  // state.env
  std::unique_ptr<kube::RestClient> api_;
  bool started_ = false;
  mutable int applied_ = 0;  // Apply()'s files
};

}  // namespace capext::test
