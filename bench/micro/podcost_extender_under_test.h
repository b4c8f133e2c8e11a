// The extender process bench_podcost_bench measures: the real `capacity-extender serve --kubeconfig
// F` (live mode against the API-server double, every other flag at its default, as deployed) or the
// do-nothing extender (this benchmark re-executed with --noop-extender). Both listen on
// 127.0.0.1 with a free port and are stopped by PID. For capacity-extender it also answers "has
// the extender seen everything?": /quotas shows each quota's usage at the expected value with
// nothing reserved (every binding confirmed by the watch), and the double holds the matching
// ElasticQuota status.used (the status write-back happened).
// Thread-safety: one object per thread.
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench/micro/podcost_apiserver_double.h"
#include "bench/micro/podcost_child_process.h"
#include "bench/micro/podcost_http_client.h"

namespace capext::bench {

// A cpu quantity as the extender and the API server write it ("3", "1125", "1500m", "0.5") in
// millicores; -1 when it is not one.
inline int64_t CpuMilli(const std::string& text) {
  if (text.empty()) return -1;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return -1;
  if (*end == 'm' && end[1] == '\0') return static_cast<int64_t>(value + 0.5);
  if (*end == '\0') return static_cast<int64_t>(value * 1000 + 0.5);
  return -1;
}

class ExtenderUnderTest {
 public:
  // Starts `binary serve --kubeconfig <kubeconfig> --listen-address 127.0.0.1 --port 0` and waits
  // for /readyz (every informer listed once). `extra` flags are appended.
  Status StartCapacity(const std::string& binary, const std::string& kubeconfig,
                       const std::vector<std::string>& extra, const std::string& log_path,
                       std::chrono::seconds timeout) {
    std::vector<std::string> argv = {
        binary,   "serve", "--kubeconfig", kubeconfig, "--listen-address", "127.0.0.1",
        "--port", "0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    if (!process_.Start(argv, log_path)) {
      return Status::Unavailable("cannot start " + binary);
    }
    auto line = process_.WaitForLogLine("extender listening", std::chrono::seconds(30));
    const std::size_t at = line ? line->find("127.0.0.1:") : std::string::npos;
    if (at == std::string::npos) {
      return Status::Unavailable("capacity-extender did not listen: " +
                                 process_.Log().substr(0, 4000));
    }
    port_ = static_cast<uint16_t>(std::atoi(line->c_str() + at + 10));
    const bool ready = PollUntil([&] { return Get("/readyz") == 200 || !process_.Running(); },
                                 std::chrono::duration_cast<std::chrono::milliseconds>(timeout),
                                 std::chrono::milliseconds(50));
    if (!ready || !process_.Running()) {
      return Status::Unavailable("capacity-extender not ready: " + process_.Log().substr(0, 4000));
    }
    return {};
  }

  // Starts `self --noop-extender --api-port P --port-file F` and waits for its port.
  Status StartNoop(const std::string& self, uint16_t api_port, const std::string& work_dir) {
    const std::string port_file = work_dir + "/noop.port";
    std::remove(port_file.c_str());
    if (!process_.Start({self, "--noop-extender", "--api-port", std::to_string(api_port),
                         "--port-file", port_file},
                        work_dir + "/noop.log")) {
      return Status::Unavailable("cannot start " + self + " --noop-extender");
    }
    port_ = process_.WaitForPortFile(port_file, std::chrono::seconds(10));
    if (port_ == 0) {
      return Status::Unavailable("the do-nothing extender did not start: " + process_.Log());
    }
    return {};
  }

  int Stop() { return process_.Stop(); }
  bool Running() { return process_.Running(); }
  int pid() const { return process_.pid(); }
  uint16_t port() const { return port_; }
  std::string Log() const { return process_.Log(); }

  int Get(const std::string& path, std::string* body = nullptr) {
    if (!client_.connected() && !client_.Connect(port_)) return 0;
    const int status = client_.RoundTrip(HttpConnection::GoRequest("GET", path, port_, ""));
    if (body) *body = client_.body();
    return status;
  }

  // True once /quotas shows, for every namespace of `used_cpu_milli`, that usage and nothing
  // reserved. Polls every 20 ms up to `timeout`; *last gets the last answer (for errors).
  bool WaitForQuotaUsage(const std::map<std::string, int64_t>& used_cpu_milli,
                         std::chrono::milliseconds timeout, std::string* last) {
    return PollUntil(
        [&] {
          std::string body;
          if (Get("/quotas", &body) != 200) return false;
          *last = body;
          rapidjson::Document doc;
          doc.Parse(body.c_str(), body.size());
          if (doc.HasParseError() || !doc.IsObject() || !doc["quotas"].IsArray()) return false;
          std::size_t matched = 0;
          for (const auto& q : doc["quotas"].GetArray()) {
            auto it = used_cpu_milli.find(q["namespace"].GetString());
            if (it == used_cpu_milli.end()) continue;
            if (Cpu(q, "used") != it->second || Cpu(q, "reserved") > 0) return false;
            ++matched;
          }
          return matched == used_cpu_milli.size();
        },
        timeout);
  }

  // True once the double holds, for every namespace of `used_cpu_milli`, an ElasticQuota whose
  // status.used.cpu is that value (the extender's status write-back arrived).
  static bool WaitForQuotaStatus(ApiServerDouble& api,
                                 const std::map<std::string, int64_t>& used_cpu_milli,
                                 std::chrono::milliseconds timeout) {
    return PollUntil(
        [&] {
          rapidjson::Document doc;
          if (!api.Objects("elasticquotas", &doc)) return false;
          std::size_t matched = 0;
          for (const auto& q : doc["items"].GetArray()) {
            auto it = used_cpu_milli.find(q["metadata"]["namespace"].GetString());
            if (it == used_cpu_milli.end()) continue;
            if (!q.HasMember("status") || !q["status"].IsObject() ||
                !q["status"].HasMember("used") || Cpu(q["status"], "used") != it->second)
              return false;
            ++matched;
          }
          return matched == used_cpu_milli.size();
        },
        timeout, std::chrono::milliseconds(100));
  }

 private:
  static int64_t Cpu(const rapidjson::Value& holder, const char* list) {
    if (!holder.HasMember(list) || !holder[list].IsObject() || !holder[list].HasMember("cpu"))
      return -1;
    const auto& v = holder[list]["cpu"];
    if (v.IsString()) return CpuMilli(v.GetString());
    if (v.IsNumber()) return static_cast<int64_t>(v.GetDouble() * 1000 + 0.5);
    return -1;
  }

  ChildProcess process_;
  HttpConnection client_;
  uint16_t port_ = 0;
};

}  // namespace capext::bench
