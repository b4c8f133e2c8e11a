// Test support for the tests that need an API server: runs
// tests/apiserver_double/apiserver_double.py (a TEST DOUBLE of kube-apiserver) as a child process
// on 127.0.0.1, port 0, and talks to its control endpoints. The process is killed by PID when the
// object goes away. Crash() kills it at once and Revive() starts a new double process on the same
// port, fresh or with the objects Save() wrote: an API server restarted under its clients.
#pragma once

#include <rapidjson/document.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "extender/kube/kube_config.h"
#include "extender/kube/rest_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace capext::kube::testing {

inline const std::string kDoubleScript =
    capext::test::SourcePath("tests/apiserver_double/apiserver_double.py");

using capext::testing::TempDir;

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// Polls `condition` every 5 ms until true or `timeout`; returns its last value.
inline bool Eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Certificates made with the openssl command line: a CA, a server certificate for IP
// 127.0.0.1 and a client certificate, all signed by the CA (EC keys: fast to generate).
struct TestCertificates {
  std::string ca_cert, ca_key, server_cert, server_key, client_cert, client_key;  // file paths
  std::string error;  // empty when all were made
};

inline TestCertificates MakeTestCertificates(const TempDir& dir) {
  TestCertificates certs;
  auto f = [&](const char* name) { return dir.File(name); };
  certs.ca_cert = f("ca.crt");
  certs.ca_key = f("ca.key");
  certs.server_cert = f("server.crt");
  certs.server_key = f("server.key");
  certs.client_cert = f("client.crt");
  certs.client_key = f("client.key");
  dir.Write("server.ext", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  dir.Write("client.ext", "extendedKeyUsage=clientAuth\n");
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::string quiet = " >>" + f("openssl.log") + " 2>&1";
  std::vector<std::string> commands = {
      "openssl req -x509" + ec + " -keyout " + certs.ca_key + " -out " + certs.ca_cert +
          " -days 2 -subj /CN=kube-test-ca" + quiet,
      "openssl req" + ec + " -keyout " + certs.server_key + " -out " + f("server.csr") +
          " -subj /CN=127.0.0.1" + quiet,
      "openssl x509 -req -in " + f("server.csr") + " -CA " + certs.ca_cert + " -CAkey " +
          certs.ca_key + " -CAcreateserial -days 2 -extfile " + f("server.ext") + " -out " +
          certs.server_cert + quiet,
      "openssl req" + ec + " -keyout " + certs.client_key + " -out " + f("client.csr") +
          " -subj /CN=system:kube-scheduler" + quiet,
      "openssl x509 -req -in " + f("client.csr") + " -CA " + certs.ca_cert + " -CAkey " +
          certs.ca_key + " -CAcreateserial -days 2 -extfile " + f("client.ext") + " -out " +
          certs.client_cert + quiet,
  };
  for (const auto& command : commands) {
    if (std::system(command.c_str()) != 0) {
      certs.error = "failed: " + command + "\n" + ReadFile(f("openssl.log"));
      return certs;
    }
  }
  return certs;
}

class ApiServerDouble {
 public:
  struct Options {
    std::string token = "test-token";  // empty: no authentication required
    std::string group = "scheduling.x-k8s.io";
    std::string group_apis;  // "podgroups", "workloads" or both, comma-separated ("" = neither)
    bool drop_scheduling_gates = false;  // pod creates lose spec.schedulingGates (1.26 default)
    std::string tls_cert;                // with tls_key: serve HTTPS
    std::string tls_key;
    std::string client_ca;
    std::string ca_for_clients;  // PEM file Config() puts into KubeConfig::ca_pem
    int history = 100000;
    double bookmark_interval_s = 0;  // periodic BOOKMARKs of watches (0: only at the timeout)
    // resource.k8s.io version served (v1, v1beta2, v1beta1); "" = none. A comma list serves each
    // one, the first preferred, each with its own objects (no conversion).
    std::string dra_version;
  };

  explicit ApiServerDouble(Options options) : options_(std::move(options)) { Start(); }
  ApiServerDouble() : ApiServerDouble(Options{}) {}
  ~ApiServerDouble() { Kill(); }
  ApiServerDouble(const ApiServerDouble&) = delete;
  ApiServerDouble& operator=(const ApiServerDouble&) = delete;

  bool started() const { return port_ > 0; }
  // Stops the double now (SIGTERM, then SIGKILL): its connections close under their clients.
  void Stop() { Kill(); }
  // Kills the double at once (SIGKILL), as kill -9 an API server.
  void Crash() { Kill(SIGKILL); }
  // Writes the double's objects, resourceVersion and uids to a file of dir(); returns its path
  // ("" on failure).
  std::string Save() {
    const std::string path = dir_.File("state.json");
    return Control("save", R"({"path":")" + path + R"("})").empty() ? "" : path;
  }
  // Starts a new double process on the same port (after Crash() or Stop()): with `state_file`,
  // from what Save() wrote (empty history: every earlier resourceVersion is 410), its
  // resourceVersion moved on by `rv_bump`; with `unready_ms`, answering /readyz 500 and every
  // API request 503 for that long. Returns started().
  bool Revive(const std::string& state_file = "", int unready_ms = 0, int rv_bump = 0) {
    Kill();
    load_ = state_file;
    unready_ms_ = unready_ms;
    rv_bump_ = rv_bump;
    Start(port_);
    return started();
  }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string url() const {
    return std::string(options_.tls_cert.empty() ? "http" : "https") +
           "://127.0.0.1:" + std::to_string(port_);
  }
  std::string log() const { return ReadFile(dir_.File("double.log")); }
  const TempDir& dir() const { return dir_; }

  // The KubeConfig a client of this double needs (token and CA when configured).
  KubeConfig Config() const {
    KubeConfig config;
    config.server = url();
    if (!options_.token.empty()) config.token = BearerTokenSource::Fixed(options_.token);
    if (!options_.ca_for_clients.empty()) config.ca_pem = ReadFile(options_.ca_for_clients);
    config.origin = "apiserver double";
    return config;
  }

  // The text of a kubeconfig file for a client of this double over plain HTTP: its URL and its
  // token (none when the double requires none).
  std::string KubeconfigText() const {
    return "apiVersion: v1\nkind: Config\nclusters:\n- name: d\n  cluster:\n    server: " + url() +
           "\ncontexts:\n- name: d\n  context:\n    cluster: d\n    user: u\n"
           "current-context: d\nusers:\n- name: u\n" +
           (options_.token.empty() ? "  user: {}\n"
                                   : "  user:\n    token: " + options_.token + "\n");
  }

  // POST /_double/create_many {<resource_and_group>,"items":[<items>]}, where
  // `resource_and_group` names the resource (and its group): "\"resource\":\"pods\"". The double
  // answers 201 when it created every item.
  RestResponse CreateMany(const std::string& resource_and_group, const std::string& items) {
    return ControlClient()->Post("/_double/create_many",
                                 "{" + resource_and_group + R"(,"items":[)" + items + "]}");
  }

  // POST /_double/<name>; returns the response body ("" on failure).
  std::string Control(const std::string& name, const std::string& body = "{}") {
    RestResponse response = ControlClient()->Post("/_double/" + name, body);
    return response.status == 200 ? response.body : "";
  }
  std::string ControlGet(const std::string& path_and_query) {
    RestResponse response = ControlClient()->Get("/_double/" + path_and_query);
    return response.status == 200 ? response.body : "";
  }

  // The double's objects of one resource as namespace/name -> resourceVersion.
  std::map<std::string, std::string> Objects(const std::string& resource) {
    std::map<std::string, std::string> out;
    rapidjson::Document document;
    std::string body = ControlGet("objects?resource=" + resource);
    document.Parse(body.c_str());
    if (document.HasParseError() || !document.IsObject()) return out;
    for (const auto& item : document["items"].GetArray()) {
      const auto& meta = item["metadata"];
      std::string key = meta.HasMember("namespace") ? std::string(meta["namespace"].GetString()) +
                                                          "/" + meta["name"].GetString()
                                                    : std::string(meta["name"].GetString());
      out[key] = meta["resourceVersion"].GetString();
    }
    return out;
  }

  // The double's current global resourceVersion (0 on failure).
  long ResourceVersion() {
    rapidjson::Document document;
    document.Parse(ControlGet("state").c_str());
    if (document.HasParseError() || !document.IsObject()) return 0;
    return document["resourceVersion"].GetInt64();
  }

  // Logged API requests (not control calls) whose path ends with `suffix` and method matches.
  int CountRequests(const std::string& method, const std::string& suffix) {
    rapidjson::Document document;
    document.Parse(ControlGet("requests").c_str());
    if (document.HasParseError() || !document.IsObject()) return -1;
    int count = 0;
    for (const auto& entry : document["requests"].GetArray()) {
      std::string path = entry["path"].GetString();
      if (entry["method"].GetString() == method && path.size() >= suffix.size() &&
          path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
        ++count;
      }
    }
    return count;
  }

  // The body of the last logged request to a path ending with `suffix`.
  std::string LastRequestBody(const std::string& suffix, std::string* content_type = nullptr) {
    rapidjson::Document document;
    document.Parse(ControlGet("requests").c_str());
    std::string body;
    if (document.HasParseError() || !document.IsObject()) return body;
    for (const auto& entry : document["requests"].GetArray()) {
      std::string path = entry["path"].GetString();
      if (path.size() >= suffix.size() &&
          path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
        body = entry["body"].GetString();
        if (content_type) *content_type = entry["content_type"].GetString();
      }
    }
    return body;
  }

  RestClient* ControlClient() {
    if (!control_client_) {
      Status status = RestClient::Create(Config(), {}, &control_client_);
      if (!status.ok()) error_ = status.message();
    }
    return control_client_.get();
  }

 private:
  void Start(int port = 0) {
    std::string port_file = dir_.File("port");
    std::string log_file = dir_.File("double.log");
    std::remove(port_file.c_str());
    port_ = 0;
    error_.clear();
    std::vector<std::string> args = {"python3",
                                     kDoubleScript,
                                     "--port",
                                     std::to_string(port),
                                     "--port-file",
                                     port_file,
                                     "--group",
                                     options_.group.empty() ? "none" : options_.group,
                                     "--history",
                                     std::to_string(options_.history),
                                     "--bookmark-interval",
                                     std::to_string(options_.bookmark_interval_s)};
    if (!load_.empty())
      args.insert(args.end(), {"--load", load_, "--rv-bump", std::to_string(rv_bump_)});
    if (unready_ms_ > 0) args.insert(args.end(), {"--unready-ms", std::to_string(unready_ms_)});
    if (!options_.token.empty()) args.insert(args.end(), {"--token", options_.token});
    if (!options_.dra_version.empty())
      args.insert(args.end(), {"--dra-version", options_.dra_version});
    if (!options_.group_apis.empty())
      args.insert(args.end(), {"--group-apis", options_.group_apis});
    if (options_.drop_scheduling_gates) args.push_back("--drop-scheduling-gates");
    if (!options_.tls_cert.empty()) {
      args.insert(args.end(), {"--tls-cert", options_.tls_cert, "--tls-key", options_.tls_key});
    }
    if (!options_.client_ca.empty()) args.insert(args.end(), {"--client-ca", options_.client_ca});
    pid_ = fork();
    if (pid_ == 0) {
      // If the test binary dies without running destructors (abort, sanitizer), so does the
      // double: no orphaned servers.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      FILE* log = std::fopen(log_file.c_str(), "a");
      if (log != nullptr) {
        dup2(fileno(log), 1);
        dup2(fileno(log), 2);
      }
      std::vector<char*> argv;
      for (auto& arg : args)
        argv.push_back(arg.data());
      argv.push_back(nullptr);
      execvp("python3", argv.data());
      _exit(127);
    }
    if (pid_ < 0) {
      error_ = "fork failed";
      return;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        error_ = "apiserver double exited at start: " + ReadFile(log_file);
        return;
      }
      std::string text = ReadFile(port_file);
      if (!text.empty()) {
        port_ = std::atoi(text.c_str());
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    error_ = "apiserver double did not start within 15 s: " + ReadFile(log_file);
    Kill();
  }

  void Kill(int signal = SIGTERM) {
    control_client_.reset();
    if (pid_ <= 0) return;
    kill(pid_, signal);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() >= deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
  }

  Options options_;
  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string load_;    // --load of the next Start()
  int unready_ms_ = 0;  // --unready-ms of the next Start()
  int rv_bump_ = 0;     // --rv-bump of the next Start()
  std::string error_;
  std::unique_ptr<RestClient> control_client_;
};

}  // namespace capext::kube::testing
