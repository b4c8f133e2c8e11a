// SchedulerReplay: kube-scheduler's traffic to an extender, replayed pod by pod against a live
// API server (the double) and an extender (capacity-extender or the do-nothing one):
//   1. a user creates the pod (POST /api/v1/namespaces/<ns>/pods: the extender's watch gets
//      ADDED), and the replay takes the uid and resourceVersion the API server gave it;
//   2. POST /filter with the capture's body, the pod substituted, and the node names
//      kube-scheduler would send: numFeasibleNodesToFind of the cluster (adaptive
//      percentageOfNodesToScore: 230 of 500 nodes, 500 of 5,000), starting where the previous
//      pod's search stopped, as kube-scheduler rotates nextStartNodeIndex;
//   3. POST /prioritize with the nodes that passed (skipped when one is left, as kube-scheduler
//      does); the best score wins, ties broken by the pod's index;
//   4. POST /bind, asynchronously (kube-scheduler binds in a goroutine per pod while the next pod
//      is filtered): bind workers take the jobs; the extender POSTs the Binding to the API server.
// Filter and prioritize are strictly sequential per pod, as in kube-scheduler's scheduling loop.
// Pods start at a fixed rate (pods_per_second; 0 = back to back): an extender's cost per pod
// depends on how its work batches (watch events, status writes once a second, timers), so a
// fixed arrival rate keeps runs comparable across machines and across versions of the extender,
// and keeps the double (Python, one core at most) away from saturation.
// All extender calls share one GoTransportPool (2 idle connections, as kube-scheduler's Go
// client). Latencies are client-side wall times per verb.
// Thread-safety: Run() from one thread; it starts and joins its bind workers.
#pragma once

#include <rapidjson/document.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/bench_support.h"
#include "bench/micro/podcost_cluster_objects.h"
#include "bench/micro/podcost_http_client.h"

namespace capext::bench {

// kube-scheduler 1.26 numFeasibleNodesToFind with percentageOfNodesToScore unset (adaptive).
inline int KubeSchedulerNodesToFind(int all_nodes) {
  if (all_nodes < 100) return all_nodes;
  const int percentage = std::max(5, 50 - all_nodes / 125);
  return std::max(100, all_nodes * percentage / 100);
}

struct ReplayOptions {
  int pods = 3000;
  int namespaces = 8;        // pod i goes to team-(i % namespaces)
  std::string prefix = "p";  // pod names: <prefix>-<i>
  int names_per_filter = 0;  // 0: KubeSchedulerNodesToFind(nodes)
  double pods_per_second = 100;
  int bind_workers = 16;
  std::size_t idle_connections = 2;
};

struct ReplayResult {
  int64_t bound = 0;
  int64_t failures = 0;
  std::string first_failure;
  double seconds = 0;
  int64_t connections_opened = 0;
  int names_per_filter = 0;
  Summary create_us, filter_us, prioritize_us, bind_us;
};

inline std::string TeamNamespaceName(int k) {
  return fmt::format("team-{}", k);
}

class SchedulerReplay {
 public:
  SchedulerReplay(const ClusterObjects& objects, const std::vector<std::string>& node_names,
                  uint16_t extender_port, uint16_t api_port, std::string api_auth_header)
      : objects_(objects),
        nodes_(node_names),
        extender_port_(extender_port),
        api_port_(api_port),
        api_auth_(std::move(api_auth_header)) {}

