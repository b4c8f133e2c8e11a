#include "extender/quota_tree_log.h"

#include "extender/log.h"

namespace capext {

void QuotaTreeLog::Report(const QuotaTree& tree) {
  std::set<std::string> now;
  for (const auto& problem : tree.problems()) {
    std::string key = problem.quota + '\x1f' + problem.why;
    if (!said_.count(key)) {
      Log(LogLevel::kWarn, "ElasticQuota parent ignored",
          {{"quota", problem.quota}, {"reason", problem.why}});
    }
    now.insert(std::move(key));
  }
  said_ = std::move(now);
}

}  // namespace capext
