// `capacity-extender validate FILE|DIR...`: lints ElasticQuota manifests and extender config
// files before they are applied, with the checks the admission webhook runs plus those that
// need the whole set of files (or a cluster snapshot).
//
// Per object (quota_object_check.h): apiVersion/kind, strict fields, names, quantities, min <=
// max, the reference's traps as warnings. Per config document: every key known and well typed,
// policy names and cross-field rules (extender_config.h).
// Across the inputs: one ElasticQuota per namespace; the hierarchy (quota_hierarchy_check.h:
// parents exist in the same API group, no cycles, children's mins fit in their parent's min;
// a child's max above its parent's max is a warning); the same object defined twice.
// With nodes (in the inputs or --cluster SNAPSHOT): a min > 0 for a resource no node has
// (warning); the sum of mins above the total allocatable (an error with --cluster, else a
// warning). With pods (inputs or snapshot): a resource pods of quota namespaces request that no
// quota's min names (warning: what each semantics does with it).
// Other Kubernetes objects are skipped (manifest_reader.h), so `validate deploy/` passes.
//
// Exit codes: 0 no errors (warnings allowed), 1 errors, 2 an input unreadable or not YAML/JSON
// (also a usage error).
// Thread-safety: stateless functions.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "config/validation_report.h"

namespace capext {

struct ValidateOptions {
  std::vector<std::string> paths;         // files, or directories of *.yaml/*.yml/*.json
  std::vector<std::string> config_paths;  // always checked as extender config files
  std::string cluster_snapshot;           // "" = none
};

ValidateReport ValidateManifests(const ValidateOptions& options);

// The whole subcommand: `args` are the arguments after "validate". Findings and the summary go
// to `out` (JSON only with -o json); usage errors to `err`. Returns the exit code.
int RunValidateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

std::string ValidateCommandHelp();

}  // namespace capext
