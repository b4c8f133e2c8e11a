// The one table of `serve` settings: flag <-> config-file key <-> ExtenderConfig field <-> help
// text. The flag parser, the config-file loader and the --help text all read it, so they can
// never disagree. Defaults are not written here: they are the field initializers of
// ExtenderConfig, printed with FormatConfigField.
// Thread-safety: the table is immutable after first use; the functions are stateless.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/duration_text.h"
#include "config/extender_config.h"

namespace capext {

// Which ExtenderConfig member a setting writes; the member's type decides how text is read:
// string as is; int and double as numbers; int64_t as a byte size (a quantity "16Mi" or an
// integer); bool as true/false; milliseconds as a duration ("500ms", "60s", "2m", "1h30m").
using ConfigMember =
    std::variant<std::string ExtenderConfig::*, int ExtenderConfig::*, int64_t ExtenderConfig::*,
                 double ExtenderConfig::*, bool ExtenderConfig::*,
                 std::chrono::milliseconds ExtenderConfig::*>;

struct ConfigField {
  const char* flag;        // without the leading "--": "listen-address"
  const char* key;         // the config-file key: "listenAddress"
  const char* value_name;  // for --help: "ADDR"; "" for booleans
  const char* section;     // --help groups fields under this heading
  const char* help;
  ConfigMember member;
};

// Every setting, in --help order.
const std::vector<ConfigField>& ExtenderConfigFields();
// nullptr when unknown.
const ConfigField* FindConfigFieldByKey(std::string_view key);
const ConfigField* FindConfigFieldByFlag(std::string_view flag);
std::vector<std::string> ExtenderConfigKeys();
std::vector<std::string> ExtenderConfigFlags();  // without "--"

bool IsBoolField(const ConfigField& field);

// Where a value's text came from: YAML distinguishes a quoted scalar ("8888", always a string)
// from a plain one (8888, a number), as the Kubernetes YAML decoder does; a flag value is
// untyped text.
enum class ValueSource { kFlag, kYamlPlain, kYamlQuoted };

// Reads `text` into the field of *config. On failure leaves *config unchanged and returns an
// Invalid status whose message quotes the text ("expected an integer, got \"abc\"").
Status SetConfigField(const ConfigField& field, std::string_view text, ValueSource source,
                      ExtenderConfig* config);

// The field's value as the config file would spell it ("4s", "16Mi", "true", "127.0.0.1").
std::string FormatConfigField(const ConfigField& field, const ExtenderConfig& config);

}  // namespace capext
