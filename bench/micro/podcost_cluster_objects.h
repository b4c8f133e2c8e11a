// The objects and request bodies of bench_podcost_bench, made from the captures so that what the
// extender parses is what a real kube-scheduler and kube-apiserver send:
//  * the pod: tests/fixtures/kube-scheduler/filter-nodecache-001.request.raw.json, the exact
//    bytes kube-scheduler 1.26 POSTed to /filter (Go encoding/json of a kubectl-applied pod with
//    managedFields, ~2.8 KB). Its name, namespace, uid and resourceVersion (and, for pods created
//    bound or unschedulable, spec.nodeName and status) are substituted as text, so the encoding
//    is untouched; the filter/prioritize body keeps the capture's framing
//    (`{"Pod":..,"Nodes":null,"NodeNames":[..]}`) with our node names.
//  * the node: the first Node of filter-fullnodes-001 (a full Node object as the API server
//    serves it, ~3.5 KB), with name, zone, cpu and memory substituted.
//  * ElasticQuota and PriorityClass objects shaped like the kube-apiserver captures 12 and 04.
// Loading checks that every substituted text occurs as often as expected, so a changed capture
// fails loudly instead of producing different bodies.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/podcost_child_process.h"
#include "core/status.h"

namespace capext::bench {

// A text with numbered holes: Make() replaces each listed literal by its slot (checking how many
// times it occurs), Render() fills the slots.
class TextTemplate {
 public:
  struct Hole {
    std::string literal;
    int slot;
    int expected_count;
  };

  // Invalid when a literal does not occur exactly expected_count times.
  Status Make(const std::string& text, const std::vector<Hole>& holes) {
    std::string marked = text;
    for (const auto& hole : holes) {
      int count = 0;
      const std::string marker = std::string(1, '\x01') + static_cast<char>('A' + hole.slot);
      for (std::size_t at = marked.find(hole.literal); at != std::string::npos;
           at = marked.find(hole.literal, at + marker.size())) {
        marked.replace(at, hole.literal.size(), marker);
        ++count;
      }
      if (count != hole.expected_count) {
        return Status::Invalid(fmt::format("capture changed: '{}' occurs {} times, expected {}",
                                           hole.literal, count, hole.expected_count));
      }
    }
    parts_.clear();
    slots_.clear();
    std::size_t start = 0;
    for (std::size_t at = marked.find('\x01'); at != std::string::npos;
         at = marked.find('\x01', start)) {
      parts_.push_back(marked.substr(start, at - start));
      slots_.push_back(marked[at + 1] - 'A');
      start = at + 2;
    }
    parts_.push_back(marked.substr(start));
    return {};
  }

  std::string Render(const std::vector<std::string_view>& values) const {
    std::string out;
    out.reserve(parts_.front().size() * 2 + 4096);
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      out += parts_[i];
      out += values[static_cast<std::size_t>(slots_[i])];
    }
    out += parts_.back();
    return out;
  }

 private:
  std::vector<std::string> parts_;
  std::vector<int> slots_;
};

struct PodFields {
  std::string_view name, ns, uid, resource_version;
  std::string_view node;  // empty: no spec.nodeName
  std::string_view status = R"({"phase":"Pending","qosClass":"Guaranteed"})";
};

class ClusterObjects {
 public:
  // Reads the two captures under `fixtures_dir` (tests/fixtures/kube-scheduler).
  Status Load(const std::string& fixtures_dir) {
    const std::string filter =
        ReadWholeFile(fixtures_dir + "/filter-nodecache-001.request.raw.json");
    const std::string framing = R"(,"Nodes":null,"NodeNames":[)";
    const std::size_t names_at = filter.rfind(framing);
    if (filter.rfind(R"({"Pod":)", 0) != 0 || names_at == std::string::npos) {
      return Status::Invalid("cannot read a nodeCacheCapable filter body from " + fixtures_dir);
    }
    filter_prefix_ = filter.substr(0, 7);
    const std::string pod = filter.substr(7, names_at - 7);
    const std::string status = R"("status":{"phase":"Pending","qosClass":"Guaranteed"})";
    if (pod.find(R"("requests":{"cpu":"3","memory":"1Gi"})") == std::string::npos) {
      return Status::Invalid("capture changed: the pod no longer requests cpu 3, memory 1Gi");
    }
    const std::string node_anchor = R"("serviceAccount":"default",)";
    if (Status s = pod_.Make(pod, {{R"("name":"l1")", 0, 1},
                                   {R"(\"name\":\"l1\")", 1, 1},
                                   {R"("namespace":"ext-test")", 2, 1},
                                   {R"(\"namespace\":\"ext-test\")", 3, 1},
                                   {"fa240c36-d199-4189-b548-c62723d9b393", 4, 1},
                                   {"\"resourceVersion\":\"205\"", 5, 1},
                                   {node_anchor, 6, 1},
                                   {status, 7, 1}});
        !s.ok()) {
      return s;
    }
    rapidjson::Document full;
    const std::string nodes =
        ReadWholeFile(fixtures_dir + "/filter-fullnodes-001.request.raw.json");
    full.Parse(nodes.c_str(), nodes.size());
    if (full.HasParseError() || !full.IsObject() || !full.HasMember("Nodes") ||
        !full["Nodes"].IsObject() || !full["Nodes"]["items"].IsArray() ||
        full["Nodes"]["items"].Empty()) {
      return Status::Invalid("cannot read a Node from filter-fullnodes-001.request.raw.json in " +
                             fixtures_dir);
    }
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    full["Nodes"]["items"][0].Accept(writer);
    return node_.Make(
        buffer.GetString(),
        {{"node-a", 0, 8}, {"zone-1", 1, 2}, {R"("cpu":"8")", 2, 2}, {R"("memory":"32Gi")", 3, 2}});
  }

