// The output of `capacity-extender validate`: findings placed by file and line, printed like a
// compiler's (`file:line: error: ElasticQuota eq1/eq1: spec.min.cpu: ...`) or as JSON for
// machines (an array of {file, line, severity, object, field, message}).
// Thread-safety: a value type; printing is stateless.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "config/validation_finding.h"

namespace capext {

struct ValidateReport {
  std::vector<ValidationFinding> entries;  // each with its file (and its object, if any)
  bool unreadable = false;                 // some input could not be read or is not YAML/JSON
  int files = 0;                           // files read
  int quotas = 0;                          // ElasticQuota objects checked
  int config_files = 0;                    // extender config documents checked

  int Count(Severity severity) const;
  // 2 when an input was unreadable, else 1 when there is an error, else 0.
  int ExitCode() const;
  // Orders entries by file, then line (stable: same-line findings keep their order).
  void Sort();
};

// One line per entry (notes only when `verbose`), then a summary line.
void PrintReportText(const ValidateReport& report, bool verbose, std::ostream& out);
// A JSON array of entries (notes only when `verbose`), nothing else.
void PrintReportJson(const ValidateReport& report, bool verbose, std::ostream& out);
// "file:line: severity: object: field: message", leaving out empty parts.
std::string FormatReportEntry(const ValidationFinding& entry);

}  // namespace capext
