// Scenario files (docs/scenarios.md): a cluster, a list of events (create a pod,
// delete a pod, advance the clock) and expectations checked after given events (bound, evicted,
// untouched, pending with a reason). RunScenario plays them through the simulator's one driver
// (simulation.h: each event a script step, every node examined, a reclaim controller never
// behind) and reports one line per expectation.
// Thread-safety: none.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "config/snapshot.h"
#include "core/cluster_state.h"
#include "core/status.h"
#include "policies/node_scorers.h"
#include "policies/victim_orders.h"

namespace capext {

// A coscheduling PodGroup object (scheduling.x-k8s.io/v1alpha1; docs/workloads.md).
struct ScenarioPodGroup {
  std::string ns, name;
  int32_t min_member = 0;
  int64_t schedule_timeout_ms = 0;  // spec.scheduleTimeoutSeconds; 0 = unset
};

struct ScenarioEvent {
  enum class Kind { kCreate, kCreateGroup, kCreatePodGroup, kDelete, kAdvance };
  Kind kind = Kind::kCreate;
  ScenarioPodGroup pod_group;  // kCreatePodGroup
  std::vector<Pod> pods;       // kCreate: one pod; kCreateGroup: <group>-0 .. <group>-(replicas-1)
  std::string target;      // kDelete: "namespace/name"; kCreateGroup: the group "namespace/name"
  int64_t advance_ms = 0;  // kAdvance
};

struct ScenarioExpectation {
  std::map<std::string, std::string> bound;    // pod key -> node ("*": any node)
  std::vector<std::string> evicted;            // pod keys evicted by this event
  std::vector<std::string> untouched;          // pod keys neither evicted nor moved by it
  std::map<std::string, std::string> pending;  // pod key -> text the reason must contain
  std::map<std::string, std::string> gated;    // pod key -> text the gate's reason must contain
};

// How pods reach the scheduler
// (docs/scenarios.md#pod-groups-gates-and-controllers-gang-and-elastic-workloads).
enum class ScenarioAdmission { kFilter, kGate };

struct Scenario {
  std::string name;
  std::string description;
  Snapshot cluster;
  std::vector<ScenarioPodGroup> pod_groups;  // the cluster's PodGroups
  std::vector<ScenarioEvent> events;
  std::map<int, ScenarioExpectation> expect;  // by event index
  // The file's `quotaSemantics:` (capacity-extender when absent); `capacity-sim scenario
  // --quota-semantics` sets it for files without the key.
  std::string quota_semantics = "capacity-extender";
  bool quota_semantics_from_file = false;
  std::string scoring{NodeScoringPolicies().default_entry().name};
  std::string victim_order{VictimOrderPolicies().default_entry().name};  // victimOrder:
  // The file's `deviceClassMappings:` (docs/devices.md#4-the-quota-resource-of-a-deviceclass), as
  // the extender config has them.
  std::vector<DeviceClassMapping> device_class_mappings;
  ScenarioAdmission admission = ScenarioAdmission::kFilter;
  // Controllers re-create their evicted pods as <name>-r1, -r2, ... (docs/scenarios.md).
  bool recreate_evicted = false;
};

Status LoadScenarioFile(const std::string& path, Scenario* out);
// The same from text; `source` names it in errors.
Status ParseScenarioText(const std::string& text, const std::string& source, Scenario* out);

// Parses "30s", "2m", "1h30m", "500ms" into milliseconds.
bool ParseDurationMs(const std::string& text, int64_t* out_ms);

struct ScenarioReport {
  int passed = 0;
  int failed = 0;
  // Of the whole run (SimulationResult): every eviction, and gate mode's plans for gated gangs,
  // their victims and the victims of plans whose hold ended with no member admitted.
  int64_t evictions = 0;
  int64_t gang_plans = 0;
  int64_t gang_plan_victims = 0;
  int64_t wasted_evictions = 0;
};

// Called after each event has settled, with the event's index and the state (property tests).
using ScenarioProbe = std::function<void(std::size_t event, const ClusterState& state)>;

// Runs the scenario, writing "PASS|FAIL <name> event <i>: <details>" lines to `out`.
ScenarioReport RunScenario(const Scenario& scenario, std::ostream& out,
                           const ScenarioProbe& probe = {});

}  // namespace capext
