// One problem (or remark) found while validating a manifest or a config file: the common
// currency of `capacity-extender validate` and the admission webhook.
// Thread-safety: a value type.
#pragma once

#include <string>
#include <string_view>

namespace capext {

// kError makes validate exit 1 and the webhook deny; kWarning is reported but allowed (the
// webhook returns it in response.warnings); kNote is shown only with validate --verbose.
enum class Severity { kError, kWarning, kNote };

inline std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

struct ValidationFinding {
  Severity severity = Severity::kError;
  int line = 0;         // 1-based line in the object's file; 0 = unknown
  std::string field;    // the field path, "spec.min.cpu"; "" for the object as a whole
  std::string message;  // without the field: "quantity \"abc\": ..."
};

}  // namespace capext
