// The API server of bench_podcost_bench: tests/apiserver_double/apiserver_double.py (a TEST DOUBLE
// of kube-apiserver, wire format from the kube-apiserver captures) run as a child process on
// 127.0.0.1 with a bearer token, TCP_NODELAY on its connections as Go's net/http (else every
// response written as headers then body waits ~40 ms for a delayed ACK, and the run measures
// that) and without its request log (which would keep every body). The
// benchmark fills it through the control endpoint /_double/create_many (one lock, no HTTP round
// trip per object), reads it back through /_double/objects, and writes the kubeconfig the
// extender uses.
// Thread-safety: not thread-safe; the replay opens its own connections (port(), auth_header()).
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/podcost_child_process.h"
#include "bench/micro/podcost_http_client.h"
#include "core/status.h"

namespace capext::bench {

class ApiServerDouble {
 public:
  static constexpr const char* kToken = "podcost-bench-token";

  // Starts `script` with python3; the failure (with the double's log) when it does not start.
  // Without `request_log` the double keeps no request log (GET /_double/requests stays empty).
  Status Start(const std::string& script, const std::string& work_dir, bool request_log = false) {
    const std::string port_file = work_dir + "/double.port";
    std::remove(port_file.c_str());
    log_path_ = work_dir + "/double.log";
    std::vector<std::string> argv = {"python3",       script,      "--port",  "0",
                                     "--port-file",   port_file,   "--token", kToken,
                                     "--tcp-nodelay", "--history", "1000000"};
    if (!request_log) argv.push_back("--no-request-log");
    if (!process_.Start(argv, log_path_)) {
      return Status::Unavailable("cannot start python3 " + script);
    }
    port_ = process_.WaitForPortFile(port_file, std::chrono::seconds(20));
    if (port_ == 0 || !control_.Connect(port_)) {
      return Status::Unavailable("the API-server double did not start: " + process_.Log());
    }
    return {};
  }
  void Stop() {
    control_.Close();
    process_.Stop(std::chrono::milliseconds(3000));
  }

  uint16_t port() const { return port_; }
  int pid() const { return process_.pid(); }
  std::string Log() const { return process_.Log(); }
  static std::string AuthHeader() { return fmt::format("Authorization: Bearer {}\r\n", kToken); }

  // A kubeconfig for this double (token auth, plain HTTP on loopback).
  std::string Kubeconfig() const {
    return fmt::format(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: double\n  cluster:\n"
        "    server: http://127.0.0.1:{}\ncontexts:\n- name: double\n  context:\n"
        "    cluster: double\n    user: bench\ncurrent-context: double\nusers:\n- name: bench\n"
        "  user:\n    token: {}\n",
        port_, kToken);
  }

  // POST /_double/<path>; returns the status (0 on a transport error), the answer in *answer.
  int Control(const std::string& path, const std::string& body, std::string* answer = nullptr) {
    if (!control_.connected() && !control_.Connect(port_)) return 0;
    const int status = control_.RoundTrip(
        HttpConnection::GoRequest(body.empty() ? "GET" : "POST", "/_double/" + path, port_, body));
    if (answer) *answer = control_.body();
    return status;
  }

  // Creates `items` (JSON objects) of one resource, `batch` per control call.
  Status CreateMany(const std::string& resource, const std::vector<std::string>& items,
                    std::size_t batch = 1000, const std::string& group = "") {
    for (std::size_t start = 0; start < items.size(); start += batch) {
      std::string body = R"({"resource":")" + resource + '"';
      if (!group.empty()) body += R"(,"group":")" + group + '"';
      body += R"(,"items":[)";
      for (std::size_t i = start; i < std::min(items.size(), start + batch); ++i) {
        if (i > start) body += ',';
        body += items[i];
      }
      body += "]}";
      std::string answer;
      const int status = Control("create_many", body, &answer);
      if (status != 201) {
        return Status::Unavailable(
            fmt::format("create_many {}: HTTP {} {}", resource, status, answer));
      }
    }
    return {};
  }

  // Deletes (MODIFIED with deletionTimestamp, then DELETED, as a grace-0 deletion) every pod of
  // `ns` whose name starts with `prefix`.
  Status DeletePods(const std::string& ns, const std::string& prefix) {
    std::string answer;
    const int status = Control(
        "churn",
        fmt::format(R"({{"resource":"pods","namespace":"{}","prefix":"{}","action":"delete"}})", ns,
                    prefix),
        &answer);
    if (status != 200)
      return Status::Unavailable(fmt::format("churn delete: HTTP {} {}", status, answer));
    return {};
  }

  // Every stored object of `resource` (GET /_double/objects), parsed into *document.
  bool Objects(const std::string& resource, rapidjson::Document* document) {
    std::string answer;
    if (Control("objects?resource=" + resource, "", &answer) != 200) return false;
    document->Parse(answer.c_str(), answer.size());
    return !document->HasParseError() && document->IsObject() && (*document)["items"].IsArray();
  }

 private:
  ChildProcess process_;
  HttpConnection control_;
  std::string log_path_;
  uint16_t port_ = 0;
};

}  // namespace capext::bench