  // The pod as the API server serves it (and kube-scheduler forwards it).
  std::string Pod(const PodFields& f) const {
    const std::string name_json = fmt::format(R"("name":"{}")", f.name);
    const std::string name_escaped = fmt::format(R"(\"name\":\"{}\")", f.name);
    const std::string ns_json = fmt::format(R"("namespace":"{}")", f.ns);
    const std::string ns_escaped = fmt::format(R"(\"namespace\":\"{}\")", f.ns);
    const std::string rv = fmt::format(R"("resourceVersion":"{}")", f.resource_version);
    const std::string node =
        std::string(R"("serviceAccount":"default",)") +
        (f.node.empty() ? std::string() : fmt::format(R"("nodeName":"{}",)", f.node));
    const std::string status = fmt::format(R"("status":{})", f.status);
    return pod_.Render({name_json, name_escaped, ns_json, ns_escaped, f.uid, rv, node, status});
  }

  // ExtenderArgs in nodeCacheCapable mode, framed as the capture.
  std::string ExtenderArgs(const std::string& pod_json, const std::vector<std::string>& names,
                           std::size_t first, std::size_t count) const {
    std::string out;
    out.reserve(pod_json.size() + count * 24 + 64);
    out += filter_prefix_;
    out += pod_json;
    out += R"(,"Nodes":null,"NodeNames":[)";
    for (std::size_t i = 0; i < count; ++i) {
      if (i) out += ',';
      out += '"';
      out += names[(first + i) % names.size()];
      out += '"';
    }
    out += "]}";
    return out;
  }

  std::string Node(std::string_view name, std::string_view zone, std::string_view cpu,
                   std::string_view memory) const {
    const std::string cpu_json = fmt::format(R"("cpu":"{}")", cpu);
    const std::string memory_json = fmt::format(R"("memory":"{}")", memory);
    return node_.Render({name, zone, cpu_json, memory_json});
  }

  static std::string ElasticQuota(std::string_view ns, std::string_view min_cpu,
                                  std::string_view min_memory, std::string_view max_cpu,
                                  std::string_view max_memory) {
    return fmt::format(
        R"({{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota",)"
        R"("metadata":{{"name":"{0}","namespace":"{0}"}},"spec":{{"min":{{"cpu":"{1}",)"
        R"("memory":"{2}"}},"max":{{"cpu":"{3}","memory":"{4}"}}}}}})",
        ns, min_cpu, min_memory, max_cpu, max_memory);
  }

  static std::string PriorityClass(std::string_view name, int value) {
    return fmt::format(
        R"({{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{{"name":"{}"}},)"
        R"("value":{},"preemptionPolicy":"PreemptLowerPriority"}})",
        name, value);
  }

  // status of a pod running on its node and of a pod kube-scheduler found unschedulable
  // (PodScheduled=False, reason Unschedulable).
  static std::string RunningStatus() {
    return R"({"phase":"Running","conditions":[{"type":"PodScheduled","status":"True",)"
           R"("lastProbeTime":null,"lastTransitionTime":"2026-11-21T20:33:07Z"},)"
           R"({"type":"Ready","status":"True","lastProbeTime":null,)"
           R"("lastTransitionTime":"2026-11-21T20:33:08Z"}],"qosClass":"Guaranteed",)"
           R"("startTime":"2026-11-21T20:33:07Z"})";
  }
  static std::string UnschedulableStatus(int nodes) {
    return fmt::format(
        R"({{"phase":"Pending","conditions":[{{"type":"PodScheduled","status":"False",)"
        R"("lastProbeTime":null,"lastTransitionTime":"2026-11-21T20:33:07Z","reason":"Unschedulable",)"
        R"("message":"0/{0} nodes are available: {0} node(s) were rejected by the capacity )"
        R"(extender (ElasticQuota)."}}],"qosClass":"Guaranteed"}})",
        nodes);
  }

  // The capture's pod requests (limits = requests): what one pod adds to its quota's usage.
  static constexpr int64_t kPodCpuMilli = 3000;
  static constexpr int64_t kPodMemoryBytes = int64_t{1} << 30;

 private:
  std::string filter_prefix_;
  TextTemplate pod_;
  TextTemplate node_;
};

}  // namespace capext::bench
