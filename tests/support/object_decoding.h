// Test support for the streaming object decoder (config/object_stream_decoder.h): the DOM path it
// must match (Document::Parse + the object codec, as live mode decoded objects before) and a
// text form of every field of a Pod / Node, so that two records compare field by field and a
// difference reads well in a failure message.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "config/json_fields.h"
#include "config/object_codec.h"

namespace capext::testing {

// What the DOM path gives for an object decoded as `default_kind` ("Pod" or "Node").
template <class Record>
Status DomDecode(std::string_view json, const DecodeOptions& options, Record* out,
                 std::string* kind) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) return Status::Error("parse error");
  if (!doc.IsObject()) return Status::Error("expected an object");
  if (Status s = json::ReadString(doc, "kind", "kind", kind); !s.ok()) return s;
  std::string api_version;
  if (Status s = json::ReadString(doc, "apiVersion", "apiVersion", &api_version); !s.ok()) {
    return s;
  }
  if constexpr (std::is_same_v<Record, Pod>) {
    return DecodePod(doc, options, out);
  } else {
    (void)options;
    return DecodeNode(doc, out);
  }
}

inline std::string Text(const ResourceList& list) {
  std::string out = "{";
  for (const auto& [name, amount] : list.entries())
    out += fmt::format("{}={};", name, amount);
  return out + "}";
}

inline std::string Text(const Labels& labels) {
  std::string out = "{";
  for (const auto& [k, v] : labels)
    out += fmt::format("{:?}={:?};", std::string(k), std::string(v));
  return out + "}";
}

inline std::string Text(const std::vector<NodeSelectorRequirement>& reqs) {
  std::string out = "[";
  for (const auto& r : reqs) {
    out += fmt::format("({:?} {:?} [", r.key, r.op);
    for (const auto& v : r.values)
      out += fmt::format("{:?},", v);
    out += "])";
  }
  return out + "]";
}

inline std::string Text(const Pod& p) {
  std::string out = fmt::format(
      "ns={:?} name={:?} uid={:?} requests={} priority={} policy={} creation={} start={} "
      "accel={:?} node={:?} nominated={:?} record={:?} phase={} terminating={} unschedulable={} "
      "spec_priority={} spec_policy={} class={:?} scheduler={:?} labels={} selector={} "
      "tolerations=",
      p.ns, p.name, p.uid, Text(p.requests), p.priority, static_cast<int>(p.preemption_policy),
      p.creation_ms, p.start_ms, p.accelerator_model, p.node_name, p.nominated_node_name,
      p.reclaim_record, static_cast<int>(p.phase), p.terminating, p.unschedulable_condition,
      p.spec_priority ? std::to_string(*p.spec_priority) : "none",
      p.spec_preemption_policy ? std::to_string(static_cast<int>(*p.spec_preemption_policy))
                               : "none",
      p.priority_class_name, p.scheduler_name, Text(p.labels), Text(p.node_selector));
  for (const auto& t : p.tolerations)
    out += fmt::format("({:?} {:?} {:?} {:?})", t.key, t.op, t.value, t.effect);
  out += " affinity=";
  for (const auto& term : p.required_affinity)
    out += "{" + Text(term.match_expressions) + Text(term.match_fields) + "}";
  out += " claims=";
  for (const auto& c : p.resource_claims)
    out += fmt::format("({:?} {:?} {:?} {})", c.name, c.claim_name, c.template_name,
                       c.no_claim_needed);
  out += fmt::format(
      " group={:?}/{:?}/{:?}/{:?} min_member={} gated={}/{} admitted={} controller={} "
      "patch_basis={:?}/{}/{}",
      p.group->api_group, p.group->name, p.group->pod_group, p.group->replica_key,
      p.min_member_annotation, p.quota_gated, p.other_gates, p.admitted_ms, p.has_controller,
      p.patch_basis.resource_version, p.patch_basis.quota_gate_index,
      p.patch_basis.has_annotations);
  return out;
}

inline std::string Text(const Node& n) {
  std::string out =
      fmt::format("name={:?} allocatable={} labels={} unschedulable={} taints=", n.name,
                  Text(n.allocatable), Text(n.labels), n.unschedulable);
  for (const auto& t : n.taints)
    out += fmt::format("({:?} {:?} {:?})", t.key, t.value, t.effect);
  return out;
}

}  // namespace capext::testing
