// The reading half of `capacity-extender validate`: files (or directories of *.yaml, *.yml,
// *.json) -> documents -> what each one is, with the checks of a single document run at once.
//  - kind ElasticQuota (or a near miss such as "ElasticQuotas"), or any kind in an ElasticQuota
//    API group other than PodGroup: CheckQuotaObject.
//  - Pod, Node: kept for the cluster checks (requests no quota's min names, allocatable).
//  - a mapping with neither apiVersion nor kind whose keys are extender config keys: the
//    extender config (ApplyExtenderConfigYaml + ValidateExtenderConfig). A mapping none of whose
//    keys is a config key, or with many that are not (another tool's file, e.g. a capacity-sim
//    sweep config), is skipped with a note; `validate --config FILE` forces config mode.
//  - `kind: List` (and typed lists such as ElasticQuotaList) and top-level JSON arrays: each item.
//  - every other Kubernetes object (Deployment, CRD, RBAC, Kustomization...): skipped, a note.
// A file named with another extension that does not parse as YAML mappings is skipped with a
// note (so `validate deploy/*` passes over a Dockerfile); for *.yaml/*.yml/*.json it is an error
// and makes the report unreadable (exit 2).
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <vector>

#include "config/quota_object_check.h"
#include "config/validation_report.h"
#include "core/node.h"
#include "core/pod.h"

namespace capext {

struct LocatedQuota {
  CheckedQuota checked;
  std::string file;
};

struct LocatedPod {
  Pod pod;
  std::string file;
  int line = 0;
};

// A DeviceClass named by a config file's deviceClassMappings
// (docs/devices.md#4-the-quota-resource-of-a-deviceclass).
struct MappedDeviceClass {
  std::string name;
  std::string file;
  int line = 0;
};

struct ManifestSet {
  std::vector<LocatedQuota> quotas;
  std::vector<MappedDeviceClass> mapped_classes;
  std::vector<std::string> device_classes;  // names of the DeviceClass objects read
  std::vector<LocatedPod> pods;
  std::vector<Node> nodes;
  std::string first_node_file;  // where input nodes came from, for cluster-wide findings
  ValidateReport report;        // the findings so far, and the counts
};

// The files named by `paths`: a file as is, a directory as its *.yaml/*.yml/*.json files,
// recursively, in name order. A path that does not exist is reported and marks the report
// unreadable.
std::vector<std::string> ExpandManifestPaths(const std::vector<std::string>& paths,
                                             ManifestSet* set);

// Reads one file into *set. `force_config`: every mapping document is an extender config.
void ReadManifestFile(const std::string& path, bool force_config, ManifestSet* set);

}  // namespace capext
