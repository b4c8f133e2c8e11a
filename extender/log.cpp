#include "extender/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include <fmt/format.h>

namespace capext {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<bool> g_json{false};
std::mutex g_mutex;

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

std::string Quote(std::string_view v, bool json) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  (void)json;
  return out + "\"";
}

bool NeedsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20) return true;
  }
  return false;
}

}  // namespace

void ConfigureLog(std::string_view format, std::string_view level) {
  g_json = format == "json";
  LogLevel l = LogLevel::kInfo;
  if (level == "debug") l = LogLevel::kDebug;
  if (level == "warn") l = LogLevel::kWarn;
  if (level == "error") l = LogLevel::kError;
  g_level = static_cast<int>(l);
}

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= g_level.load();
}

void Log(LogLevel level, std::string_view message, std::initializer_list<LogField> fields) {
  if (!LogEnabled(level)) return;
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  const std::string ts =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
  const bool json = g_json.load();
  std::string line;
  if (json) {
    line = fmt::format("{{\"ts\":\"{}\",\"level\":\"{}\",\"msg\":{}", ts, LevelName(level),
                       Quote(message, true));
    for (const auto& [k, v] : fields)
      line += fmt::format(",\"{}\":{}", k, Quote(v, true));
    line += "}\n";
  } else {
    line = fmt::format("ts={} level={} msg={}", ts, LevelName(level), Quote(message, false));
    for (const auto& [k, v] : fields) {
      line += fmt::format(" {}={}", k, NeedsQuotes(v) ? Quote(v, false) : v);
    }
    line += '\n';
  }
  std::lock_guard lock(g_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace capext
