#include "config/validation_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace capext {

int ValidateReport::Count(Severity severity) const {
  return static_cast<int>(
      std::count_if(entries.begin(), entries.end(),
                    [&](const ValidationFinding& e) { return e.severity == severity; }));
}

int ValidateReport::ExitCode() const {
  if (unreadable) return 2;
  return Count(Severity::kError) > 0 ? 1 : 0;
}

void ValidateReport::Sort() {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const ValidationFinding& a, const ValidationFinding& b) {
                     if (a.file != b.file) return a.file < b.file;
                     return a.line < b.line;
                   });
}

std::string FormatReportEntry(const ValidationFinding& e) {
  std::string out = e.file;
  if (e.line > 0) out += fmt::format(":{}", e.line);
  out += fmt::format(": {}: ", SeverityName(e.severity));
  if (!e.object.empty()) out += e.object + ": ";
  if (!e.field.empty()) out += e.field + ": ";
  return out + e.message;
}

void PrintReportText(const ValidateReport& report, bool verbose, std::ostream& out) {
  for (const auto& e : report.entries) {
    if (e.severity == Severity::kNote && !verbose) continue;
    out << FormatReportEntry(e) << '\n';
  }
  const int errors = report.Count(Severity::kError);
  const int warnings = report.Count(Severity::kWarning);
  out << fmt::format(
      "{} file{}, {} ElasticQuota{}, {} extender config{}: {} error{}, {} warning{}\n",
      report.files, report.files == 1 ? "" : "s", report.quotas, report.quotas == 1 ? "" : "s",
      report.config_files, report.config_files == 1 ? "" : "s", errors, errors == 1 ? "" : "s",
      warnings, warnings == 1 ? "" : "s");
}

void PrintReportJson(const ValidateReport& report, bool verbose, std::ostream& out) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  for (const auto& e : report.entries) {
    if (e.severity == Severity::kNote && !verbose) continue;
    w.StartObject();
    w.Key("file");
    w.String(e.file);
    w.Key("line");
    w.Int(e.line);
    w.Key("severity");
    w.String(std::string(SeverityName(e.severity)));
    w.Key("object");
    w.String(e.object);
    w.Key("field");
    w.String(e.field);
    w.Key("message");
    w.String(e.message);
    w.EndObject();
  }
  w.EndArray();
  out << buffer.GetString() << '\n';
}

}  // namespace capext
