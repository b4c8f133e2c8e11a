// QuotaTreeLog: says each problem of the quota tree once (docs/quota-hierarchy.md: a quota whose
// parent is missing, in a cycle or in the other API group is treated as a root, "and this is
// logged once"). A problem that goes away and comes back is said again.
// Thread-safety: none; the caller serialises Report (it runs under the cache's write lock).
#pragma once

#include <set>
#include <string>

#include "core/quota_tree.h"

namespace capext {

class QuotaTreeLog {
 public:
  void Report(const QuotaTree& tree);

 private:
  std::set<std::string> said_;  // "quota\x1fwhy"
};

}  // namespace capext
