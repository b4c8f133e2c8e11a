#include "extender/reclaim/victim_event.h"

#include <fmt/format.h>

namespace capext {

EventObject MakeVictimEvent(const Pod& victim, const std::string& preemptor,
                            const std::string& plan, int64_t now_ms, int sequence,
                            const std::string& reporting_instance) {
  EventObject e;
  e.ns = victim.ns;
  e.name = fmt::format("{}.{:x}", victim.name, now_ms * 1'000'000 + sequence);
  e.pod_name = victim.name;
  e.pod_uid = victim.uid;
  e.type = "Normal";
  e.reason = "Reclaimed";
  e.action = "Evict";
  e.note = fmt::format("evicted by quota reclaim for {}: {}", preemptor, plan).substr(0, 1024);
  e.reporting_controller = "capacity-extender.io/reclaim";
  e.reporting_instance = reporting_instance;
  e.event_time_us = now_ms * 1000;
  return e;
}

}  // namespace capext
