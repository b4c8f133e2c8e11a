// Shared pieces of the extender micro-benchmarks (filter_bench, preempt_bench, bind_bench):
// synthetic clusters built straight into a ClusterState, real-sized request bodies shaped like
// the captured kube-scheduler payloads (tests/fixtures/kube-scheduler), a keep-alive HTTP
// load client on plain POSIX sockets, percentiles, heap measurement and the JSON report.
// Header-only; each benchmark is one executable. Nothing here is used by the product.
#pragma once

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/cluster_state.h"
#include "core/elastic_quota.h"
#include "extender/http/server.h"
#include "extender/verbs/extender_service.h"

namespace capext::bench {

using Clock = std::chrono::steady_clock;

inline double MicrosSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// CPU time of the calling thread, in microseconds. On a loaded machine (other processes sharing
// the cores) wall time includes waiting for a core; thread CPU time is what the call costs.
inline double ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Wall and thread-CPU time of one call.
struct Stopwatch {
  Clock::time_point wall = Clock::now();
  double cpu = ThreadCpuMicros();
  double WallMicros() const { return MicrosSince(wall); }
  double CpuMicros() const { return ThreadCpuMicros() - cpu; }
};

// ---------------------------------------------------------------------------------------------
// Command line: --json FILE, --quick (fewer iterations), --log-level L, --help, plus
// bench-specific flags read with Int("--name", default) / Str(...).
struct Args {
  std::map<std::string, std::string> values;
  bool quick = false;

  static Args Parse(int argc, char** argv, const char* usage) {
    Args a;
    for (int i = 1; i < argc; ++i) {
      std::string flag = argv[i];
      if (flag == "--help" || flag == "-h") {
        std::printf("%s\n", usage);
        std::exit(0);
      }
      if (flag == "--quick") {
        a.quick = true;
      } else if (flag.rfind("--", 0) == 0 && i + 1 < argc) {
        a.values[flag] = argv[++i];
      } else {
        std::fprintf(stderr, "unknown or incomplete flag %s\n", flag.c_str());
        std::exit(2);
      }
    }
    return a;
  }
  int Int(const std::string& flag, int fallback) const {
    auto it = values.find(flag);
    return it == values.end() ? fallback : std::atoi(it->second.c_str());
  }
  std::string Str(const std::string& flag, const std::string& fallback) const {
    auto it = values.find(flag);
    return it == values.end() ? fallback : it->second;
  }
};

// ---------------------------------------------------------------------------------------------
// Statistics.
struct Summary {
  std::size_t n = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

inline Summary Summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  auto at = [&](double p) {
    return samples[std::min(samples.size() - 1, static_cast<std::size_t>(p * samples.size()))];
  };
  s.n = samples.size();
  s.p50 = at(0.50);
  s.p90 = at(0.90);
  s.p99 = at(0.99);
  s.max = samples.back();
  double sum = 0;
  for (double v : samples)
    sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  return s;
}

// The median of per-run values (the mean of the two middle ones for an even count); 0 if none.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

inline void PrintSummary(const char* what, const Summary& s) {
  std::printf("  %-44s n=%-6zu p50=%9.1fus p90=%9.1fus p99=%9.1fus max=%9.1fus\n", what, s.n, s.p50,
              s.p90, s.p99, s.max);
}

// ---------------------------------------------------------------------------------------------
// Heap in use (glibc): arena bytes handed out plus mmapped blocks.
inline std::size_t HeapInUse() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// Resident set size in bytes (/proc/self/statm).
inline std::size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// ---------------------------------------------------------------------------------------------
// Synthetic clusters.
struct ClusterShape {
  int nodes = 5000;
  int pods_per_node = 20;
  int quotas = 8;                   // namespaces team-0..team-N-1 with an ElasticQuota
  int64_t node_cpu_milli = 64'000;  // m5.16xlarge-like
  int64_t node_memory = int64_t{256} << 30;
  int64_t pod_cpu_milli = 1000;
  int64_t pod_memory = int64_t{4} << 30;
  int64_t quota_min_cpu_milli = 12'000'000;  // per team; generous: the filter pod passes
  int64_t quota_max_cpu_milli = 20'000'000;
};

// Node names as long as typical cloud names in the captured payloads' size range.
inline std::string NodeName(int i) {
  return fmt::format("worker-pool-a-{:05}", i);
}

inline std::string TeamNamespace(int k) {
  return fmt::format("team-{}", k);
}

// A UUID-shaped uid, unique per (kind, i).
inline std::string Uid(uint32_t kind, uint64_t i) {
  return fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", kind, (i >> 32) & 0xffff,
                     (i >> 20) & 0xfff, (i >> 8) & 0xfff, i & 0xffffffffffffULL);
}

