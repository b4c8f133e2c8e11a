// Durations as config files and flags spell them (Go's time.ParseDuration, in milliseconds).
// Thread-safety: stateless.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/status.h"

namespace capext {

// One or more <number><unit> with units h, m, s, ms ("500ms", "60s", "2m", "1h30m", "1.5s");
// "0" alone is zero. Must come to a whole, non-negative number of milliseconds. On failure
// returns Invalid with a reason quoting the text; *out is unchanged.
Status ParseDuration(std::string_view text, std::chrono::milliseconds* out);

// The shortest exact spelling: "1h", "10m", "4s", "500ms", "0s".
std::string FormatDuration(std::chrono::milliseconds duration);

}  // namespace capext
