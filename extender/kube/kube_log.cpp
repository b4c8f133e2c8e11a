#include "extender/kube/kube_log.h"

#include <cstdio>
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
      return "WARNING";
    case LogSeverity::kError:
      return "ERROR";
  }
  return "?";
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
  std::fprintf(stderr, "kube %s: %s\n", SeverityName(severity), message.c_str());
}

}  // namespace capext::kube
