// "Did you mean ...?" for misspelt config keys, flags and manifest fields.
// Thread-safety: stateless.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace capext {

// The candidate `name` most likely misspells, or "" when none is close enough to be a typo:
// equal after ignoring case, '-' and '_' (so "listen-address" suggests "listenAddress"); one
// the other cut short, at least 3 characters ("minimum" suggests "min"); or within
// max(1, length/4) single-character edits (a swap of neighbours is one edit).
std::string SuggestName(std::string_view name, const std::vector<std::string>& candidates);

// " (did you mean \"x\"?)" for SuggestName's answer, or "" when there is none.
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace capext
