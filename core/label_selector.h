// LabelSelector (metav1.LabelSelector) and its matching rules.
// Thread-safety: a value type.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace capext {

using Labels = std::map<std::string, std::string, std::less<>>;

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
};

struct LabelSelector {
  Labels match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;

  // True when the selector has no terms at all. Kubernetes' PDB check treats an empty
  // selector as matching nothing (see PodDisruptionBudget).
  bool Empty() const { return match_labels.empty() && match_expressions.empty(); }
  // Every matchLabels pair and every expression must hold. An unknown operator matches nothing.
  bool Matches(const Labels& labels) const;
};

}  // namespace capext
