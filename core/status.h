// Status: the one result vocabulary of the project. A closed set of codes, each saying what the
// caller does next, plus a human-readable reason (with its numbers) meant to reach the user
// unchanged. Code compares codes, never reason text. The default is success.
//
//   kOk                            success.
//   kUnschedulable                 the pod does not fit now; something may change that (a pod
//                                  leaves, a reclaim frees room): kube-scheduler's FailedNodes.
//   kUnschedulableAndUnresolvable  the pod can never fit here, whatever is evicted (a request
//                                  above the quota's max or the node's allocatable, a taint):
//                                  FailedAndUnresolvableNodes.
//   kInvalid                       malformed input or configuration (HTTP 400, validate errors).
//   kNotFound                      the object is unknown (a pod, a node, a file).
//   kConflict                      the operation collides with another one (a bind in flight,
//                                  a pod already bound elsewhere, HTTP 409).
//   kUnavailable                   a dependency cannot answer now (API server down, cache not
//                                  synced); retrying later may succeed.
//
// An ok Status allocates nothing (an empty std::string lives in its small buffer), so returning
// one on a hot path costs a few stores. Functions that can fail return a Status, or a
// StatusOr<T> (below) when success produces a value; exceptions are caught only where a
// third-party library throws them and become a Status there (docs/architecture.md#errors).
// Thread-safety: a value type; distinct objects may be used from distinct threads.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace capext {

enum class StatusCode : uint8_t {
  kOk,
  kUnschedulable,
  kUnschedulableAndUnresolvable,
  kInvalid,
  kNotFound,
  kConflict,
  kUnavailable,
};

// "ok", "unschedulable", "unschedulable-and-unresolvable", "invalid", "not-found", "conflict",
// "unavailable": the code as logs, metrics labels and JSON answers spell it.
std::string_view StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;  // success
  static Status Ok() { return Status(); }
  static Status Unschedulable(std::string reason) {
    return Status(StatusCode::kUnschedulable, std::move(reason));
  }
  static Status Unresolvable(std::string reason) {
    return Status(StatusCode::kUnschedulableAndUnresolvable, std::move(reason));
  }
  static Status Invalid(std::string message) {
    return Status(StatusCode::kInvalid, std::move(message));
  }
  // Same as Invalid: the general "this input or operation is wrong" error.
  static Status Error(std::string message) { return Invalid(std::move(message)); }
  static Status NotFound(std::string message) {
    return Status(StatusCode::kNotFound, std::move(message));
  }
  static Status Conflict(std::string message) {
    return Status(StatusCode::kConflict, std::move(message));
  }
  static Status Unavailable(std::string message) {
    return Status(StatusCode::kUnavailable, std::move(message));
  }
  static Status WithCode(StatusCode code, std::string message) {
    return code == StatusCode::kOk ? Status() : Status(code, std::move(message));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // Unschedulable or unschedulable-and-unresolvable: a scheduling verdict, not an error.
  bool IsUnschedulable() const {
    return code_ == StatusCode::kUnschedulable ||
           code_ == StatusCode::kUnschedulableAndUnresolvable;
  }
  bool IsUnresolvable() const { return code_ == StatusCode::kUnschedulableAndUnresolvable; }
  const std::string& message() const { return message_; }

  // Returns a copy with the same code whose message is "<context>: <message>". REQUIRES: !ok().
  Status WithContext(const std::string& context) const {
    return Status(code_, context + ": " + message_);
  }

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// StatusOr<T>: the result of a function that produces a value and can fail: either the value
// (status() is ok) or a non-ok Status saying why there is none. `return value;` and
// `return Status::Invalid(...);` both convert. Like Status, it allocates nothing of its own on
// the ok path.
// Thread-safety: a value type.
template <class T>
class StatusOr {
 public:
  StatusOr(const T& value) : value_(value) {}        // NOLINT: implicit, for `return value;`
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT: likewise
  // REQUIRES: !status.ok() (an ok result has a value).
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: for `return Status::...;`
    assert(!status_.ok());
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // REQUIRES: ok().
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

inline std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kUnschedulable:
      return "unschedulable";
    case StatusCode::kUnschedulableAndUnresolvable:
      return "unschedulable-and-unresolvable";
    case StatusCode::kInvalid:
      return "invalid";
    case StatusCode::kNotFound:
      return "not-found";
    case StatusCode::kConflict:
      return "conflict";
    case StatusCode::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

}  // namespace capext
