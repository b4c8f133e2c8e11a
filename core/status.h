// Status: the result of an operation at a module boundary. The default is success; an error
// carries a human-readable message meant to reach the user unchanged.
// Thread-safety: a value type; distinct objects may be used from distinct threads.
#pragma once

#include <string>
#include <utility>

namespace capext {

class Status {
 public:
  Status() = default;  // success
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "<context>: <message>". REQUIRES: !ok().
  Status WithContext(const std::string& context) const { return Status(context + ": " + message_); }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

}  // namespace capext
