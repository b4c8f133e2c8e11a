#include "extender/embedded/cluster_source.h"

#include <fmt/format.h>

#include "config/snapshot.h"
#include "extender/bundled_example.h"
#include "extender/log.h"
#include "extender/quota_tree_log.h"

namespace capext {

Status LoadEmbeddedCluster(const std::string& path, SchedulerCache* cache, std::string* source) {
  Snapshot snapshot;
  Status s = path.empty() ? ParseSnapshot(kBundledExampleYaml, kBundledExampleName,
                                          cache->decode_options(), &snapshot)
                          : LoadSnapshotFile(path, cache->decode_options(), &snapshot);
  if (!s.ok()) return s;
  *source = path.empty() ? kBundledExampleName : path;
  for (const auto& note : snapshot.notes)
    Log(LogLevel::kInfo, "snapshot note", {{"note", note}});
  cache->Write([&](ClusterState& state) {
    ApplySnapshot(snapshot, &state);
    for (const auto& d : state.quota_set().duplicates()) {
      Log(LogLevel::kWarn, "second ElasticQuota in a namespace is ignored",
          {{"quota", d.Key()}, {"in_force", state.QuotaFor(d.ns)->Key()}});
    }
    QuotaTreeLog().Report(state.ledger().tree());
    return 0;
  });
  cache->set_ready(true);
  Log(LogLevel::kInfo, "cluster loaded",
      {{"source", *source},
       {"nodes", std::to_string(snapshot.nodes.size())},
       {"pods", std::to_string(snapshot.pods.size())},
       {"quotas", std::to_string(snapshot.quotas.size())}});
  return {};
}

}  // namespace capext
