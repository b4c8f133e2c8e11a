// The extender side of one bench_throughput_bench run (configurations in
// throughput_configurations.h):
//  * DeploySchedulerOptions: kube-scheduler's extender entry with deploy/'s settings
//    (httpTimeout, nodeCacheCapable, weight, ignorable, enableHTTPS, read from
//    deploy/scheduler/scheduler-config.yaml) and the configuration's verbs;
//  * ThroughputExtender: the extender process. capacity-extender runs with
//    deploy/config/extender-config.yaml under deploy/rbac's ServiceAccount; only its listener
//    (127.0.0.1, a free port) and its webhook listener differ: none, or for the configurations
//    whose pods are created through the webhook an HTTPS one on a free port with the
//    benchmark's certificate (throughput_webhook.h). The Go extender binds with the same
//    ServiceAccount's token. Both are stopped by PID.
// Thread-safety: one thread at a time.
#pragma once

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench/micro/podcost_child_process.h"
#include "bench/micro/podcost_http_client.h"
#include "bench/micro/throughput_configurations.h"
#include "bench/micro/throughput_webhook.h"
#include "core/status.h"
#include "tests/support/real_control_plane.h"
#include "tests/support/test_paths.h"

namespace capext::bench {

// deploy/scheduler/scheduler-config.yaml's extender entry, with the verbs of `configuration`.
inline Status DeploySchedulerOptions(const ThroughputConfiguration& configuration,
                                     const std::string& extender_url, test::SchedulerOptions* out) {
  test::SchedulerOptions options;
  if (configuration.kind == ExtenderKind::kNone || configuration.gate_mode()) {
    *out = options;  // no extender entry at all
    return {};
  }
  YAML::Node entry;
  try {
    const YAML::Node config =
        YAML::LoadFile(test::SourcePath("deploy/scheduler/scheduler-config.yaml"));
    entry = config["extenders"][0];
  } catch (const YAML::Exception& e) {
    return Status::Invalid(std::string("deploy/scheduler/scheduler-config.yaml: ") + e.what());
  }
  if (!entry || !entry.IsMap()) {
    return Status::Invalid("deploy/scheduler/scheduler-config.yaml has no extender entry");
  }
  options.extender_url = extender_url;
  options.filter_verb = "filter";
  options.bind_verb = configuration.bind ? "bind" : "";
  options.prioritize_verb = configuration.prioritize ? "prioritize" : "";
  options.preempt_verb = configuration.preempt ? "preempt" : "";
  options.weight = entry["weight"].as<int>(options.weight);
  options.http_timeout = entry["httpTimeout"].as<std::string>(options.http_timeout);
  options.node_cache_capable = entry["nodeCacheCapable"].as<bool>(options.node_cache_capable);
  options.ignorable = entry["ignorable"].as<bool>(options.ignorable);
  options.enable_https = entry["enableHTTPS"].as<bool>(options.enable_https);
  *out = options;
  return {};
}

// The extender process of one run: capacity-extender or the Go extender, on 127.0.0.1 and a free
// port, its log in `log_path`, stopped by PID.
class ThroughputExtender {
 public:
  // `product` and `go_noop` are the binaries; `work_dir` holds the token and port files;
  // `webhook_tls`, for a product whose pods are created through its webhook, that listener's
  // certificate.
  Status Start(const ThroughputConfiguration& configuration, test::RealControlPlane& cluster,
               const std::string& product, const std::string& go_noop, const std::string& work_dir,
               const std::string& log_path, const WebhookTls* webhook_tls = nullptr) {
    if (Status s =
            Launch(configuration, cluster, product, go_noop, work_dir, log_path, webhook_tls);
        !s.ok())
      return s;
    return AwaitReady(configuration);
  }

  // Start's two halves. Launch spawns the process and must run on the thread that outlives it
  // (the child is killed when the thread that spawned it ends: PR_SET_PDEATHSIG); AwaitReady
  // only waits (for capacity-extender: its listening line, then /readyz, then with a webhook
  // its listening line too), from any thread.
  Status Launch(const ThroughputConfiguration& configuration, test::RealControlPlane& cluster,
                const std::string& product, const std::string& go_noop, const std::string& work_dir,
                const std::string& log_path, const WebhookTls* webhook_tls = nullptr) {
    port_ = 0;
    webhook_port_ = 0;
    if (configuration.kind == ExtenderKind::kNone) return {};
    if (configuration.kind == ExtenderKind::kProduct) {
      std::string kubeconfig;
      if (Status s = cluster.WriteExtenderKubeconfig(&kubeconfig); !s.ok()) return s;
      std::vector<std::string> argv = {product,
                                       "serve",
                                       "--config",
                                       test::SourcePath("deploy/config/extender-config.yaml"),
                                       "--kubeconfig",
                                       kubeconfig,
                                       "--listen-address",
                                       "127.0.0.1",
                                       "--port",
                                       "0",
                                       "--webhook-port",
                                       "0"};
      if (configuration.creation == PodCreation::kWebhook) {
        if (webhook_tls == nullptr || !webhook_tls->ok())
          return Status::Invalid(configuration.name + " needs the webhook's certificate");
        webhook_port_ = FreeTcpPort();
        if (webhook_port_ == 0) return Status::Unavailable("no free port for the webhook");
        argv.back() = std::to_string(webhook_port_);
        argv.insert(argv.end(), {"--webhook-tls-cert", webhook_tls->cert_file, "--webhook-tls-key",
                                 webhook_tls->key_file});
      }
      argv.insert(argv.end(), configuration.product_flags.begin(),
                  configuration.product_flags.end());
      if (!process_.Start(argv, log_path)) return Status::Unavailable("cannot start " + product);
      return {};
    }
    return StartGoNoop(configuration, cluster, go_noop, work_dir, log_path);
  }

