// Node: what scheduling decisions need to know about a v1 Node.
// Thread-safety: a value type.
#pragma once

#include <string>
#include <vector>

#include "core/label_selector.h"
#include "core/resource_list.h"

namespace capext {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
};

struct Node {
  std::string name;
  ResourceList allocatable;  // status.allocatable in decision units; "pods" = max pod count
  Labels labels;
  std::vector<Taint> taints;
  bool unschedulable = false;  // spec.unschedulable
};

}  // namespace capext
