#include "extender/leadership/leadership.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "extender/wire/json_out.h"

namespace capext {

std::chrono::milliseconds Leadership::TimeLeft(std::chrono::milliseconds limit) const {
  const Clock::time_point until = ActsUntil();
  const Clock::time_point now = Clock::now();
  if (until <= now) return std::chrono::milliseconds(0);
  if (until == Clock::time_point::max()) return limit;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
  return std::min(limit, left);
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "";
  return host;
}

LeadershipReport SoleReplica::Report() const {
  LeadershipReport s;
  s.mode = "off";
  s.leads = true;
  return s;
}

namespace {

// A Prometheus label value: backslash, double quote and newline escaped.
std::string LabelValue(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string LeadershipJson(const LeadershipReport& s) {
  std::string out = "{\"mode\":";
  out += RenderString(s.mode);
  out += fmt::format(",\"leads\":{}", s.leads ? "true" : "false");
  if (s.mode != "off") {
    out += ",\"identity\":";
    out += RenderString(s.identity);
    out += ",\"lease\":";
    out += RenderString(s.lease);
    out += ",\"holder\":";
    out += RenderString(s.holder);
    out += fmt::format(",\"leaseTransitions\":{}", s.lease_transitions);
  }
  out += fmt::format(",\"transitions\":{}", s.transitions);
  if (!s.reason.empty()) {
    out += ",\"reason\":";
    out += RenderString(s.reason);
  }
  out += "}";
  return out;
}

std::string LeadershipMetrics(const LeadershipReport& s) {
  return fmt::format(
      "# HELP capacity_extender_leader 1 when this replica acts (evictions, nudges, status.used, "
      "Events), else 0.\n"
      "# TYPE capacity_extender_leader gauge\n"
      "capacity_extender_leader {}\n"
      "# HELP capacity_extender_leader_info Whose lease this replica follows and who holds it.\n"
      "# TYPE capacity_extender_leader_info gauge\n"
      "capacity_extender_leader_info{{mode=\"{}\",identity=\"{}\",holder=\"{}\"}} 1\n"
      "# HELP capacity_extender_leader_transitions_total Times this replica started or stopped "
      "acting.\n"
      "# TYPE capacity_extender_leader_transitions_total counter\n"
      "capacity_extender_leader_transitions_total {}\n"
      "# HELP capacity_extender_lease_transitions The followed lease's spec.leaseTransitions.\n"
      "# TYPE capacity_extender_lease_transitions gauge\n"
      "capacity_extender_lease_transitions {}\n",
      s.leads ? 1 : 0, LabelValue(s.mode), LabelValue(s.identity), LabelValue(s.holder),
      s.transitions, s.lease_transitions);
}

}  // namespace capext
