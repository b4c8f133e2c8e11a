#include "extender/kube/kube_log.h"

#include <mutex>
#include <utility>

#include "extender/log.h"

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
  // The process logger (logfmt or JSON, its level filter), marked as the client's lines.
  const LogLevel level = severity == LogSeverity::kInfo      ? LogLevel::kInfo
                         : severity == LogSeverity::kWarning ? LogLevel::kWarn
                                                             : LogLevel::kError;
  capext::Log(level, message, {{"component", "kube"}});
}

}  // namespace capext::kube
