#include "config/object_stream_parts.h"

namespace capext::stream_decoding {

Status ObjectOrAbsent(JsonPullReader& r, std::string_view path, bool* present) {
  *present = false;
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartObject) return json::WrongTypeSkip(r, path, "object");
  *present = true;
  return {};
}

bool RootFields::Read(JsonPullReader& r, std::string_view key) {
  if (kind_slot.Take(key, "kind")) {
    kind.clear();
    kind_slot.Keep(json::PullString(r, "kind", &kind));
    return true;
  }
  if (api_version_slot.Take(key, "apiVersion")) {
    api_version.clear();
    api_version_slot.Keep(json::PullString(r, "apiVersion", &api_version));
    return true;
  }
  return false;
}

namespace {

Status ReadRequirements(JsonPullReader& r, std::string_view path,
                        std::vector<NodeSelectorRequirement>* out) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartArray) return json::WrongTypeSkip(r, path, "array");
  Status first;
  ForEachElement(r, [&](size_t i) {
    const FieldPath rpath(path, i);
    KeepFirst(&first, ObjectElement(r, rpath, [&] {
      NodeSelectorRequirement req;
      MemberSlot key_slot, op_slot, values_slot;
      ForEachMember(r, [&](std::string_view key) {
        if (key_slot.Take(key, "key")) {
          req.key.clear();
          key_slot.Keep(json::PullString(r, FieldPath(rpath, ".key"), &req.key));
        } else if (op_slot.Take(key, "operator")) {
          req.op.clear();
          op_slot.Keep(json::PullString(r, FieldPath(rpath, ".operator"), &req.op));
        } else if (values_slot.Take(key, "values")) {
          req.values.clear();
          values_slot.Keep(json::PullStringArray(r, FieldPath(rpath, ".values"), &req.values));
        } else {
          return r.SkipValue();
        }
        return true;
      });
      Status element;
      for (const MemberSlot* slot : {&key_slot, &op_slot, &values_slot})
        KeepFirst(&element, slot->status);
      out->push_back(std::move(req));
      return element;
    }));
    return true;
  });
  return first;
}

Status ReadTerms(JsonPullReader& r, std::string_view path, std::vector<NodeSelectorTerm>* terms) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartArray) return json::WrongTypeSkip(r, path, "array");
  Status first;
  ForEachElement(r, [&](size_t i) {
    const FieldPath tpath(path, i);
    KeepFirst(&first, ObjectElement(r, tpath, [&] {
      NodeSelectorTerm term;
      MemberSlot expressions_slot, fields_slot;
      ForEachMember(r, [&](std::string_view key) {
        if (expressions_slot.Take(key, "matchExpressions")) {
          term.match_expressions.clear();
          expressions_slot.Keep(
              ReadRequirements(r, FieldPath(tpath, ".matchExpressions"), &term.match_expressions));
        } else if (fields_slot.Take(key, "matchFields")) {
          term.match_fields.clear();
          fields_slot.Keep(
              ReadRequirements(r, FieldPath(tpath, ".matchFields"), &term.match_fields));
        } else {
          return r.SkipValue();
        }
        return true;
      });
      Status element = expressions_slot.status;
      KeepFirst(&element, fields_slot.status);
      terms->push_back(std::move(term));
      return element;
    }));
    return true;
  });
  return first;
}

}  // namespace

Status ReadAffinity(JsonPullReader& r, std::vector<NodeSelectorTerm>* terms) {
  static constexpr std::string_view kRequired =
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  return OnlyMember(r, "spec.affinity", "nodeAffinity", [&] {
    terms->clear();
    return OnlyMember(r, "spec.affinity.nodeAffinity",
                      "requiredDuringSchedulingIgnoredDuringExecution", [&] {
                        terms->clear();
                        return OnlyMember(r, kRequired, "nodeSelectorTerms", [&] {
                          terms->clear();
                          return ReadTerms(r, FieldPath(kRequired, ".nodeSelectorTerms"), terms);
                        });
                      });
  });
}

Status ReadContainers(JsonPullReader& r, std::string_view path,
                      std::vector<ContainerRequests>* out) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartArray) return json::WrongTypeSkip(r, path, "array");
  Status first;
  ForEachElement(r, [&](size_t i) {
    const FieldPath cpath(path, i);
    KeepFirst(&first, ObjectElement(r, cpath, [&] {
      ContainerRequests container;
      std::string restart_policy;
      MemberSlot resources_slot, policy_slot;
      ForEachMember(r, [&](std::string_view key) {
        if (resources_slot.Take(key, "resources")) {
          container.requests = ResourceList{};
          const FieldPath rpath(cpath, ".resources");
          bool present = false;
          resources_slot.Keep(ObjectOrAbsent(r, rpath, &present));
          if (!present) return true;
          MemberSlot requests_slot;
          std::optional<ResourceList> requests;
          ForEachMember(r, [&](std::string_view member) {
            if (!requests_slot.Take(member, "requests")) return r.SkipValue();
            requests.reset();
            requests_slot.Keep(
                json::PullResourceList(r, FieldPath(rpath, ".requests"), false, &requests));
            return true;
          });
          KeepFirst(&resources_slot.status, requests_slot.status);
          if (requests) container.requests = std::move(*requests);
          return true;
        }
        if (policy_slot.Take(key, "restartPolicy")) {
          restart_policy.clear();
          policy_slot.Keep(
              json::PullString(r, FieldPath(cpath, ".restartPolicy"), &restart_policy));
          return true;
        }
        return r.SkipValue();
      });
      Status element = resources_slot.status;
      KeepFirst(&element, policy_slot.status);
      container.restartable = restart_policy == "Always";
      out->push_back(std::move(container));
      return element;
    }));
    return true;
  });
  return first;
}

Status ReadTolerations(JsonPullReader& r, std::vector<Toleration>* out) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartArray) return json::WrongTypeSkip(r, "spec.tolerations", "array");
  Status first;
  ForEachElement(r, [&](size_t i) {
    const FieldPath path("spec.tolerations", i);
    KeepFirst(&first, ObjectElement(r, path, [&] {
      Toleration tol;
      static constexpr std::array<std::string_view, 4> kNames = {"key", "operator", "value",
                                                                 "effect"};
      Status element =
          json::PullStringFields<4>(r, path, kNames, {&tol.key, &tol.op, &tol.value, &tol.effect});
      out->push_back(std::move(tol));
      return element;
    }));
    return true;
  });
  return first;
}

}  // namespace capext::stream_decoding
