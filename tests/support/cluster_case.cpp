#include "tests/support/cluster_case.h"

#include <fmt/format.h>

#include "config/snapshot.h"

namespace capext::testing {
namespace {

const std::string& StringAt(const JsonTree& object, const std::string& a, const std::string& b) {
  static const std::string kEmpty;
  const JsonTree* outer = object.Find(a);
  const JsonTree* inner = outer != nullptr ? outer->Find(b) : nullptr;
  return inner != nullptr && inner->type() == JsonTree::Type::kString ? inner->str() : kEmpty;
}

const char* SemanticsName(QuotaSemantics semantics) {
  return semantics == QuotaSemantics::kSchedulerPlugins ? "scheduler-plugins" : "capacity-extender";
}

}  // namespace

DecodeOptions ClusterCase::decode_options() const {
  DecodeOptions options;
  options.accelerator_model_annotation = accelerator_annotation;
  return options;
}

std::vector<const JsonTree*> ClusterCase::ObjectsOf(const std::string& kind) const {
  std::vector<const JsonTree*> out;
  for (const JsonTree& o : objects) {
    if (const JsonTree* k = o.Find("kind"); k != nullptr && k->str() == kind) out.push_back(&o);
  }
  return out;
}

const JsonTree* ClusterCase::FindPod(const std::string& key) const {
  for (const JsonTree* pod : ObjectsOf("Pod")) {
    if (PodKey(*pod) == key) return pod;
  }
  return nullptr;
}

std::string PodKey(const JsonTree& pod) {
  const std::string& uid = StringAt(pod, "metadata", "uid");
  return uid.empty() ? ObjectName(pod) : uid;
}

std::string ObjectName(const JsonTree& object) {
  const std::string& ns = StringAt(object, "metadata", "namespace");
  const std::string& name = StringAt(object, "metadata", "name");
  return ns.empty() ? name : ns + "/" + name;
}

namespace {

// The objects as one `kind: List` (what kubectl get -o yaml prints).
JsonTree AsList(const ClusterCase& c) {
  JsonTree list = JsonTree::Object();
  list["apiVersion"] = "v1";
  list["kind"] = "List";
  JsonTree& items = list["items"] = JsonTree::Array();
  for (const JsonTree& o : c.objects)
    items.Push(o);
  return list;
}

}  // namespace

std::string SnapshotJson(const ClusterCase& c) {
  return AsList(c).ToJson();
}

Status BuildState(const ClusterCase& c, ClusterState* out) {
  Snapshot snapshot;
  if (Status s = ParseSnapshot(SnapshotJson(c), "generated case", c.decode_options(), &snapshot);
      !s.ok()) {
    return s;
  }
  *out = ClusterState(c.semantics);
  ApplySnapshot(snapshot, out);
  for (const HeldRoom& h : c.held) {
    if (out->FindPod(h.pod_key) == nullptr) continue;  // its pod was dropped
    if (h.kind == HeldRoom::Kind::kReservation) {
      out->Reserve(h.pod_key, h.node, h.reserved_ms, kHeldExpiresMs);
    } else {
      out->Nominate(h.pod_key, h.node, kHeldExpiresMs);
    }
  }
  return {};
}

std::string SnapshotYaml(const ClusterCase& c, const std::vector<std::string>& notes) {
  std::string out;
  for (const std::string& note : notes)
    out += "# " + note + "\n";
  out += fmt::format("# seed {}; serve/explain with --quota-semantics {}\n", c.seed,
                     SemanticsName(c.semantics));
  if (!c.accelerator_annotation.empty()) {
    out += fmt::format("# accelerator-model annotation: {}\n", c.accelerator_annotation);
  }
  for (const HeldRoom& h : c.held) {
    out += fmt::format(
        "# not in a snapshot: {} of pod {} on node {}{}\n",
        h.kind == HeldRoom::Kind::kReservation ? "a /bind reservation" : "our reclaim's nomination",
        h.pod_key, h.node,
        h.kind == HeldRoom::Kind::kReservation ? fmt::format(" made at {} ms", h.reserved_ms) : "");
  }
  out += AsList(c).ToYaml();
  return out;
}

ClusterCase ShrinkCase(ClusterCase c, const std::function<bool(const ClusterCase&)>& fails) {
  // Chunks of halving size over objects and held room alike (index < objects.size() is an
  // object), down to single entries, until a whole round drops nothing.
  auto total = [&] { return c.objects.size() + c.held.size(); };
  auto without = [&](std::size_t begin, std::size_t end) {
    ClusterCase smaller = c;
    smaller.objects.clear();
    smaller.held.clear();
    for (std::size_t i = 0; i < c.objects.size(); ++i) {
      if (i < begin || i >= end) smaller.objects.push_back(c.objects[i]);
    }
    for (std::size_t i = 0; i < c.held.size(); ++i) {
      const std::size_t k = c.objects.size() + i;
      if (k < begin || k >= end) smaller.held.push_back(c.held[i]);
    }
    return smaller;
  };
  bool dropped = true;
  while (dropped) {
    dropped = false;
    for (std::size_t chunk = std::max<std::size_t>(1, total() / 2); chunk >= 1; chunk /= 2) {
      for (std::size_t begin = 0; begin < total();) {
        ClusterCase smaller = without(begin, begin + chunk);
        if (fails(smaller)) {
          c = std::move(smaller);
          dropped = true;
        } else {
          begin += chunk;
        }
      }
      if (chunk == 1) break;
    }
  }
  return c;
}

}  // namespace capext::testing