inline Node MakeBenchNode(int i, const ClusterShape& shape) {
  Node node;
  node.name = NodeName(i);
  node.allocatable.Set("cpu", shape.node_cpu_milli);
  node.allocatable.Set("memory", shape.node_memory);
  node.allocatable.Set("pods", 110);
  node.allocatable.Set("ephemeral-storage", int64_t{200} << 30);
  node.allocatable.Set("hugepages-1Gi", 0);
  node.allocatable.Set("hugepages-2Mi", 0);
  const char* zones[] = {"us-east-1a", "us-east-1b", "us-east-1c"};
  node.labels = {
      {"beta.kubernetes.io/arch", "amd64"},
      {"beta.kubernetes.io/instance-type", "m5.16xlarge"},
      {"beta.kubernetes.io/os", "linux"},
      {"kubernetes.io/arch", "amd64"},
      {"kubernetes.io/hostname", node.name},
      {"kubernetes.io/os", "linux"},
      {"node.kubernetes.io/instance-type", "m5.16xlarge"},
      {"topology.kubernetes.io/region", "us-east-1"},
      {"topology.kubernetes.io/zone", zones[i % 3]},
      {"eks.amazonaws.com/nodegroup", "pool-a"},
  };
  return node;
}

// The tolerations every pod gets from the DefaultTolerationSeconds admission plugin.
inline std::vector<Toleration> DefaultTolerations() {
  return {{"node.kubernetes.io/not-ready", "Exists", "", "NoExecute"},
          {"node.kubernetes.io/unreachable", "Exists", "", "NoExecute"}};
}

// A running pod as the informer would hold it: three of four in team namespaces, one in
// "monitoring" (no quota, a DaemonSet-like pod).
inline Pod MakeBoundPod(uint64_t index, const std::string& node, const ClusterShape& shape,
                        int32_t priority = 0) {
  Pod pod;
  const bool team = index % 4 != 3;
  pod.ns = team ? TeamNamespace(static_cast<int>(index % static_cast<uint64_t>(shape.quotas)))
                : "monitoring";
  pod.name = fmt::format("{}-job-{:06}-x7k2p", team ? "batch" : "node-exporter", index);
  pod.uid = Uid(0xb0b0b0b0, index);
  pod.node_name = node;
  pod.phase = PodPhase::kRunning;
  pod.spec_priority = priority;
  pod.priority = priority;
  pod.scheduler_name = "default-scheduler";
  pod.creation_ms = 1'700'000'000'000 + static_cast<int64_t>(index);
  pod.start_ms = pod.creation_ms + 1000;
  pod.requests.Set("cpu", shape.pod_cpu_milli);
  pod.requests.Set("memory", shape.pod_memory);
  pod.requests.Set("pods", 1);
  pod.labels = {{"app", team ? "batch" : "node-exporter"},
                {"controller-uid", Uid(0xc0c0c0c0, index / 50)},
                {"job-name", fmt::format("batch-job-{:06}", index / 50)}};
  pod.tolerations = DefaultTolerations();
  return pod;
}

