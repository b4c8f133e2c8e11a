// Scenario files (docs/scenarios.md): a cluster, a list of events (create a pod,
// delete a pod, advance the clock) and expectations checked after given events (bound, evicted,
// untouched, pending with a reason). RunScenario plays them through the simulator's one driver
// (simulation.h: each event a script step, every node examined, a reclaim controller never
// behind) and reports one line per expectation.
// Thread-safety: none.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "config/snapshot.h"
#include "core/status.h"

namespace capext {

struct ScenarioEvent {
  enum class Kind { kCreate, kDelete, kAdvance };
  Kind kind = Kind::kCreate;
  Pod pod;                 // kCreate
  std::string target;      // kDelete: "namespace/name"
  int64_t advance_ms = 0;  // kAdvance
};

struct ScenarioExpectation {
  std::map<std::string, std::string> bound;    // pod key -> node
  std::vector<std::string> evicted;            // pod keys evicted by this event
  std::vector<std::string> untouched;          // pod keys neither evicted nor moved by it
  std::map<std::string, std::string> pending;  // pod key -> text the reason must contain
};

struct Scenario {
  std::string name;
  std::string description;
  Snapshot cluster;
  std::vector<ScenarioEvent> events;
  std::map<int, ScenarioExpectation> expect;  // by event index
  // The file's `quotaSemantics:` (capacity-extender when absent); `capacity-sim scenario
  // --quota-semantics` sets it for files without the key.
  std::string quota_semantics = "capacity-extender";
  bool quota_semantics_from_file = false;
  std::string scoring = "least-allocated";
};

Status LoadScenarioFile(const std::string& path, Scenario* out);

// Parses "30s", "2m", "1h30m", "500ms" into milliseconds.
bool ParseDurationMs(const std::string& text, int64_t* out_ms);

struct ScenarioReport {
  int passed = 0;
  int failed = 0;
};

// Runs the scenario, writing "PASS|FAIL <name> event <i>: <details>" lines to `out`.
ScenarioReport RunScenario(const Scenario& scenario, std::ostream& out);

}  // namespace capext
