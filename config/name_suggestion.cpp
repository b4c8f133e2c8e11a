#include "config/name_suggestion.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace capext {
namespace {

std::string Folded(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

bool SameLetter(char a, char b) {
  return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
}

// Edits (insert, delete, substitute, swap two neighbours) from a to b, ignoring case: the
// optimal-string-alignment distance, so "prot" is one edit from "port".
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = SameLetter(a[i - 1], b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && SameLetter(a[i - 1], b[j - 2]) && SameLetter(a[i - 2], b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// "minimum" for "min", "listen" for "listenAddress": one is the other cut short.
bool IsPrefixEither(const std::string& a, const std::string& b) {
  const std::size_t n = std::min(a.size(), b.size());
  return n >= 3 && a.compare(0, n, b, 0, n) == 0;
}

}  // namespace

std::string SuggestName(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string folded = Folded(name);
  for (const auto& c : candidates) {
    if (Folded(c) == folded) return c;
  }
  for (const auto& c : candidates) {
    if (IsPrefixEither(Folded(c), folded)) return c;
  }
  const std::size_t limit = std::max<std::size_t>(1, name.size() / 4);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t d = EditDistance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string suggestion = SuggestName(name, candidates);
  return suggestion.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", suggestion);
}

}  // namespace capext
