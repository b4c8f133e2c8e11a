// RecordingSink: an InformerSink for tests that records what informers deliver: namespace/name ->
// resourceVersion per resource, the resourceVersion of every Apply in arrival order, the number
// of Replaces. Thread-safety: any thread (one mutex).
#pragma once

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "extender/kube/informer_sink.h"

namespace capext::kube::testing {

class RecordingSink : public InformerSink {
 public:
  void Replace(const std::string& resource, std::vector<std::string> objects_json) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& objects = objects_[resource];
    objects.clear();
    for (const auto& json : objects_json) {
      auto [key, rv, kind] = Identify(json);
      objects[key] = rv;
      if (kind.empty()) ++objects_without_kind_;
    }
    ++replaces_[resource];
  }
  // JSON only: the API-server double these tests run against speaks JSON.
  void Apply(const std::string& resource, WatchEventType type, ObjectEncoding encoding,
             std::string_view object_json) override {
    REQUIRE(encoding == ObjectEncoding::kJson);
    std::lock_guard<std::mutex> lock(mutex_);
    auto [key, rv, kind] = Identify(std::string(object_json));
    if (kind.empty()) ++objects_without_kind_;
    if (type == WatchEventType::kDeleted) {
      objects_[resource].erase(key);
    } else {
      objects_[resource][key] = rv;
    }
    applied_[resource].push_back(std::stol(rv));
  }

  std::map<std::string, std::string> Objects(const std::string& resource) {
    std::lock_guard<std::mutex> lock(mutex_);
    return objects_[resource];
  }
  std::vector<long> Applied(const std::string& resource) {
    std::lock_guard<std::mutex> lock(mutex_);
    return applied_[resource];
  }
  int Replaces(const std::string& resource) {
    std::lock_guard<std::mutex> lock(mutex_);
    return replaces_[resource];
  }
  int ObjectsWithoutKind() {
    std::lock_guard<std::mutex> lock(mutex_);
    return objects_without_kind_;
  }

 private:
  static std::tuple<std::string, std::string, std::string> Identify(const std::string& json) {
    rapidjson::Document document;
    document.Parse(json.c_str());
    REQUIRE(!document.HasParseError());
    const auto& meta = document["metadata"];
    std::string key = meta.HasMember("namespace") ? std::string(meta["namespace"].GetString()) +
                                                        "/" + meta["name"].GetString()
                                                  : std::string(meta["name"].GetString());
    std::string kind = document.HasMember("kind") ? document["kind"].GetString() : "";
    return {key, meta["resourceVersion"].GetString(), kind};
  }

  std::mutex mutex_;
  std::map<std::string, std::map<std::string, std::string>> objects_;
  std::map<std::string, std::vector<long>> applied_;
  std::map<std::string, int> replaces_;
  int objects_without_kind_ = 0;
};

}  // namespace capext::kube::testing
