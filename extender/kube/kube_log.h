// Log lines of the API-server client (connection trouble, relists, token reloads, insecure TLS).
// Live mode routes them into the process logger (extender/log.h); the default writes the same
// logfmt shape (ts=... level=... component=kube msg="...") to stderr.
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <functional>
#include <string>

namespace capext::kube {

enum class LogSeverity { kInfo, kWarning, kError };

using LogSink = std::function<void(LogSeverity, const std::string& message)>;

// Replaces the destination of every later log line. An empty sink restores the stderr default.
void SetLogSink(LogSink sink);

void Log(LogSeverity severity, const std::string& message);

}  // namespace capext::kube