  ReplayResult Run(const ReplayOptions& options) {
    ReplayResult result;
    GoTransportPool extender(extender_port_, options.idle_connections);
    HttpConnection user;  // the user (or controller) creating pods
    const int k = options.names_per_filter > 0
                      ? std::min<int>(options.names_per_filter, static_cast<int>(nodes_.size()))
                      : KubeSchedulerNodesToFind(static_cast<int>(nodes_.size()));
    result.names_per_filter = k;
    std::vector<double> create_us, filter_us, prioritize_us;
    std::vector<std::vector<double>> bind_us(static_cast<std::size_t>(options.bind_workers));
    std::vector<std::thread> workers;
    for (int w = 0; w < options.bind_workers; ++w)
      workers.emplace_back(
          [&, w] { BindWorker(extender, &bind_us[static_cast<std::size_t>(w)], &result); });
    const auto started = Clock::now();
    std::size_t next_start = 0;
    std::string answer;
    rapidjson::Document doc;
    for (int i = 0; i < options.pods; ++i) {
      if (options.pods_per_second > 0)
        std::this_thread::sleep_until(
            started + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(i / options.pods_per_second)));
      const std::string ns = TeamNamespaceName(i % options.namespaces);
      const std::string name = fmt::format("{}-{:06}", options.prefix, i);
      // 1. create
      auto t0 = Clock::now();
      const std::string create_body = objects_.Pod({name, ns, "", "", "", kPendingStatus});
      if (!user.connected()) user.Connect(api_port_);
      const int created = user.RoundTrip(HttpConnection::GoRequest(
          "POST", "/api/v1/namespaces/" + ns + "/pods", api_port_, create_body, api_auth_));
      create_us.push_back(MicrosSince(t0));
      const std::string uid = MetadataString(user.body(), "uid");
      const std::string rv = MetadataString(user.body(), "resourceVersion");
      if (created != 201 || uid.empty()) {
        Failure(&result, fmt::format("create {}/{}: HTTP {} {}", ns, name, created, user.body()));
        continue;
      }
      const std::string pod = objects_.Pod({name, ns, uid, rv, "", kPendingStatus});
      // 2. filter
      t0 = Clock::now();
      int status = extender.RoundTrip(
          HttpConnection::GoRequest("POST", "/filter", extender_port_,
                                    objects_.ExtenderArgs(pod, nodes_, next_start, k)),
          &answer);
      filter_us.push_back(MicrosSince(t0));
      next_start = (next_start + static_cast<std::size_t>(k)) % nodes_.size();
      std::vector<std::string> passed;
      doc.Parse(answer.c_str(), answer.size());
      if (status == 200 && doc.IsObject() && doc.HasMember("NodeNames") &&
          doc["NodeNames"].IsArray()) {
        for (const auto& n : doc["NodeNames"].GetArray())
          if (n.IsString()) passed.emplace_back(n.GetString(), n.GetStringLength());
      }
      if (passed.empty()) {
        Failure(&result,
                fmt::format("filter {}/{}: HTTP {} {}", ns, name, status, answer.substr(0, 400)));
        continue;
      }
      // 3. prioritize
      std::string node = passed[static_cast<std::size_t>(i) % passed.size()];
      if (passed.size() > 1) {
        t0 = Clock::now();
        status = extender.RoundTrip(
            HttpConnection::GoRequest("POST", "/prioritize", extender_port_,
                                      objects_.ExtenderArgs(pod, passed, 0, passed.size())),
            &answer);
        prioritize_us.push_back(MicrosSince(t0));
        doc.Parse(answer.c_str(), answer.size());
        if (status == 200 && doc.IsArray()) node = BestHost(doc, passed, i);
      }
      // 4. bind, asynchronously
      {
        std::lock_guard lock(mutex_);
        jobs_.push_back(
            fmt::format(R"({{"PodName":"{}","PodNamespace":"{}","PodUID":"{}","Node":"{}"}})", name,
                        ns, uid, node));
      }
      wake_.notify_one();
    }
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers)
      t.join();
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    result.connections_opened = extender.dials();
    std::vector<double> all_binds;
    for (auto& b : bind_us)
      all_binds.insert(all_binds.end(), b.begin(), b.end());
    result.create_us = Summarize(std::move(create_us));
    result.filter_us = Summarize(std::move(filter_us));
    result.prioritize_us = Summarize(std::move(prioritize_us));
    result.bind_us = Summarize(std::move(all_binds));
    return result;
  }

 private:
  static constexpr const char* kPendingStatus = R"({"phase":"Pending","qosClass":"Guaranteed"})";

  // The first "<key>":"value" of the object's metadata (the API server writes metadata first).
  static std::string MetadataString(const std::string& object, const std::string& key) {
    const std::string needle = "\"" + key + "\":\"";
    const std::size_t at = object.find(needle);
    if (at == std::string::npos) return "";
    const std::size_t start = at + needle.size();
    const std::size_t end = object.find('"', start);
    return end == std::string::npos ? "" : object.substr(start, end - start);
  }

  // The highest-scoring host; among equal scores, the pod's index picks one.
  static std::string BestHost(const rapidjson::Document& scores,
                              const std::vector<std::string>& passed, int index) {
    int64_t best = INT64_MIN;
    std::vector<std::string> ties;
    for (const auto& s : scores.GetArray()) {
      if (!s.IsObject() || !s.HasMember("Host") || !s["Host"].IsString() || !s.HasMember("Score") ||
          !s["Score"].IsInt64())
        continue;
      const int64_t score = s["Score"].GetInt64();
      if (score > best) ties.clear();
      if (score >= best) {
        best = score;
        ties.emplace_back(s["Host"].GetString());
      }
    }
    if (ties.empty()) return passed[static_cast<std::size_t>(index) % passed.size()];
    return ties[static_cast<std::size_t>(index) % ties.size()];
  }

  void BindWorker(GoTransportPool& extender, std::vector<double>* latencies, ReplayResult* result) {
    std::string answer;
    for (;;) {
      std::string body;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return closed_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        body = std::move(jobs_.front());
        jobs_.pop_front();
      }
      const auto t0 = Clock::now();
      const int status = extender.RoundTrip(
          HttpConnection::GoRequest("POST", "/bind", extender_port_, body), &answer);
      latencies->push_back(MicrosSince(t0));
      if (status == 200 && answer.find(R"("Error":"")") != std::string::npos) {
        std::lock_guard lock(mutex_);
        ++result->bound;
      } else {
        Failure(result, fmt::format("bind {}: HTTP {} {}", body, status, answer.substr(0, 400)));
      }
    }
  }

  void Failure(ReplayResult* result, const std::string& what) {
    std::lock_guard lock(failure_mutex_);
    if (result->failures++ == 0) result->first_failure = what;
  }

  const ClusterObjects& objects_;
  const std::vector<std::string>& nodes_;
  const uint16_t extender_port_;
  const uint16_t api_port_;
  const std::string api_auth_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> jobs_;
  bool closed_ = false;
  std::mutex failure_mutex_;
};

}  // namespace capext::bench
