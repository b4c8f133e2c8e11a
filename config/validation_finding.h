// ValidationFinding: one problem (or remark) found while validating a manifest, a config file or
// the serve flags: the one diagnostic type of `capacity-extender validate`, the admission webhook
// and `serve`'s config checks. A check fills what it knows (the severity, the field, the message,
// often the line); whoever places it adds the file and the object (validate's report), or uses
// only the field and message (the webhook's denial, serve's error lines).
// Thread-safety: a value type.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace capext {

// kError makes validate exit 1, the webhook deny and serve refuse to start; kWarning is reported
// but allowed (the webhook returns it in response.warnings); kNote is shown only with
// validate --verbose.
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
  ValidationFinding() = default;
  ValidationFinding(Severity severity, int line, std::string field, std::string message,
                    std::string file = "", std::string object = "")
      : severity(severity),
        line(line),
        field(std::move(field)),
        message(std::move(message)),
        file(std::move(file)),
        object(std::move(object)) {}

  Severity severity = Severity::kError;
  int line = 0;         // 1-based line in `file`; 0 = unknown, or the file as a whole
  std::string field;    // the field path ("spec.min.cpu"), config key ("port") or flag ("--port");
                        // "" for the object or file as a whole
  std::string message;  // without the field: "quantity \"abc\": ..."
  std::string file;     // "" when not from a file (flags, the webhook's object)
  std::string object;   // "ElasticQuota eq1/eq1", "extender config"; "" for the file
};

}  // namespace capext
