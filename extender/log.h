// Structured one-line logs (logfmt or JSON) on stderr: `ts=... level=info msg="..." key=value`.
// Thread-safety: Log() is safe from any thread; lines never interleave.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace capext {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// Configures the process-wide logger. format: "logfmt" | "json"; level: debug|info|warn|error.
void ConfigureLog(std::string_view format, std::string_view level);
bool LogEnabled(LogLevel level);

using LogField = std::pair<std::string_view, std::string>;
void Log(LogLevel level, std::string_view message, std::initializer_list<LogField> fields = {});

}  // namespace capext
