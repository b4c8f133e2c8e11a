// Pieces the end-to-end tests on the API-server double build objects and read its answers with.
#pragma once

#include <rapidjson/document.h>

#include <string>

namespace capext::test {

// The string member `key` of `v`; "" when `v` is not an object or the member is missing or not a
// string.
inline std::string StringMember(const rapidjson::Value& v, const char* key) {
  return v.IsObject() && v.HasMember(key) && v[key].IsString() ? v[key].GetString() : "";
}

// A Ready node of 4 cpu, 32Gi and 110 pods, as the double takes it.
inline std::string ReadyNodeJson(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"("},"status":{"allocatable":{"cpu":"4","memory":"32Gi","pods":"110"},)"
         R"("capacity":{"cpu":"4","memory":"32Gi","pods":"110"},)"
         R"("conditions":[{"type":"Ready","status":"True"}]}})";
}

}  // namespace capext::test