inline ElasticQuota MakeTeamQuota(int k, const ClusterShape& shape) {
  ElasticQuota q;
  q.ns = TeamNamespace(k);
  q.name = q.ns;
  q.api_group = "scheduling.x-k8s.io";
  ResourceList min, max;
  min.Set("cpu", shape.quota_min_cpu_milli);
  max.Set("cpu", shape.quota_max_cpu_milli);
  q.min = min;
  q.max = max;
  return q;
}

// Fills `state` with shape.nodes nodes, shape.pods_per_node running pods on each, and the quotas.
inline void BuildCluster(ClusterState& state, const ClusterShape& shape) {
  for (int k = 0; k < shape.quotas; ++k)
    state.UpsertQuota(MakeTeamQuota(k, shape));
  for (int i = 0; i < shape.nodes; ++i)
    state.UpsertNode(MakeBenchNode(i, shape));
  uint64_t index = 0;
  for (int i = 0; i < shape.nodes; ++i) {
    const std::string node = NodeName(i);
    for (int p = 0; p < shape.pods_per_node; ++p)
      state.UpsertPod(MakeBoundPod(index++, node, shape));
  }
}

inline std::vector<std::string> NodeNames(int count, int stride = 1) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    out.push_back(NodeName(i * stride));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Request bodies, shaped like tests/fixtures/kube-scheduler/filter-nodecache-001.request.json
// (a kubectl-applied pod as kube-scheduler sends it: managedFields, the last-applied annotation,
// the service-account volume, default tolerations; ~2.8 KB).
struct PodSpecText {
  std::string ns = "team-0";
  std::string name = "trainer-0";
  std::string uid = "fa240c36-d199-4189-b548-c62723d9b393";
  std::string cpu = "2";
  std::string memory = "4Gi";
  int priority = 0;
  std::string priority_class = "low";
  std::string node_name;            // spec.nodeName (bound pods in NodeNameToVictims)
  std::string nominated_node_name;  // status.nominatedNodeName
};

