// The Event a reclaim writes on each pod it evicts (docs/reclaim-plan.md#5-where-a-user-sees-it):
// Normal, reason "Reclaimed", naming the pod or gang the room was made for and the plan, so that
// `kubectl describe pod` on a victim (or its controller's view of the events) says why it went.
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string>

#include "core/pod.h"
#include "extender/reclaim/event_sink.h"

namespace capext {

// `preemptor`: "pod ns/name" or "gang ns/group"; `plan`: the plan as the log shows it; `sequence`
// makes the Event's name unique among those written in the same millisecond.
EventObject MakeVictimEvent(const Pod& victim, const std::string& preemptor,
                            const std::string& plan, int64_t now_ms, int sequence,
                            const std::string& reporting_instance);

}  // namespace capext
