// Filling the SchedulerCache: from a snapshot file or the bundled example (embedded mode).
// Live mode (API server) lives in extender/kube/ and live_source.h.
#pragma once

#include <string>

#include "extender/scheduler_cache.h"

namespace capext {

// Loads `path` (or the bundled example when empty) into the cache and marks it ready. Returns the
// source name for logs, or an error naming the file, document and object.
Status LoadEmbeddedCluster(const std::string& path, SchedulerCache* cache, std::string* source);

}  // namespace capext
