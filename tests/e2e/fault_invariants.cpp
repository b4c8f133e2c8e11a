#include "tests/e2e/fault_invariants.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

namespace capext::test {
namespace {

constexpr char kReclaimRecord[] = "scheduling.capacity-extender.io/reclaim";

// "/api/v1/namespaces/<ns>/pods/<name>[/<sub>]" -> {ns/name, sub}; nullopt for anything else.
std::optional<std::pair<std::string, std::string>> PodPath(const std::string& path) {
  const std::string prefix = "/api/v1/namespaces/";
  if (path.rfind(prefix, 0) != 0) return std::nullopt;
  std::vector<std::string> parts;
  std::size_t at = prefix.size();
  while (at <= path.size()) {
    const std::size_t slash = std::min(path.find('/', at), path.size());
    parts.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  if (parts.size() < 3 || parts[1] != "pods" || parts.size() > 4) return std::nullopt;
  return std::make_pair(parts[0] + "/" + parts[2], parts.size() == 4 ? parts[3] : "");
}

const rapidjson::Value* At(const rapidjson::Value& v, std::initializer_list<const char*> path) {
  const rapidjson::Value* at = &v;
  for (const char* key : path) {
    if (!at->IsObject() || !at->HasMember(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

std::string StringAt(const rapidjson::Value& v, std::initializer_list<const char*> path) {
  const rapidjson::Value* at = At(v, path);
  return at != nullptr && at->IsString() ? at->GetString() : "";
}

bool Ok(int status) {
  return status >= 200 && status < 300;
}

// docs/capacity-semantics.md#4-victims-on-one-node, "Order": higher priority is more important; at
// equal priority the pod that started earlier (a pod without a start counts as the latest).
bool MoreImportant(const ScenarioPod& a, const ScenarioPod& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.start.empty() || b.start.empty()) return !a.start.empty() && b.start.empty();
  return a.start < b.start;  // RFC 3339 UTC of one format: ordered as text
}

std::string Cpu(int64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

void CheckEvictions(const FaultRun& run, const std::map<std::string, const ScenarioPod*>& pods,
                    std::vector<std::string>* out) {
  std::map<std::string, std::string> bound;  // pod key -> node, replayed
  for (const auto& p : run.pods)
    if (!p.node.empty()) bound[p.Key()] = p.node;
  std::map<std::string, int64_t> first_eviction;  // pod key -> seq
  std::map<std::string, std::string> record;      // node -> the last reclaim record naming it
  // (node, record) -> the pods evicted under it so far, in order
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> reclaims;
  std::set<std::string> over_max;

  for (const auto& r : run.log) {
    const auto pod_path = PodPath(r.path);
    if (!pod_path || !Ok(r.status)) continue;
    const auto& [key, sub] = *pod_path;
    if (r.method == "PATCH" && sub.empty()) {
      rapidjson::Document body;
      body.Parse(r.body.c_str());
      const std::string value =
          body.HasParseError() ? "" : StringAt(body, {"metadata", "annotations", kReclaimRecord});
      if (!value.empty()) record[value.substr(0, value.find('@'))] = value;
      continue;
    }
    if (r.method == "POST" && sub == "binding") {
      rapidjson::Document body;
      body.Parse(r.body.c_str());
      bound[key] = body.HasParseError() ? "?" : StringAt(body, {"target", "name"});
    } else if ((r.method == "POST" && sub == "eviction") || (r.method == "DELETE" && sub.empty())) {
      const auto node = bound.find(key);
      if (r.method == "POST") {
        // 1. No pod evicted twice.
        const auto [first, inserted] = first_eviction.emplace(key, r.seq);
        if (!inserted)
          out->push_back(fmt::format("{} evicted twice: requests {} and {} were both answered {}",
                                     key, first->second, r.seq, r.status));
        // 2. Least important first within one reclaim.
        const auto victim = pods.find(key);
        if (inserted && victim != pods.end() && node != bound.end()) {
          auto& earlier = reclaims[{node->second, record[node->second]}];
          for (const std::string& e : earlier) {
            if (MoreImportant(*pods.at(e), *victim->second)) {
              out->push_back(fmt::format(
                  "eviction out of victim order on {}: {} (priority {}, start {}) evicted at "
                  "request {} after the more important {} (priority {}, start {})",
                  node->second, key, victim->second->priority, victim->second->start, r.seq, e,
                  pods.at(e)->priority, pods.at(e)->start));
            }
          }
          earlier.push_back(key);
        }
      }
      if (node != bound.end()) bound.erase(node);
    } else {
      continue;
    }
    // 3. No quota over max, at every point of the replay.
    std::map<std::string, int64_t> used;
    for (const auto& [k, n] : bound) {
      const auto p = pods.find(k);
      if (p != pods.end()) used[p->second->ns] += p->second->cpu_milli;
    }
    for (const auto& q : run.quotas) {
      if (used[q.ns] > q.max_cpu_milli && over_max.insert(q.ns).second) {
        out->push_back(fmt::format("quota {} over max after request {} ({} {}): used {} > max {}",
                                   q.ns, r.seq, r.method, r.path, Cpu(used[q.ns]),
                                   Cpu(q.max_cpu_milli)));
      }
    }
  }
}

void CheckFinalObjects(const FaultRun& run, std::vector<std::string>* out) {
  std::map<std::string, int64_t> recount;
  for (const auto& p : run.final_pods)
    if (!p.node.empty() && !p.terminating && !p.terminal) recount[p.ns] += p.cpu_milli;
  for (const auto& q : run.quotas) {
    if (recount[q.ns] > q.max_cpu_milli)
      out->push_back(fmt::format("quota {} over max in the final objects: bound pods {} > max {}",
                                 q.ns, Cpu(recount[q.ns]), Cpu(q.max_cpu_milli)));
  }
  // 5. status.used equals the recount.
  for (const auto& q : run.final_quotas) {
    const int64_t want = recount[q.ns];
    if (!q.used_cpu_milli.has_value() ? want != 0 : *q.used_cpu_milli != want)
      out->push_back(fmt::format("quota {}: status.used cpu {} but its bound pods request {}", q.ns,
                                 q.used_cpu_milli ? Cpu(*q.used_cpu_milli) : "absent", Cpu(want)));
  }
}

// 4. Each pending pod's final verdict is the expected one, reached (and held from then on)
// within the bound after the later of its creation and the server's return.
void CheckConvergence(const FaultRun& run, std::vector<std::string>* out) {
  for (const auto& p : run.pending) {
    if (p.samples.empty() || p.samples.back().verdict != p.final_verdict) {
      out->push_back(fmt::format("{} never reached its verdict '{}': last seen '{}'", p.key,
                                 p.final_verdict,
                                 p.samples.empty() ? "nothing" : p.samples.back().verdict));
      continue;
    }
    std::size_t first = p.samples.size() - 1;
    while (first > 0 && p.samples[first - 1].verdict == p.final_verdict)
      --first;
    const double from = std::max(run.back_at_s, p.created_at_s);
    const double took = p.samples[first].at_s - from;
    if (took > run.converge_bound_s)
      out->push_back(fmt::format("{} reached '{}' {:.2f} s after the server was back (bound {} s)",
                                 p.key, p.final_verdict, took, run.converge_bound_s));
  }
}

}  // namespace

std::vector<std::string> CheckFaultRun(const FaultRun& run) {
  std::map<std::string, const ScenarioPod*> pods;
  for (const auto& p : run.pods)
    pods[p.Key()] = &p;
  std::vector<std::string> out;
  CheckEvictions(run, pods, &out);
  CheckFinalObjects(run, &out);
  CheckConvergence(run, &out);
  return out;
}

std::optional<int64_t> ParseCpuMilli(const std::string& q) {
  if (q.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    if (q.back() == 'm') {
      const long long v = std::stoll(q.substr(0, q.size() - 1), &used);
      return used == q.size() - 1 ? std::optional<int64_t>(v) : std::nullopt;
    }
    const double v = std::stod(q, &used);
    return used == q.size() ? std::optional<int64_t>(std::llround(v * 1000)) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<LoggedRequest> ParseDoubleRequests(const std::string& json, int64_t seq_offset) {
  std::vector<LoggedRequest> out;
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("requests")) return out;
  for (const auto& e : doc["requests"].GetArray()) {
    out.push_back({e["seq"].GetInt64() + seq_offset, e["method"].GetString(), e["path"].GetString(),
                   e["query"].GetString(), e["body"].GetString(), e["user_agent"].GetString(),
                   e["status"].GetInt()});
  }
  return out;
}

// The items of a GET /_double/objects answer.
template <typename Fn>
void ForEachItem(const std::string& objects_json, Fn&& fn) {
  rapidjson::Document doc;
  doc.Parse(objects_json.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("items")) return;
  for (const auto& item : doc["items"].GetArray())
    fn(item);
}

std::vector<FinalPod> ParseDoublePods(const std::string& objects_json) {
  std::vector<FinalPod> out;
  ForEachItem(objects_json, [&](const rapidjson::Value& pod) {
    FinalPod p;
    p.ns = StringAt(pod, {"metadata", "namespace"});
    p.name = StringAt(pod, {"metadata", "name"});
    p.node = StringAt(pod, {"spec", "nodeName"});
    p.terminating = At(pod, {"metadata", "deletionTimestamp"}) != nullptr;
    const std::string phase = StringAt(pod, {"status", "phase"});
    p.terminal = phase == "Succeeded" || phase == "Failed";
    if (const auto* containers = At(pod, {"spec", "containers"});
        containers != nullptr && containers->IsArray()) {
      for (const auto& c : containers->GetArray())
        p.cpu_milli += ParseCpuMilli(StringAt(c, {"resources", "requests", "cpu"})).value_or(0);
    }
    out.push_back(std::move(p));
  });
  return out;
}

std::vector<FinalQuota> ParseDoubleQuotas(const std::string& objects_json) {
  std::vector<FinalQuota> out;
  ForEachItem(objects_json, [&](const rapidjson::Value& quota) {
    out.push_back({StringAt(quota, {"metadata", "namespace"}),
                   ParseCpuMilli(StringAt(quota, {"status", "used", "cpu"}))});
  });
  return out;
}

}  // namespace capext::test
