#include "extender/kube/kube_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <utility>

namespace capext::kube {
namespace {

std::mutex& SinkMutex() {
  static std::mutex mutex;
  return mutex;
}

LogSink& CurrentSink() {
  static LogSink sink;
  return sink;
}

const char* SeverityName(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kInfo:
      return "info";
    case LogSeverity::kWarning:
      return "warn";
    case LogSeverity::kError:
      return "error";
  }
  return "info";
}

// A logfmt quoted value.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

void SetLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(SinkMutex());
  CurrentSink() = std::move(sink);
}

void Log(LogSeverity severity, const std::string& message) {
  std::lock_guard<std::mutex> lock(SinkMutex());
  if (CurrentSink()) {
    CurrentSink()(severity, message);
    return;
  }
  // The same logfmt shape as the process logger (extender/log.h), which live mode installs as
  // the sink; this default serves programs and tests that install none.
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  std::fprintf(stderr, "ts=%s.%03dZ level=%s component=kube msg=%s\n", stamp,
               static_cast<int>(ms % 1000), SeverityName(severity), Quoted(message).c_str());
}

}  // namespace capext::kube
