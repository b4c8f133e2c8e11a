// POST /preempt (capacity-semantics 3): per proposed node, the victims of 1.2 computed on our
// state of that node (any pod bound there may be named); nodes where 1.2 finds none are dropped;
// always answered as NodeNameToMetaVictims. A pod our reclaim controller already serves gets no
// candidates, so the two never preempt twice for one pod.
#include <fmt/format.h>

#include "core/preemption.h"
#include "extender/extender_service.h"
#include "extender/log.h"

namespace capext {

http::Response ExtenderService::Preempt(std::string& body) {
  rapidjson::Document doc;
  ExtenderPreemptionArgs args;
  Status s = ParseRequestBody(body, &doc);
  if (s.ok()) s = DecodeExtenderPreemptionArgs(doc, cache_->decode_options(), &args);
  if (!s.ok()) return {400, "application/json", ErrorJson("preempt: " + s.message()), {}};
  LearnPod(args.pod);

  struct Candidate {
    std::string node;
    std::vector<std::string> uids;
    int32_t pdb_violations;
  };
  std::string skipped;
  std::vector<Candidate> candidates = cache_->Read([&](const ClusterState& state) {
    std::vector<Candidate> out;
    const Pod* pod = state.FindPod(CacheKey(args.pod));
    if (pod == nullptr) pod = &args.pod;
    if (state.FindOurNomination(CacheKey(*pod)) != nullptr) {
      skipped = "reclaim already serves this pod";
      return out;
    }
    PreemptorContext ctx = MakePreemptorContext(state, *pod);
    if (!EligibleToPreempt(state, ctx, &skipped)) return out;
    const MoreImportantFn more_important = order_->AsFunction();
    for (const auto& name : args.node_names) {
      auto info = state.FindNode(name);
      if (!info) continue;
      NodeVictims v = SelectVictimsOnNode(state, ctx, *info, more_important);
      if (!v.candidate) continue;
      Candidate c{name, {}, v.pdb_violations};
      for (const Pod* victim : v.victims)
        c.uids.push_back(victim->uid);
      out.push_back(std::move(c));
    }
    return out;
  });

  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("NodeNameToMetaVictims");
  w.StartObject();
  for (const auto& c : candidates) {
    w.Key(c.node.c_str(), static_cast<rapidjson::SizeType>(c.node.size()));
    w.StartObject();
    w.Key("Pods");
    w.StartArray();
    for (const auto& uid : c.uids) {
      w.StartObject();
      w.Key("UID");
      w.String(uid.c_str(), static_cast<rapidjson::SizeType>(uid.size()));
      w.EndObject();
    }
    w.EndArray();
    w.Key("NumPDBViolations");
    w.Int(c.pdb_violations);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  metrics_->CountDecision("preempt", candidates.empty() ? "no-candidate" : "victims");
  Log(LogLevel::kInfo, "preempt",
      {{"pod", args.pod.Key()},
       {"proposed", std::to_string(args.node_names.size())},
       {"candidates", std::to_string(candidates.size())},
       {"note", skipped}});
  return {200, "application/json", std::string(buffer.GetString(), buffer.GetSize()), {}};
}

}  // namespace capext
