#include "extender/wire/verb_results.h"

#include "extender/wire/json_out.h"

namespace capext {

std::string EncodeHostPriorityList(const std::vector<std::string_view>& names,
                                   const std::vector<int>& scores) {
  JsonOut w;
  w.Reserve(32 * names.size() + 2);
  w.StartArray();
  for (std::size_t i = 0; i < names.size(); ++i) {
    w.StartObject();
    w.Key("Host");
    w.Text(names[i]);
    w.Key("Score");
    w.Int(scores[i]);
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

std::string EncodePreemptionResult(const std::vector<NodeVictims>& candidates) {
  JsonOut w;
  w.StartObject();
  w.Key("NodeNameToMetaVictims");
  w.StartObject();
  for (const NodeVictims& c : candidates) {
    w.KeyText(c.node);
    w.StartObject();
    w.Key("Pods");
    w.StartArray();
    for (const NormalizedPod* victim : c.victims) {
      w.StartObject();
      w.Key("UID");
      w.Text(victim->uid);
      w.EndObject();
    }
    w.EndArray();
    w.Key("NumPDBViolations");
    w.Int(c.pdb_violations);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return w.Take();
}

std::string EncodeBindingResult(std::string_view error) {
  JsonOut w;
  w.StartObject();
  w.Key("Error");
  w.Text(error);
  w.EndObject();
  return w.Take();
}

}  // namespace capext
