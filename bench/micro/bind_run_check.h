// The checks of a slow-bind run (docs/architecture.md#how-a-bind-travels): what the API server
// received (the double's request log), what the extender says it sent (its debug log), and
// CheckBindRun, which pairs them with the BindRetryScheduler's attempts and checks the
// invariants. Used by tests/e2e/slow_binds_test.cpp and slow_bind_bench.cpp.
#pragma once

#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/bind_retry_scheduler.h"

namespace capext::bench {

// A Binding POST as the API server received it (the double's request log).
struct BindingPost {
  std::string ns, name, node;
  int status = 0;
  BindRetryScheduler::Clock::time_point arrived, answered;
};

// Reads the Binding POSTs out of the double's GET /_double/requests answer; false when the body
// is not a request log. Its times are CLOCK_MONOTONIC seconds, steady_clock's clock on Linux.
inline bool ParseBindingPosts(const std::string& log, std::vector<BindingPost>* out) {
  rapidjson::Document doc;
  doc.Parse(log.c_str());
  if (!doc.IsObject() || !doc.HasMember("requests") || !doc["requests"].IsArray()) return false;
  const auto at = [](double seconds) {
    return BindRetryScheduler::Clock::time_point(
        std::chrono::duration_cast<BindRetryScheduler::Clock::duration>(
            std::chrono::duration<double>(seconds)));
  };
  for (const auto& entry : doc["requests"].GetArray()) {
    const std::string path = entry["path"].GetString();
    if (std::string(entry["method"].GetString()) != "POST" || !path.ends_with("/binding")) continue;
    // /api/v1/namespaces/{ns}/pods/{name}/binding
    const std::size_t ns_at = path.find("/namespaces/") + 12;
    const std::size_t pods_at = path.find("/pods/", ns_at);
    BindingPost post;
    post.ns = path.substr(ns_at, pods_at - ns_at);
    post.name = path.substr(pods_at + 6, path.size() - 8 - (pods_at + 6));
    post.status = entry["status"].GetInt();
    post.arrived = at(entry["arrived"].GetDouble());
    post.answered = at(entry["answered"].GetDouble());
    rapidjson::Document binding;
    binding.Parse(entry["body"].GetString());
    if (binding.IsObject() && binding.HasMember("target") && binding["target"].IsObject())
      post.node = binding["target"]["name"].GetString();
    out->push_back(std::move(post));
  }
  return true;
}

// A Binding the extender made, as its log line at the Binding's end tells (msg=bind, outcome
// bound, bind-failed or unanswered: the outcomes of a Binding that was sent), with the deadline of
// the /bind it served (deadline_monotonic_ms: steady_clock) and that /bind's caller (client=
// ip:port). Needs --log-level debug.
struct BindOwner {
  std::string pod;  // ns/name
  std::string node, outcome;
  BindRetryScheduler::Clock::time_point deadline;
  uint16_t client_port = 0;  // 0: the line names no caller
};

// The value of `key` in a logfmt line ("" when absent); values may be quoted.
inline std::string LogfmtValue(const std::string& line, const std::string& key) {
  const std::string needle = " " + key + "=";
  const std::size_t at = line.find(needle);
  if (at == std::string::npos) return "";
  std::size_t start = at + needle.size();
  if (start < line.size() && line[start] == '"') {
    const std::size_t end = line.find('"', start + 1);
    return line.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
  }
  return line.substr(start, line.find(' ', start) - start);
}

inline std::vector<BindOwner> ParseBindOwners(const std::string& extender_log) {
  std::vector<BindOwner> out;
  std::size_t start = 0;
  while (start < extender_log.size()) {
    std::size_t end = extender_log.find('\n', start);
    if (end == std::string::npos) end = extender_log.size();
    const std::string line = extender_log.substr(start, end - start);
    start = end + 1;
    if (LogfmtValue(line, "msg") != "bind") continue;
    const std::string deadline = LogfmtValue(line, "deadline_monotonic_ms");
    const std::string outcome = LogfmtValue(line, "outcome");
    if (deadline.empty() ||
        (outcome != "bound" && outcome != "bind-failed" && outcome != "unanswered")) {
      continue;
    }
    const std::string client = LogfmtValue(line, "client");
    const std::size_t colon = client.rfind(':');
    const uint16_t port = colon == std::string::npos
                              ? 0
                              : static_cast<uint16_t>(std::stoul("0" + client.substr(colon + 1)));
    out.push_back({LogfmtValue(line, "pod"), LogfmtValue(line, "node"), outcome,
                   BindRetryScheduler::Clock::time_point(
                       std::chrono::duration_cast<BindRetryScheduler::Clock::duration>(
                           std::chrono::duration<double, std::milli>(std::stod(deadline)))),
                   port});
  }
  return out;
}

// The invariants of a run (docs/architecture.md#how-a-bind-travels). Each Binding POST the API
// server received is paired with the extender's record of the /bind it served (the pod's POSTs
// and its sent Bindings, both in order: a pod never has two Bindings in the air), and that /bind
// with the scheduler's attempt: the one whose connection's port the record names as its caller;
// for a record without one, the pod's latest attempt started before the /bind's arrival
// (deadline - bind_deadline), which misattributes a request the extender read only after the
// next attempt began. Without records (`owners` empty: an extender that logs none), each
// POST is paired with the latest attempt started before it arrived, and its deadline counted
// from that attempt's start: a stricter base, since the extender read the request later.
struct BindRunCheck {
  std::size_t posts = 0, created = 0;
  std::vector<std::string> sent_late;          // arrived past its /bind's deadline + transit
  std::vector<std::string> unattributed;       // no /bind (or no attempt) to pair it with
  std::vector<std::string> bound_twice;        // pods with more than one Binding created
  std::vector<std::string> extra_posts;        // Bindings refused by the API server (409...)
  std::vector<std::string> never_bound;        // pods with no Binding created
  std::vector<std::string> bound_after_error;  // created for an attempt answered with an error
  std::vector<std::string> wrong_node;         // an attempt answered success for another node
  std::size_t created_after_timeout = 0;       // the remaining window: its attempt timed out
  double max_send_wait_ms = 0;                 // POST arrival - its attempt's start
  double max_past_deadline_ms = -1e9;          // POST arrival - its /bind's deadline
  std::vector<double> send_wait_ms;
  bool ok() const {
    return sent_late.empty() && unattributed.empty() && bound_twice.empty() &&
           extra_posts.empty() && never_bound.empty() && bound_after_error.empty() &&
           wrong_node.empty();
  }
  std::string Describe() const {
    std::string out = fmt::format(
        "{} Binding POSTs, {} created; sent late {}, unattributed {}, bound twice {}, refused by "
        "the API server {}, never bound {}, bound after an error answer {}, answered for the "
        "wrong node {}; created after kube-scheduler timed out {}; max wait before sending "
        "{:.0f} ms; latest arrival relative to the deadline {:+.0f} ms",
        posts, created, sent_late.size(), unattributed.size(), bound_twice.size(),
        extra_posts.size(), never_bound.size(), bound_after_error.size(), wrong_node.size(),
        created_after_timeout, max_send_wait_ms, max_past_deadline_ms);
    for (const auto* list : {&sent_late, &unattributed, &bound_twice, &extra_posts, &never_bound,
                             &bound_after_error, &wrong_node}) {
      for (std::size_t i = 0; i < list->size() && i < 5; ++i)
        out += "\n  " + (*list)[i];
    }
    return out;
  }
};

// `transit`: the most a Binding written at its deadline may take to reach the API server's log.
inline BindRunCheck CheckBindRun(const std::vector<BindRetryScheduler::Pod>& pods,
                                 const BindRetryScheduler::Result& run,
                                 const std::vector<BindingPost>& posts,
                                 const std::vector<BindOwner>& owners,
                                 std::chrono::milliseconds bind_deadline,
                                 std::chrono::milliseconds transit) {
  using Clock = BindRetryScheduler::Clock;
  BindRunCheck check;
  std::map<std::string, std::size_t> pod_of;  // "ns/name" -> index
  for (std::size_t i = 0; i < pods.size(); ++i)
    pod_of[pods[i].ns + "/" + pods[i].name] = i;
  std::vector<std::vector<const BindRetryScheduler::Attempt*>> attempts(pods.size());
  for (const auto& a : run.attempts)
    attempts[a.pod].push_back(&a);  // in start order per pod
  std::vector<std::vector<const BindingPost*>> posts_of(pods.size());
  for (const auto& post : posts) {
    auto known = pod_of.find(post.ns + "/" + post.name);
    if (known != pod_of.end()) posts_of[known->second].push_back(&post);
  }
  std::vector<std::vector<const BindOwner*>> owners_of(pods.size());
  for (const auto& owner : owners) {
    auto known = pod_of.find(owner.pod);
    if (known != pod_of.end()) owners_of[known->second].push_back(&owner);
  }
  const auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  for (std::size_t pod = 0; pod < pods.size(); ++pod) {
    const std::string key = pods[pod].ns + "/" + pods[pod].name;
    auto& mine = posts_of[pod];
    std::sort(mine.begin(), mine.end(),
              [](const auto* a, const auto* b) { return a->arrived < b->arrived; });
    auto& theirs = owners_of[pod];
    std::sort(theirs.begin(), theirs.end(),
              [](const auto* a, const auto* b) { return a->deadline < b->deadline; });
    std::vector<BindOwner> pseudo;
    if (owners.empty()) {  // pseudo-records from the scheduler's attempts
      pseudo.reserve(mine.size());
      for (const auto* post : mine) {
        const BindRetryScheduler::Attempt* before = nullptr;
        for (const auto* a : attempts[pod]) {
          if (a->start <= post->arrived) before = a;
        }
        pseudo.push_back(
            {key, post->node, "", (before ? before->start : post->arrived) + bind_deadline});
      }
      theirs.clear();
      for (const auto& o : pseudo)
        theirs.push_back(&o);
    }
    if (mine.size() != theirs.size()) {
      check.unattributed.push_back(fmt::format("{}: {} Binding POSTs, {} sent Bindings logged", key,
                                               mine.size(), theirs.size()));
    }
    int created = 0;
    std::string bound_node;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const BindingPost& post = *mine[i];
      ++check.posts;
      if (post.status == 201) {
        ++check.created;
        ++created;
        bound_node = post.node;
      } else {
        check.extra_posts.push_back(fmt::format("{}: HTTP {}", key, post.status));
      }
      if (i >= theirs.size()) continue;
      const BindOwner& owner = *theirs[i];
      const double past = ms(post.arrived - owner.deadline);
      check.max_past_deadline_ms = std::max(check.max_past_deadline_ms, past);
      if (post.arrived > owner.deadline + transit) {
        check.sent_late.push_back(fmt::format(
            "{}: Binding reached the API server {:.0f} ms after its bind's deadline", key, past));
      }
      const Clock::time_point received = owner.deadline - bind_deadline;
      const BindRetryScheduler::Attempt* served = nullptr;
      for (const auto* a : attempts[pod]) {
        const bool from_it =
            owner.client_port != 0 ? a->port == owner.client_port : a->start <= received;
        if (from_it && a->start <= received) served = a;
      }
      if (served == nullptr) {
        check.unattributed.push_back(
            owner.client_port != 0
                ? fmt::format("{}: no attempt from port {} started before its bind arrived", key,
                              owner.client_port)
                : key + ": no attempt started before its bind arrived");
        continue;
      }
      const double wait = ms(post.arrived - served->start);
      check.send_wait_ms.push_back(wait);
      check.max_send_wait_ms = std::max(check.max_send_wait_ms, wait);
      if (post.status != 201) continue;
      if (served->outcome == BindRetryScheduler::Outcome::kRefused) {
        check.bound_after_error.push_back(
            fmt::format("{} (attempt {}): bound to {} although answered \"{}\"", key,
                        served->number, post.node, served->error));
      } else if (served->outcome == BindRetryScheduler::Outcome::kTimedOut) {
        ++check.created_after_timeout;
      }
    }
    if (created == 0) check.never_bound.push_back(key);
    if (created > 1) check.bound_twice.push_back(fmt::format("{}: {}", key, created));
    for (const auto* a : attempts[pod]) {
      if (a->outcome == BindRetryScheduler::Outcome::kBound && created > 0 &&
          a->node != bound_node) {
        check.wrong_node.push_back(
            fmt::format("{} (attempt {}): answered success for {}, bound to {}", key, a->number,
                        a->node, bound_node));
      }
    }
  }
  return check;
}

}  // namespace capext::bench
