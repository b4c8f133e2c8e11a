#include "config/object_stream_parts.h"

namespace capext::stream_decoding {

bool ObjectOrAbsent(JsonPullReader& r, std::string_view path, Status* status, bool* present) {
  *present = false;
  if (r.token() == Token::kNull) return true;
  if (r.token() != Token::kStartObject) return json::WrongTypeSkip(r, path, "object", status);
  *present = true;
  return true;
}

bool RootFields::Read(JsonPullReader& r, std::string_view key, bool* handled) {
  *handled = true;
  if (kind_slot.Take(key, "kind")) {
    kind.clear();
    return json::PullString(r, "kind", &kind, &kind_slot.status);
  }
  if (api_version_slot.Take(key, "apiVersion")) {
    api_version.clear();
    return json::PullString(r, "apiVersion", &api_version, &api_version_slot.status);
  }
  *handled = false;
  return true;
}

namespace {

bool ReadRequirements(JsonPullReader& r, std::string_view path,
                      std::vector<NodeSelectorRequirement>* out, Status* status) {
  if (r.token() == Token::kNull) return true;
  if (r.token() != Token::kStartArray) return json::WrongTypeSkip(r, path, "array", status);
  return ForEachElement(r, [&](size_t i) {
    const FieldPath rpath(path, i);
    return ObjectElement(r, rpath, status, [&] {
      NodeSelectorRequirement req;
      MemberSlot key_slot, op_slot, values_slot;
      bool ok = ForEachMember(r, [&](std::string_view key) {
        if (key_slot.Take(key, "key")) {
          req.key.clear();
          return json::PullString(r, FieldPath(rpath, ".key"), &req.key, &key_slot.status);
        }
        if (op_slot.Take(key, "operator")) {
          req.op.clear();
          return json::PullString(r, FieldPath(rpath, ".operator"), &req.op, &op_slot.status);
        }
        if (values_slot.Take(key, "values")) {
          req.values.clear();
          return json::PullStringArray(r, FieldPath(rpath, ".values"), &req.values,
                                       &values_slot.status);
        }
        return r.SkipValue();
      });
      for (const MemberSlot* slot : {&key_slot, &op_slot, &values_slot})
        KeepFirst(status, slot->status);
      out->push_back(std::move(req));
      return ok;
    });
  });
}

bool ReadTerms(JsonPullReader& r, std::string_view path, std::vector<NodeSelectorTerm>* terms,
               Status* status) {
  if (r.token() == Token::kNull) return true;
  if (r.token() != Token::kStartArray) return json::WrongTypeSkip(r, path, "array", status);
  return ForEachElement(r, [&](size_t i) {
    const FieldPath tpath(path, i);
    return ObjectElement(r, tpath, status, [&] {
      NodeSelectorTerm term;
      MemberSlot expressions_slot, fields_slot;
      bool ok = ForEachMember(r, [&](std::string_view key) {
        if (expressions_slot.Take(key, "matchExpressions")) {
          term.match_expressions.clear();
          return ReadRequirements(r, FieldPath(tpath, ".matchExpressions"), &term.match_expressions,
                                  &expressions_slot.status);
        }
        if (fields_slot.Take(key, "matchFields")) {
          term.match_fields.clear();
          return ReadRequirements(r, FieldPath(tpath, ".matchFields"), &term.match_fields,
                                  &fields_slot.status);
        }
        return r.SkipValue();
      });
      KeepFirst(status, expressions_slot.status);
      KeepFirst(status, fields_slot.status);
      terms->push_back(std::move(term));
      return ok;
    });
  });
}

}  // namespace

bool ReadAffinity(JsonPullReader& r, std::vector<NodeSelectorTerm>* terms, Status* status) {
  static constexpr std::string_view kRequired =
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  return OnlyMember(r, "spec.affinity", "nodeAffinity", status, [&](Status* s1) {
    terms->clear();
    return OnlyMember(r, "spec.affinity.nodeAffinity",
                      "requiredDuringSchedulingIgnoredDuringExecution", s1, [&](Status* s2) {
                        terms->clear();
                        return OnlyMember(r, kRequired, "nodeSelectorTerms", s2, [&](Status* s3) {
                          terms->clear();
                          return ReadTerms(r, FieldPath(kRequired, ".nodeSelectorTerms"), terms,
                                           s3);
                        });
                      });
  });
}

bool ReadContainers(JsonPullReader& r, std::string_view path, std::vector<ContainerRequests>* out,
                    Status* status) {
  if (r.token() == Token::kNull) return true;
  if (r.token() != Token::kStartArray) return json::WrongTypeSkip(r, path, "array", status);
  return ForEachElement(r, [&](size_t i) {
    const FieldPath cpath(path, i);
    return ObjectElement(r, cpath, status, [&] {
      ContainerRequests container;
      std::string restart_policy;
      MemberSlot resources_slot, policy_slot;
      bool ok = ForEachMember(r, [&](std::string_view key) {
        if (resources_slot.Take(key, "resources")) {
          container.requests = ResourceList{};
          const FieldPath rpath(cpath, ".resources");
          bool present = false;
          if (!ObjectOrAbsent(r, rpath, &resources_slot.status, &present)) return false;
          if (!present) return true;
          MemberSlot requests_slot;
          std::optional<ResourceList> requests;
          bool members_ok = ForEachMember(r, [&](std::string_view member) {
            if (requests_slot.Take(member, "requests")) {
              requests.reset();
              return json::PullResourceList(r, FieldPath(rpath, ".requests"), false, &requests,
                                            &requests_slot.status);
            }
            return r.SkipValue();
          });
          KeepFirst(&resources_slot.status, requests_slot.status);
          if (requests) container.requests = std::move(*requests);
          return members_ok;
        }
        if (policy_slot.Take(key, "restartPolicy")) {
          restart_policy.clear();
          return json::PullString(r, FieldPath(cpath, ".restartPolicy"), &restart_policy,
                                  &policy_slot.status);
        }
        return r.SkipValue();
      });
      KeepFirst(status, resources_slot.status);
      KeepFirst(status, policy_slot.status);
      container.restartable = restart_policy == "Always";
      out->push_back(std::move(container));
      return ok;
    });
  });
}

bool ReadTolerations(JsonPullReader& r, std::vector<Toleration>* out, Status* status) {
  if (r.token() == Token::kNull) return true;
  if (r.token() != Token::kStartArray) {
    return json::WrongTypeSkip(r, "spec.tolerations", "array", status);
  }
  return ForEachElement(r, [&](size_t i) {
    const FieldPath path("spec.tolerations", i);
    return ObjectElement(r, path, status, [&] {
      Toleration tol;
      MemberSlot slots[4];
      static constexpr std::string_view kNames[4] = {"key", "operator", "value", "effect"};
      std::string* fields[4] = {&tol.key, &tol.op, &tol.value, &tol.effect};
      bool ok = ForEachMember(r, [&](std::string_view key) {
        for (int f = 0; f < 4; ++f) {
          if (slots[f].Take(key, kNames[f])) {
            fields[f]->clear();
            return json::PullString(r, FieldPath(path, FieldPath(".", kNames[f])), fields[f],
                                    &slots[f].status);
          }
        }
        return r.SkipValue();
      });
      for (const auto& slot : slots)
        KeepFirst(status, slot.status);
      out->push_back(std::move(tol));
      return ok;
    });
  });
}

}  // namespace capext::stream_decoding