  Status AwaitReady(const ThroughputConfiguration& configuration) {
    if (configuration.kind == ExtenderKind::kProduct) {
      auto line = process_.WaitForLogLine("extender listening", std::chrono::seconds(60));
      const std::size_t at = line ? line->find("127.0.0.1:") : std::string::npos;
      if (at == std::string::npos)
        return Status::Unavailable("capacity-extender did not listen:\n" + Tail());
      port_ = static_cast<uint16_t>(std::atoi(line->c_str() + at + 10));
      // Ready: every informer listed once (the prequeued pods included).
      const bool ready = PollUntil([&] { return Get("/readyz") == 200 || !process_.Running(); },
                                   std::chrono::seconds(120), std::chrono::milliseconds(50));
      if (!ready || !process_.Running())
        return Status::Unavailable("capacity-extender not ready:\n" + Tail());
      if (webhook_port_ != 0 &&
          !process_.WaitForLogLine("webhook listening", std::chrono::seconds(30))) {
        return Status::Unavailable("capacity-extender's webhook did not listen:\n" + Tail());
      }
    }
    return {};
  }

 private:
  // The Go extender, with the same ServiceAccount's token; ready when this returns.
  Status StartGoNoop(const ThroughputConfiguration& configuration, test::RealControlPlane& cluster,
                     const std::string& go_noop, const std::string& work_dir,
                     const std::string& log_path) {
    if (go_noop.empty() || access(go_noop.c_str(), X_OK) != 0) {
      return Status::Unavailable("no do-nothing Go extender at '" + go_noop +
                                 "' (bench.sh builds it with Debian's golang-go)");
    }
    const test::CommandResult token = cluster.Kubectl("create", "token", "capacity-scheduler", "-n",
                                                      "capacity-extender", "--duration=1h");
    if (!token.ok()) return Status::Unavailable("kubectl create token:\n" + token.output);
    const std::string token_file = work_dir + "/noop-extender.token";
    std::ofstream(token_file, std::ios::trunc) << token.output;
    const std::string port_file = work_dir + "/noop-extender.port";
    std::remove(port_file.c_str());
    std::vector<std::string> argv = {go_noop,    "--api-server",   cluster.server(),
                                     "--ca",     cluster.CaFile(), "--token-file",
                                     token_file, "--port-file",    port_file};
    if (!configuration.go_watch.empty()) {
      argv.push_back("--watch-pods");
      argv.push_back(configuration.go_watch);
    }
    if (!process_.Start(argv, log_path)) {
      return Status::Unavailable("cannot start " + go_noop);
    }
    port_ = process_.WaitForPortFile(port_file, std::chrono::seconds(30));
    if (port_ == 0) return Status::Unavailable("the Go extender did not listen:\n" + Tail());
    // Its pod watch has received the prequeued pods (the initial events, before the window).
    if (!configuration.go_watch.empty() &&
        !process_.WaitForLogLine("pod watch: initial events received", std::chrono::seconds(60))) {
      return Status::Unavailable("the Go extender's pod watch did not start:\n" + Tail());
    }
    return {};
  }

 public:
  // The text of GET `path`; 0 when it cannot be fetched.
  int Get(const std::string& path, std::string* body = nullptr) {
    if (port_ == 0) return 0;
    if (!client_.connected() && !client_.Connect(port_)) return 0;
    const int status = client_.RoundTrip(HttpConnection::GoRequest("GET", path, port_, ""));
    if (body) *body = client_.body();
    return status;
  }

  void Stop() {
    client_.Close();
    process_.Stop();
    port_ = 0;
    webhook_port_ = 0;
  }
  int pid() const { return port_ == 0 ? -1 : process_.pid(); }
  uint16_t port() const { return port_; }
  uint16_t webhook_port() const { return webhook_port_; }  // 0: no webhook listener
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string Tail() const {
    const std::string log = process_.Log();
    return log.size() > 4000 ? log.substr(log.size() - 4000) : log;
  }

  ChildProcess process_;
  HttpConnection client_;
  uint16_t port_ = 0;
  uint16_t webhook_port_ = 0;
};

}  // namespace capext::bench
