// kube-scheduler's leader election played by a test: the Lease kube-system/kube-scheduler written
// as client-go writes it (holder "<identity>_<uuid>", leaseDurationSeconds 2, renewals every
// 250 ms by GET then PUT with the resourceVersion read; a new holder acquires with
// leaseTransitions + 1), for extenders run with --leader-election follow-scheduler
// (docs/architecture.md#two-replicas-one-actor). Used by the two-replica test and the fault
// suite (docs/faults.md).
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "extender/kube/api_writes.h"
#include "tests/support/apiserver_double_process.h"

namespace capext::kube::testing {

inline constexpr char kSchedulerLeasePath[] =
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";

// kube-scheduler's leader election, as client-go writes the Lease: renewals by the holder every
// 250 ms (GET, then PUT with that resourceVersion); a new holder acquires with
// leaseTransitions + 1.
class SchedulerLeases {
 public:
  explicit SchedulerLeases(ApiServerDouble* api) {
    capext::kube::RestClientOptions options;
    options.user_agent = "kube-scheduler-of-the-test";
    REQUIRE(RestClient::Create(api->Config(), options, &client_).ok());
  }
  ~SchedulerLeases() { Pause(); }

  void Create(const std::string& holder) {
    RestResponse r = client_->Post(kSchedulerLeasePath, Body(holder, 0, ""));
    INFO(r.body);
    REQUIRE(r.status == 201);
    Resume(holder);
  }
  // The holder's scheduler stops renewing (it crashed or lost the API server).
  void Pause() {
    if (thread_.joinable()) {
      thread_.request_stop();
      thread_.join();
    }
  }
  // Another scheduler takes the lease over, as client-go does once the record stayed unchanged
  // for leaseDuration: the same record with a new holder and leaseTransitions + 1.
  void Acquire(const std::string& holder) {
    Pause();
    rapidjson::Document lease = Get();
    const int transitions = lease["spec"]["leaseTransitions"].GetInt() + 1;
    RestResponse r = client_->Put(std::string(kSchedulerLeasePath) + "/kube-scheduler",
                                  Body(holder, transitions, ResourceVersionOf(lease)));
    INFO(r.body);
    REQUIRE(r.status == 200);
    Resume(holder);
  }
  std::chrono::steady_clock::time_point last_renewal() {
    std::lock_guard lock(mutex_);
    return last_renewal_;
  }

 private:
  static std::string ResourceVersionOf(const rapidjson::Value& lease) {
    if (!lease.IsObject() || !lease.HasMember("metadata")) return "";
    const auto& meta = lease["metadata"];
    return meta.IsObject() && meta.HasMember("resourceVersion") &&
                   meta["resourceVersion"].IsString()
               ? meta["resourceVersion"].GetString()
               : "";
  }
  static std::string Now() { return capext::kube::Rfc3339Millis(std::chrono::system_clock::now()); }
  static std::string Body(const std::string& holder, int transitions, const std::string& rv) {
    return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-scheduler",)"
           R"("namespace":"kube-system")" +
           (rv.empty() ? "" : R"(,"resourceVersion":")" + rv + "\"") +
           R"(},"spec":{"holderIdentity":")" + holder +
           R"(","leaseDurationSeconds":2,"acquireTime":")" + Now() + R"(","renewTime":")" + Now() +
           R"(","leaseTransitions":)" + std::to_string(transitions) + "}}";
  }
  rapidjson::Document Get() {
    rapidjson::Document doc;
    doc.Parse(client_->Get(std::string(kSchedulerLeasePath) + "/kube-scheduler").body.c_str());
    return doc;
  }
  void Resume(const std::string& holder) {
    {
      std::lock_guard lock(mutex_);
      last_renewal_ = std::chrono::steady_clock::now();
    }
    thread_ = std::jthread([this, holder](std::stop_token stop) {
      while (!stop.stop_requested()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        if (stop.stop_requested()) return;
        rapidjson::Document lease = Get();
        if (!lease.IsObject() || !lease.HasMember("spec")) continue;
        const int transitions = lease["spec"]["leaseTransitions"].GetInt();
        RestResponse r = client_->Put(std::string(kSchedulerLeasePath) + "/kube-scheduler",
                                      Body(holder, transitions, ResourceVersionOf(lease)));
        if (r.status == 200) {
          std::lock_guard lock(mutex_);
          last_renewal_ = std::chrono::steady_clock::now();
        }
      }
    });
  }

  std::unique_ptr<RestClient> client_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_renewal_;
  std::jthread thread_;
};

}  // namespace capext::kube::testing
