// Log lines of the API-server client (connection trouble, relists, token reloads, insecure TLS).
// They go to the process logger (extender/log.h) with component=kube, unless a sink is set
// (tests capture them that way).
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <functional>
#include <string>

namespace capext::kube {

enum class LogSeverity { kInfo, kWarning, kError };

using LogSink = std::function<void(LogSeverity, const std::string& message)>;

// Replaces the destination of every later log line. An empty sink restores the process logger.
void SetLogSink(LogSink sink);

void Log(LogSeverity severity, const std::string& message);

}  // namespace capext::kube
