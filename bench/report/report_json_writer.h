// The RapidJSON writer the report files use and its small helpers, shared by report.json's
// parts (sim_report_json.cpp, sim_quota_tree_json.cpp) so each writes numbers and resource
// lists the same way.
// Thread-safety: pure functions on the caller's writer.
#pragma once

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <string>

#include "core/resource_list.h"

namespace capext::report_json {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

inline void Key(Writer& w, const char* k) {
  w.Key(k);
}
inline void Str(Writer& w, const std::string& s) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}
inline void Num(Writer& w, const char* k, double v) {
  w.Key(k);
  w.Double(v);
}
inline void Int(Writer& w, const char* k, int64_t v) {
  w.Key(k);
  w.Int64(v);
}

// {"cpu": "300", "memory": "1000Gi", ...} in Kubernetes quantity notation.
inline void Resources(Writer& w, const ResourceList& list) {
  w.StartObject();
  for (const auto& [name, amount] : list.entries()) {
    w.Key(name.str().data(), static_cast<rapidjson::SizeType>(name.str().size()));
    Str(w, FormatAmount(name, amount));
  }
  w.EndObject();
}

}  // namespace capext::report_json
