// ValidateManifests: reads every input (manifest_reader.cpp), then runs the checks that span
// several objects and places each finding at the file and line of the quota it concerns.
#include "config/quota_manifest_validator.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/manifest_cluster_checks.h"
#include "config/quota_hierarchy_check.h"
#include "config/quota_set_checks.h"
#include "config/snapshot.h"

namespace capext {
namespace {

bool SameDefinition(const ElasticQuota& a, const ElasticQuota& b) {
  return a.min == b.min && a.max == b.max && a.parent == b.parent;
}

std::string Location(const LocatedQuota& q) {
  return fmt::format("{}:{}", q.file, q.checked.line);
}

class SetChecker {
 public:
  SetChecker(const std::string& snapshot_file, ValidateReport* report)
      : snapshot_file_(snapshot_file), report_(report) {}

  // The set the checks see: the snapshot's quotas that the inputs do not redefine, then each
  // input quota once (a repeated definition is reported). The cluster's come first because they
  // exist already: a conflict is the newcomer's, and is reported on it.
  void Collect(const std::vector<LocatedQuota>& inputs, const std::vector<ElasticQuota>& cluster) {
    std::set<std::string> input_keys;
    for (const auto& located : inputs) {
      if (located.checked.has_name) input_keys.insert(located.checked.quota.Key());
    }
    for (const auto& q : cluster) {
      if (!input_keys.contains(q.Key())) members_.push_back({q, nullptr});
    }
    std::map<std::string, const LocatedQuota*> by_key;
    for (const auto& located : inputs) {
      if (!located.checked.has_name) continue;
      const ElasticQuota& q = located.checked.quota;
      auto [it, inserted] = by_key.emplace(q.Key(), &located);
      if (inserted) {
        members_.push_back({q, &located});
        continue;
      }
      const bool same = SameDefinition(q, it->second->checked.quota);
      report_->entries.push_back(
          {same ? Severity::kNote : Severity::kWarning, located.checked.line, "",
           fmt::format("defined again (first at {}){}", Location(*it->second),
                       same ? ", identically"
                            : " with a different spec or parent: the one applied last wins"),
           located.file, DescribeQuota(q)});
    }
  }

  void Run(bool has_snapshot) {
    std::vector<ElasticQuota> quotas;
    for (const auto& m : members_)
      quotas.push_back(m.quota);
    for (auto& p : CheckOneQuotaPerNamespace(quotas))
      Add(p);
    const char* scope =
        has_snapshot ? "in the given files or the cluster snapshot" : "in the given files";
    for (auto& p : CheckQuotaHierarchy(quotas, scope))
      Add(p);
  }

  const std::vector<QuotaSetMember>& members() const { return members_; }

 private:
  // Places the problem's finding on its quota: the file and line of its field, or the snapshot.
  void Add(QuotaSetProblem& p) {
    const QuotaSetMember& m = members_[p.quota];
    ValidationFinding f = std::move(p.finding);
    if (p.other) {
      const LocatedQuota* other = members_[*p.other].located;
      f.message += other != nullptr ? fmt::format(" (see {})", Location(*other))
                                    : std::string(" (in the cluster snapshot)");
    }
    if (m.located != nullptr) {
      f.line = m.located->checked.LineOf(f.field);
      f.file = m.located->file;
      f.object = DescribeQuota(m.quota);
    } else {
      f.line = 0;
      f.file = snapshot_file_;
      f.object = DescribeQuota(m.quota) + " (cluster)";
    }
    report_->entries.push_back(std::move(f));
  }

  const std::string& snapshot_file_;
  ValidateReport* report_;
  std::vector<QuotaSetMember> members_;
};

}  // namespace

ValidateReport ValidateManifests(const ValidateOptions& options) {
  ManifestSet set;
  for (const auto& file : ExpandManifestPaths(options.paths, &set)) {
    ReadManifestFile(file, /*force_config=*/false, &set);
  }
  for (const auto& file : options.config_paths)
    ReadManifestFile(file, /*force_config=*/true, &set);

  Snapshot snapshot;
  const bool has_snapshot = !options.cluster_snapshot.empty();
  if (has_snapshot) {
    if (Status s = LoadSnapshotFile(options.cluster_snapshot, {}, &snapshot); !s.ok()) {
      set.report.entries.push_back({Severity::kError, 0, "", "cluster snapshot: " + s.message(),
                                    options.cluster_snapshot, ""});
      set.report.unreadable = true;
    }
  }

  // docs/devices.md#4-the-quota-resource-of-a-deviceclass: a mapping that names a DeviceClass none
  // of the inputs defines.
  std::set<std::string> classes(set.device_classes.begin(), set.device_classes.end());
  for (const auto& c : snapshot.device_classes)
    classes.insert(c.name);
  for (const auto& m : set.mapped_classes) {
    if (classes.contains(m.name)) continue;
    set.report.entries.push_back(
        {Severity::kWarning, m.line, "deviceClassMappings",
         fmt::format("DeviceClass {} is not among the DeviceClasses given ({}): check the name "
                     "(claims of an unknown class leave their pods pending)",
                     m.name,
                     classes.empty() ? "none" : fmt::format("{}", fmt::join(classes, ", "))),
         m.file, "extender config"});
  }

  SetChecker checker(options.cluster_snapshot, &set.report);
  checker.Collect(set.quotas, snapshot.quotas);
  checker.Run(has_snapshot);

  ClusterInputs cluster;
  cluster.nodes = set.nodes;
  cluster.nodes.insert(cluster.nodes.end(), snapshot.nodes.begin(), snapshot.nodes.end());
  cluster.pods = set.pods;
  for (const auto& pod : snapshot.pods)
    cluster.pods.push_back({pod, options.cluster_snapshot, 0});
  cluster.from_snapshot = has_snapshot;
  cluster.nodes_file = has_snapshot ? options.cluster_snapshot : set.first_node_file;
  CheckQuotasAgainstCluster(checker.members(), cluster, &set.report);

  set.report.Sort();
  return std::move(set.report);
}

}  // namespace capext