inline std::string RealPodJson(const PodSpecText& p) {
  const std::string last_applied = fmt::format(
      R"({{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"annotations\":{{}},\"labels\":{{\"app\":\"harness\",\"pc\":\"{0}\"}},\"name\":\"{1}\",\"namespace\":\"{2}\"}},\"spec\":{{\"containers\":[{{\"image\":\"registry.k8s.io/pause:3.9\",\"name\":\"c\",\"resources\":{{\"limits\":{{\"cpu\":\"{3}\",\"memory\":\"{4}\"}},\"requests\":{{\"cpu\":\"{3}\",\"memory\":\"{4}\"}}}}}}],\"priorityClassName\":\"{0}\",\"terminationGracePeriodSeconds\":0}}}}\n)",
      p.priority_class, p.name, p.ns, p.cpu, p.memory);
  std::string out = fmt::format(
      R"({{"metadata":{{"name":"{1}","namespace":"{2}","uid":"{3}","resourceVersion":"205",)"
      R"("creationTimestamp":"2026-11-21T20:33:06Z","labels":{{"app":"harness","pc":"{0}"}},)"
      R"("annotations":{{"kubectl.kubernetes.io/last-applied-configuration":"{7}"}},)"
      R"("managedFields":[{{"manager":"kubectl-client-side-apply","operation":"Update",)"
      R"("apiVersion":"v1","time":"2026-11-21T20:33:06Z","fieldsType":"FieldsV1","fieldsV1":)"
      R"({{"f:metadata":{{"f:annotations":{{".":{{}},"f:kubectl.kubernetes.io/last-applied-configuration":{{}}}},)"
      R"("f:labels":{{".":{{}},"f:app":{{}},"f:pc":{{}}}}}},"f:spec":{{"f:containers":{{"k:{{\"name\":\"c\"}}":)"
      R"({{".":{{}},"f:image":{{}},"f:imagePullPolicy":{{}},"f:name":{{}},"f:resources":{{".":{{}},)"
      R"("f:limits":{{".":{{}},"f:cpu":{{}},"f:memory":{{}}}},"f:requests":{{".":{{}},"f:cpu":{{}},)"
      R"("f:memory":{{}}}}}},"f:terminationMessagePath":{{}},"f:terminationMessagePolicy":{{}}}}}},)"
      R"("f:dnsPolicy":{{}},"f:enableServiceLinks":{{}},"f:priorityClassName":{{}},"f:restartPolicy":{{}},)"
      R"("f:schedulerName":{{}},"f:securityContext":{{}},"f:terminationGracePeriodSeconds":{{}}}}}}}}]}},)"
      R"("spec":{{"volumes":[{{"name":"kube-api-access-xfmqb","projected":{{"sources":[)"
      R"({{"serviceAccountToken":{{"expirationSeconds":3607,"path":"token"}}}},)"
      R"({{"configMap":{{"name":"kube-root-ca.crt","items":[{{"key":"ca.crt","path":"ca.crt"}}]}}}},)"
      R"({{"downwardAPI":{{"items":[{{"path":"namespace","fieldRef":{{"apiVersion":"v1",)"
      R"("fieldPath":"metadata.namespace"}}}}]}}}}],"defaultMode":420}}}}],)"
      R"("containers":[{{"name":"c","image":"registry.k8s.io/pause:3.9","resources":)"
      R"({{"limits":{{"cpu":"{4}","memory":"{5}"}},"requests":{{"cpu":"{4}","memory":"{5}"}}}},)"
      R"("volumeMounts":[{{"name":"kube-api-access-xfmqb","readOnly":true,)"
      R"("mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}}],)"
      R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",)"
      R"("imagePullPolicy":"IfNotPresent"}}],"restartPolicy":"Always","terminationGracePeriodSeconds":0,)"
      R"("dnsPolicy":"ClusterFirst",{8}"serviceAccountName":"default","serviceAccount":"default",)"
      R"("securityContext":{{}},"schedulerName":"default-scheduler","tolerations":[)"
      R"({{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}},)"
      R"({{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}}],)"
      R"("priorityClassName":"{0}","priority":{6},"enableServiceLinks":true,)"
      R"("preemptionPolicy":"PreemptLowerPriority"}},"status":{{"phase":"{9}",{10}"qosClass":"Guaranteed"}}}})",
      p.priority_class, p.name, p.ns, p.uid, p.cpu, p.memory, p.priority, last_applied,
      p.node_name.empty() ? std::string() : fmt::format(R"("nodeName":"{}",)", p.node_name),
      p.node_name.empty() ? "Pending" : "Running",
      p.nominated_node_name.empty()
          ? std::string()
          : fmt::format(R"("nominatedNodeName":"{}",)", p.nominated_node_name));
  return out;
}

inline std::string JsonStringArray(const std::vector<std::string>& names) {
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += '"';
    out += names[i];
    out += '"';
  }
  return out + "]";
}

// Passed node count of one Filter answer (-1 on an error answer).
inline int PassedNodes(ExtenderService& service, const std::string& body) {
  std::string copy = body;
  http::Response r = service.Filter(copy);
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  if (r.status != 200 || !doc.IsObject() || !doc["NodeNames"].IsArray()) return -1;
  if (std::string(doc["Error"].GetString()) != "") return -1;
  return static_cast<int>(doc["NodeNames"].Size());
}

// ExtenderArgs in nodeCacheCapable mode.
inline std::string FilterBody(const std::string& pod_json, const std::vector<std::string>& names) {
  return R"({"Pod":)" + pod_json + R"(,"Nodes":null,"NodeNames":)" + JsonStringArray(names) + "}";
}

// ExtenderPreemptionArgs in nodeCacheCapable mode: node -> victim uids.
inline std::string PreemptBody(
    const std::string& pod_json,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& victims) {
  std::string out =
      R"({"Pod":)" + pod_json + R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{)";
  for (std::size_t i = 0; i < victims.size(); ++i) {
    if (i) out += ',';
    out += '"' + victims[i].first + R"(":{"Pods":[)";
    for (std::size_t v = 0; v < victims[i].second.size(); ++v) {
      if (v) out += ',';
      out += R"({"UID":")" + victims[i].second[v] + R"("})";
    }
    out += R"(],"NumPDBViolations":0})";
  }
  return out + "}}";
}

inline std::string BindBody(const Pod& pod, const std::string& node) {
  return fmt::format(R"({{"PodName":"{}","PodNamespace":"{}","PodUID":"{}","Node":"{}"}})",
                     pod.name, pod.ns, pod.uid, node);
}

// A blocking TCP connection to 127.0.0.1:port with TCP_NODELAY (as kube-scheduler's Go client
// sets it); the socket, or -1.
inline int ConnectLoopback(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// ---------------------------------------------------------------------------------------------
// A keep-alive HTTP/1.1 client on a blocking socket (as cheap as a client can be, so that the
// server gets most of the machine).
class KeepAliveClient {
 public:
  ~KeepAliveClient() { Close(); }
  bool Connect(uint16_t port) {
    fd_ = ConnectLoopback(port);
    return fd_ >= 0;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  static std::string PostRequest(const std::string& path, const std::string& body) {
    return "POST " + path +
           " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Go-http-client/1.1\r\n"
           "Content-Type: application/json\r\nAccept-Encoding: gzip\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  // Sends a complete request and reads one Content-Length-framed response. Returns the status
  // (0 on error); the body is in body().
  int RoundTrip(const std::string& request) {
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return 0;
      sent += static_cast<std::size_t>(n);
    }
    buffer_.clear();
    std::size_t header_end = std::string::npos, total = 0;
    char chunk[65536];
    for (;;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) return 0;
      buffer_.append(chunk, static_cast<std::size_t>(n));
      if (header_end == std::string::npos) {
        header_end = buffer_.find("\r\n\r\n");
        if (header_end == std::string::npos) continue;
        const std::size_t at = buffer_.find("Content-Length: ");
        if (at == std::string::npos || at > header_end) return 0;
        total = header_end + 4 + std::strtoul(buffer_.c_str() + at + 16, nullptr, 10);
      }
      if (buffer_.size() >= total) break;
    }
    body_start_ = header_end + 4;
    if (buffer_.size() < 12) return 0;
    return std::atoi(buffer_.c_str() + 9);
  }
  std::string_view body() const {
    return std::string_view(buffer_).substr(std::min(body_start_, buffer_.size()));
  }

 private:
  int fd_ = -1;
  std::string buffer_;
  std::size_t body_start_ = 0;
};

// The real server on 127.0.0.1, a free port, 2 IO threads (the deployment's default). Exits the
// benchmark when it cannot start.
inline std::unique_ptr<http::Server> StartLoopbackServer(http::Handler handler) {
  http::ServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.io_threads = 2;
  std::string error;
  auto server = http::Server::Start(options, std::move(handler), &error);
  if (!server) {
    std::fprintf(stderr, "cannot start the server: %s\n", error.c_str());
    std::exit(1);
  }
  return server;
}

struct LoadResult {
  std::size_t requests = 0;
  std::size_t failures = 0;
  double seconds = 0;
  double per_second = 0;
  Summary latency_us;
};

// `clients` threads, one keep-alive connection each, share `total` requests (request(i) builds
// the i-th complete HTTP request). check(status, body) may reject an answer (counted a failure).
template <typename MakeRequest, typename Check>
LoadResult RunKeepAliveLoad(uint16_t port, int clients, std::size_t total, MakeRequest request,
                            Check check) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> failures{0};
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
  std::vector<std::thread> threads;
  const auto started = Clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      KeepAliveClient client;
      if (!client.Connect(port)) {
        ++failures;
        return;
      }
      auto& samples = latencies[static_cast<std::size_t>(c)];
      for (std::size_t i = next++; i < total; i = next++) {
        const auto& req = request(i);
        const auto t0 = Clock::now();
        const int status = client.RoundTrip(req);
        samples.push_back(MicrosSince(t0));
        if (status == 0) {
          ++failures;
          if (!client.Connect(port)) return;
          continue;
        }
        if (!check(status, client.body())) ++failures;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  LoadResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::vector<double> all;
  for (auto& s : latencies)
    all.insert(all.end(), s.begin(), s.end());
  r.requests = all.size();
  r.failures = failures.load();
  r.per_second = static_cast<double>(r.requests) / r.seconds;
  r.latency_us = Summarize(std::move(all));
  return r;
}

// ---------------------------------------------------------------------------------------------
// The JSON report: flat numbers, notes, and targets with the verdict.
class Report {
 public:
  explicit Report(std::string name) : name_(std::move(name)) {}

  void Number(const std::string& key, double value) { numbers_.emplace_back(key, value); }
  void Note(const std::string& key, const std::string& value) { notes_.emplace_back(key, value); }
  void Latency(const std::string& key, const Summary& s) {
    Number(key + ".p50_us", s.p50);
    Number(key + ".p90_us", s.p90);
    Number(key + ".p99_us", s.p99);
    Number(key + ".max_us", s.max);
    Number(key + ".n", static_cast<double>(s.n));
  }
  // Per-run values of a measure whose median is reported (JSON "series").
  void Series(const std::string& key, std::vector<double> values) {
    series_.emplace_back(key, std::move(values));
  }
  // `op` is "<=", ">=" or "=="; prints and records whether `value` meets `target`. The JSON row
  // is {"name","value","unit","target":"<= 0.5","op","threshold","met"} in every benchmark, so
  // that bench.sh can summarize them all.
  void Target(const std::string& key, double value, const std::string& op, double target,
              const std::string& unit) {
    const bool met = op == "<=" ? value <= target : op == ">=" ? value >= target : value == target;
    targets_.push_back({key, value, op, target, unit, met});
    std::printf("  TARGET %-48s %12.2f %s %s %-10.2f %s\n", key.c_str(), value, unit.c_str(),
                op.c_str(), target, met ? "MET" : "MISSED");
  }

  // Writes to `path`, or out/bench/<name>.json when empty. Returns the path written.
  std::string Write(const std::string& path) const {
    const std::string file = path.empty() ? "out/bench/" + name_ + ".json" : path;
    std::error_code ec;
    const auto parent = std::filesystem::path(file).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    rapidjson::StringBuffer buffer;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("bench");
    w.String(name_.c_str());
    w.Key("numbers");
    w.StartObject();
    for (const auto& [k, v] : numbers_) {
      w.Key(k.c_str());
      w.Double(v);
    }
    w.EndObject();
    w.Key("notes");
    w.StartObject();
    for (const auto& [k, v] : notes_) {
      w.Key(k.c_str());
      w.String(v.c_str());
    }
    w.EndObject();
    w.Key("series");
    w.StartObject();
    for (const auto& [k, values] : series_) {
      w.Key(k.c_str());
      w.StartArray();
      for (double v : values)
        w.Double(v);
      w.EndArray();
    }
    w.EndObject();
    w.Key("targets");
    w.StartArray();
    for (const auto& t : targets_) {
      w.StartObject();
      w.Key("name");
      w.String(t.name.c_str());
      w.Key("value");
      w.Double(t.value);
      w.Key("unit");
      w.String(t.unit.c_str());
      w.Key("target");
      w.String(fmt::format("{} {:g}", t.op, t.target).c_str());
      w.Key("op");
      w.String(t.op.c_str());
      w.Key("threshold");
      w.Double(t.target);
      w.Key("met");
      w.Bool(t.met);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::ofstream(file) << buffer.GetString() << "\n";
    std::printf("wrote %s\n", file.c_str());
    return file;
  }

 private:
  struct TargetRow {
    std::string name;
    double value;
    std::string op;
    double target;
    std::string unit;
    bool met;
  };
  std::string name_;
  std::vector<std::pair<std::string, double>> numbers_;
  std::vector<std::pair<std::string, std::string>> notes_;
  std::vector<std::pair<std::string, std::vector<double>>> series_;
  std::vector<TargetRow> targets_;
};

}  // namespace capext::bench
