#include "bench/sim/sim_cli.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "config/json_fields.h"
#include "config/yaml_json.h"
#include "policies/node_scorers.h"
#include "policies/policies.h"

namespace capext {
namespace {

enum class Only { kBoth, kRun, kCompare };

struct Flag {
  const char* name;
  const char* arg;  // nullptr for a switch
  const char* help;
  Only only = Only::kBoth;
};

// "a, b, c": names joined by commas (a flag's value).
std::string CommaJoined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : ",") + n;
  return out;
}

const std::vector<Flag>& Flags() {
  // The policies are the registry's simulator profiles (policies/policies.h).
  static const std::string policy_help =
      SimProfilePolicies().NamesText() +
      "; +RULE adds an admission rule of the registry (policies/admission_rules.h)";
  static const std::string policies_help = "comma-separated policies of " +
                                           SimProfilePolicies().NamesText() + " (default " +
                                           CommaJoined(DefaultComparedSimProfiles()) + ")";
  static const std::string scoring_help =
      "node scorer (policies/node_scorers.h): " + NodeScoringPolicies().NamesText();
  static const std::string victim_order_help =
      "victim order of reclaim and preemption (policies/victim_orders.h): " +
      VictimOrderPolicies().NamesText();
  static const std::vector<Flag> flags = {
      {"trace", "FILE", "Alibaba v2023 pod list CSV (openb_pod_list_*.csv) as the workload"},
      {"tenants", "RULE",
       "trace tenants: qos (LS/Burstable/BE/Guaranteed -> ls/burstable/be/guaranteed) or hash:N "
       "(FNV-1a of the pod name mod N -> tenant-i); default qos"},
      {"gpu-sharing", "MODE",
       "round-up (a pod with gpu_milli < 1000 takes a whole nvidia.com/gpu; default) or milli "
       "(alibaba.com/gpu-milli = num_gpu * gpu_milli)"},
      {"unscheduled", "RULE", "trace pods with an empty scheduled_time: submit (default) or skip"},
      {"load-scale", "F",
       "trace: divide every arrival time by F (durations kept): F times the offered load"},
      {"synthetic", nullptr,
       "generate the workload instead (Poisson arrivals, exponential durations; see "
       "synthetic_workload.h)"},
      {"pods", "N", "synthetic: number of pods (default 10000)"},
      {"synthetic-tenants", "K", "synthetic: number of tenants tenant-0..tenant-K-1 (default 4)"},
      {"load", "X", "synthetic: offered cpu load as a fraction of the cluster's cpu (default 1.0)"},
      {"mean-duration", "SECONDS", "synthetic: mean pod duration (default 600)"},
      {"demand-period", "SECONDS",
       "synthetic: period of the tenants' rising and falling shares (default 3600)"},
      {"seed", "N", "synthetic: seed (default 1); same seed, same workload"},
      {"group-fraction", "X",
       "synthetic: fraction of arrivals that are pod groups (jobs admitted whole; default 0)"},
      {"group-sizes", "LIST",
       "synthetic: minMember distribution as size:weight,... (default 2:30,4:40,8:20,16:10)"},
      {"elastic-fraction", "X",
       "synthetic: fraction of groups that are elastic, running minMember..factor x minMember "
       "replicas (default 0.5)"},
      {"elastic-factor", "X",
       "synthetic: an elastic group's largest replica count over its "
       "minMember (default 2: 3-6 for minMember 3)"},
      {"nodes", "FILE", "Alibaba node list CSV (openb_node_list_all_node.csv) as the cluster"},
      {"max-pods", "N", "pods per node for --nodes (default 110)"},
      {"cluster", "FILE",
       "snapshot YAML/JSON (nodes, bound pods, ElasticQuotas, PriorityClasses, PDBs)"},
      {"synthetic-nodes", "N",
       "generated cluster of N nodes when neither --nodes nor --cluster is given (default 100)"},
      {"quotas", "FILE",
       "quota plan YAML {tenant: {min: {...}, max: {...}, priority: N, parent: TENANT}}; "
       "default: the snapshot's ElasticQuotas, or for --synthetic min = 90%/K of the cluster, "
       "max = 2.5 x min"},
      {"policy", "NAME", policy_help.c_str(), Only::kRun},
      {"policies", "LIST", policies_help.c_str(), Only::kCompare},
      {"admission", "MODE",
       "pod groups: pod (each pod through /filter, as before groups; default) or gang (gate "
       "mode: the admission queue admits a group's minMember together)",
       Only::kRun},
      {"admissions", "LIST",
       "pod, gang or pod,gang (each policy with each: per-pod against gang admission on the same "
       "workload; default pod)",
       Only::kCompare},
      {"gang-timeout", "SECONDS",
       "gang admission: how long an admitted group may take to start (default 120)"},
      {"scoring", "NAME", scoring_help.c_str()},
      {"victim-order", "NAME", victim_order_help.c_str()},
      {"node-sampling", "MODE",
       "kube (kube-scheduler's percentageOfNodesToScore sampling; default) or all (every node)"},
      {"percentage-of-nodes-to-score", "P",
       "kube sampling percentage (default 0 = adaptive, as kube-scheduler)"},
      {"resubmit-evicted", nullptr,
       "re-queue evicted pods at once (default: an evicted pod stays evicted)"},
      {"reclaim-interval", "SECONDS",
       "period of the reclaim controller's pass over parked pods (default 10)"},
      {"nomination-ttl", "SECONDS", "how long a reclaim's nomination holds the node (default 120)"},
      {"until", "SECONDS", "stop the simulation at this time (default: when no event is left)"},
      {"samples", "N", "timeline points across the workload's span (default 400)"},
      {"sample-interval", "SECONDS", "timeline spacing (overrides --samples)"},
      {"out", "DIR", "output directory (required)"},
      {"include-timing", nullptr,
       "also put wall-clock timing in report.json (it is always in perf.json); the report is then "
       "no longer reproducible byte for byte"},
      {"no-progress", nullptr,
       "never draw the progress bar (it is drawn only when stderr is a terminal)"},
      {"jobs", "N", "simulations run at once (default: min(cores, policies))", Only::kCompare},
      {"config", "FILE",
       "read flags from a YAML map (flag name without dashes -> value); command-line flags win"},
  };
  return flags;
}

const Flag* FindFlag(const std::string& name, bool compare) {
  for (const auto& f : Flags()) {
    if (name != f.name) continue;
    if ((f.only == Only::kRun && compare) || (f.only == Only::kCompare && !compare)) return nullptr;
    return &f;
  }
  return nullptr;
}

Status ParseInt64(const std::string& flag, const std::string& v, int64_t lo, int64_t* out) {
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size() || *out < lo) {
    return Status::Error(fmt::format("--{}: expected an integer >= {}, got '{}'", flag, lo, v));
  }
  return {};
}

Status ParseDouble(const std::string& flag, const std::string& v, double lo, double* out) {
  char* end = nullptr;
  *out = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !(*out >= lo)) {
    return Status::Error(fmt::format("--{}: expected a number >= {}, got '{}'", flag, lo, v));
  }
  return {};
}

// Flags from a --config file, as "--name value" pairs.
Status ConfigFileArgs(const std::string& path,
                      std::vector<std::pair<std::string, std::string>>* out) {
  std::string text;
  if (Status s = ReadFileToString(path, &text); !s.ok()) return s;
  std::vector<rapidjson::Document> docs;
  if (Status s = ParseYamlDocuments(text, &docs); !s.ok()) return s.WithContext(path);
  if (docs.empty()) return {};
  if (docs.size() != 1 || !docs[0].IsObject())
    return Status::Error(path + ": expected a map of flag -> value");
  for (auto m = docs[0].MemberBegin(); m != docs[0].MemberEnd(); ++m) {
    const std::string name = m->name.GetString();
    const rapidjson::Value& v = m->value;
    std::string value;
    if (v.IsString()) {
      value = v.GetString();
    } else if (v.IsBool()) {
      if (!v.GetBool()) continue;
      value = "true";
    } else if (v.IsInt64()) {
      value = std::to_string(v.GetInt64());
    } else if (v.IsDouble()) {
      value = fmt::format("{}", v.GetDouble());
    } else {
      return Status::Error(fmt::format("{}: {}: expected a string, number or boolean", path, name));
    }
    out->emplace_back(name, value);
  }
  return {};
}

}  // namespace

std::string BaseName(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string SimFlagsHelp(bool compare) {
  std::string out;
  for (const auto& f : Flags()) {
    if ((f.only == Only::kRun && compare) || (f.only == Only::kCompare && !compare)) continue;
    std::string left = std::string("  --") + f.name + (f.arg ? std::string(" ") + f.arg : "");
    out += fmt::format("{:<38} {}\n", left, f.help);
  }
  return out;
}

Status ParseSimFlags(const std::vector<std::string>& args, bool compare, SimCliConfig* out,
                     bool* help) {
  *help = false;
  // name -> value, in the order flags first appear; later values win (file first, then args).
  std::vector<std::pair<std::string, std::string>> given;
  std::vector<std::pair<std::string, std::string>> from_args;
  std::string config_file;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--help" || a == "-h") {
      *help = true;
      return {};
    }
    if (!a.starts_with("--"))
      return Status::Error("unexpected argument '" + a + "' (flags start with --)");
    std::string name = a.substr(2), value;
    const std::size_t eq = name.find('=');
    bool has_value = false;
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Flag* flag = FindFlag(name, compare);
    if (flag == nullptr) return Status::Error("unknown flag --" + name + " (see --help)");
    if (flag->arg != nullptr && !has_value) {
      if (i + 1 >= args.size())
        return Status::Error("--" + name + " needs a value (" + flag->arg + ")");
      value = args[++i];
    } else if (flag->arg == nullptr && !has_value) {
      value = "true";
    }
    if (name == "config") {
      config_file = value;
    } else {
      from_args.emplace_back(name, value);
    }
  }
  if (!config_file.empty()) {
    std::vector<std::pair<std::string, std::string>> file;
    if (Status s = ConfigFileArgs(config_file, &file); !s.ok()) return s;
    for (const auto& [name, value] : file) {
      if (FindFlag(name, compare) == nullptr || name == "config") {
        return Status::Error(config_file + ": unknown flag '" + name + "'");
      }
      given.emplace_back(name, value);
    }
  }
  given.insert(given.end(), from_args.begin(), from_args.end());
  std::map<std::string, std::string> flags;
  for (const auto& [name, value] : given)
    flags[name] = value;

  SimCliConfig& c = *out;
  auto has = [&](const char* n) { return flags.count(n) != 0; };
  auto get = [&](const char* n) { return flags[n]; };
  auto boolean = [&](const char* n) { return has(n) && get(n) != "false"; };
  c.trace = has("trace") ? get("trace") : "";
  c.synthetic = boolean("synthetic");
  if (c.synthetic == !c.trace.empty())
    return Status::Error("give exactly one workload: --trace FILE or --synthetic");
  if (has("tenants")) {
    StatusOr<TenantRule> tenants = ParseTenantRule(get("tenants"));
    if (!tenants.ok()) return tenants.status();
    c.trace_options.tenants = std::move(tenants).value();
  }
  GpuSharing sharing = GpuSharing::kRoundUp;
  if (has("gpu-sharing") && !ParseGpuSharing(get("gpu-sharing"), &sharing)) {
    return Status::Error("--gpu-sharing: expected round-up or milli");
  }
  c.trace_options.gpu_sharing = sharing;
  if (has("unscheduled")) {
    if (get("unscheduled") != "submit" && get("unscheduled") != "skip") {
      return Status::Error("--unscheduled: expected submit or skip");
    }
    c.trace_options.skip_unscheduled = get("unscheduled") == "skip";
  }
  if (has("load-scale")) {
    if (Status s = ParseDouble("load-scale", get("load-scale"), 1e-6, &c.trace_options.load_scale);
        !s.ok())
      return s;
  }
  int64_t v = 0;
  double d = 0;
  SyntheticOptions& so = c.synthetic_options;
  if (has("pods")) {
    if (Status s = ParseInt64("pods", get("pods"), 0, &so.pods); !s.ok()) return s;
  }
  if (has("synthetic-tenants")) {
    if (Status s = ParseInt64("synthetic-tenants", get("synthetic-tenants"), 1, &v); !s.ok())
      return s;
    so.tenants = static_cast<int>(std::min<int64_t>(v, 10000));
  }
  if (has("load")) {
    if (Status s = ParseDouble("load", get("load"), 0.0, &so.load); !s.ok()) return s;
  }
  if (has("mean-duration")) {
    if (Status s = ParseDouble("mean-duration", get("mean-duration"), 0.001, &so.mean_duration_s);
        !s.ok())
      return s;
  }
  if (has("demand-period")) {
    if (Status s = ParseDouble("demand-period", get("demand-period"), 0.001, &so.demand_period_s);
        !s.ok())
      return s;
  }
  if (has("seed")) {
    if (Status s = ParseInt64("seed", get("seed"), 0, &v); !s.ok()) return s;
    so.seed = static_cast<uint64_t>(v);
  }
  if (has("group-fraction")) {
    if (Status s = ParseDouble("group-fraction", get("group-fraction"), 0.0, &so.group_fraction);
        !s.ok())
      return s;
    if (so.group_fraction > 1) return Status::Error("--group-fraction: expected at most 1");
  }
  if (has("group-sizes") && !ParseGroupSizes(get("group-sizes"), &so.group_sizes)) {
    return Status::Error("--group-sizes: expected size:weight,... with sizes >= 2, weights >= 1");
  }
  if (has("elastic-fraction")) {
    if (Status s =
            ParseDouble("elastic-fraction", get("elastic-fraction"), 0.0, &so.elastic_fraction);
        !s.ok())
      return s;
    if (so.elastic_fraction > 1) return Status::Error("--elastic-fraction: expected at most 1");
  }
  if (has("elastic-factor")) {
    if (Status s = ParseDouble("elastic-factor", get("elastic-factor"), 1.0, &so.elastic_factor);
        !s.ok())
      return s;
    so.elastic_factor = std::min(so.elastic_factor, 64.0);
  }
  c.nodes_csv = has("nodes") ? get("nodes") : "";
  c.cluster_snapshot = has("cluster") ? get("cluster") : "";
  if (has("max-pods")) {
    if (Status s = ParseInt64("max-pods", get("max-pods"), 1, &c.max_pods); !s.ok()) return s;
  }
  if (has("synthetic-nodes")) {
    if (Status s = ParseInt64("synthetic-nodes", get("synthetic-nodes"), 1, &v); !s.ok()) return s;
    c.synthetic_nodes = static_cast<int>(std::min<int64_t>(v, 1'000'000));
  }
  if (!c.synthetic && c.nodes_csv.empty() && c.cluster_snapshot.empty()) {
    return Status::Error("a trace needs a cluster: --nodes FILE or --cluster FILE");
  }
  c.quotas = has("quotas") ? get("quotas") : "";

  std::string policy_list =
      compare ? (has("policies") ? get("policies") : CommaJoined(DefaultComparedSimProfiles()))
              : (has("policy") ? get("policy")
                               : std::string(SimProfilePolicies().default_entry().name));
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start <= policy_list.size()) {
    std::size_t comma = policy_list.find(',', start);
    std::string name =
        policy_list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    // A profile of the registry, optionally with extra admission rules ("capacity+<rule>").
    SimProfile profile;
    if (Status s = ResolveSimProfile(name, &profile); !s.ok()) return s;
    if (seen.insert(name).second) c.policies.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (!compare && c.policies.size() != 1)
    return Status::Error("--policy takes one policy; use compare for several");

  const std::string admission_list = compare ? (has("admissions") ? get("admissions") : "pod")
                                             : (has("admission") ? get("admission") : "pod");
  c.admissions.clear();
  for (std::size_t start = 0; start <= admission_list.size();) {
    const std::size_t comma = admission_list.find(',', start);
    const std::string name = admission_list.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    SimAdmission a = SimAdmission::kPod;
    if (name == "gang") {
      a = SimAdmission::kGang;
    } else if (name != "pod") {
      return Status::Error(fmt::format("--{}: unknown admission '{}' (pod, gang)",
                                       compare ? "admissions" : "admission", name));
    }
    if (std::find(c.admissions.begin(), c.admissions.end(), a) == c.admissions.end())
      c.admissions.push_back(a);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (!compare && c.admissions.size() != 1)
    return Status::Error("--admission takes one mode; use compare --admissions for both");

  SimulationOptions& o = c.sim;
  o.admission = c.admissions.front();
  if (has("gang-timeout")) {
    double seconds = 0;
    if (Status s = ParseDouble("gang-timeout", get("gang-timeout"), 0.001, &seconds); !s.ok())
      return s;
    o.group_timeout_ms = static_cast<int64_t>(seconds * 1000);
  }
  if (has("scoring")) o.scoring = get("scoring");
  if (NodeScoringPolicies().Find(o.scoring) == nullptr)
    return Status::Invalid("--scoring: expected " + NodeScoringPolicies().NamesText());
  if (has("victim-order")) o.victim_order = get("victim-order");
  if (VictimOrderPolicies().Find(o.victim_order) == nullptr)
    return Status::Invalid("--victim-order: expected " + VictimOrderPolicies().NamesText());
  if (has("node-sampling")) {
    if (get("node-sampling") == "kube") {
      o.sampling = NodeSampling::kKubeScheduler;
    } else if (get("node-sampling") == "all") {
      o.sampling = NodeSampling::kAll;
    } else {
      return Status::Error("--node-sampling: expected kube or all");
    }
  }
  if (has("percentage-of-nodes-to-score")) {
    if (Status s =
            ParseInt64("percentage-of-nodes-to-score", get("percentage-of-nodes-to-score"), 0, &v);
        !s.ok())
      return s;
    o.percentage_of_nodes_to_score = static_cast<int>(std::min<int64_t>(v, 100));
  }
  o.resubmit_evicted = boolean("resubmit-evicted");
  auto seconds = [&](const char* n, int64_t* ms) -> Status {
    double s = 0;
    if (Status st = ParseDouble(n, get(n), 0.0, &s); !st.ok()) return st;
    *ms = static_cast<int64_t>(s * 1000.0);
    return {};
  };
  if (has("reclaim-interval")) {
    if (Status s = seconds("reclaim-interval", &o.reclaim_interval_ms); !s.ok()) return s;
  }
  if (has("nomination-ttl")) {
    if (Status s = seconds("nomination-ttl", &o.nomination_ttl_ms); !s.ok()) return s;
  }
  if (has("until")) {
    int64_t ms = 0;
    if (Status s = seconds("until", &ms); !s.ok()) return s;
    o.until_ms = ms;
  }
  if (has("samples")) {
    if (Status s = ParseInt64("samples", get("samples"), 1, &v); !s.ok()) return s;
    o.samples = static_cast<int>(std::min<int64_t>(v, 100000));
  }
  if (has("sample-interval")) {
    if (Status s = ParseDouble("sample-interval", get("sample-interval"), 0.001, &d); !s.ok())
      return s;
    o.sample_interval_ms = std::max<int64_t>(1, static_cast<int64_t>(d * 1000.0));
  }
  c.out_dir = has("out") ? get("out") : "";
  if (c.out_dir.empty()) return Status::Error("--out DIR is required");
  c.include_timing = boolean("include-timing");
  c.progress = !boolean("no-progress");
  if (has("jobs")) {
    if (Status s = ParseInt64("jobs", get("jobs"), 1, &v); !s.ok()) return s;
    c.jobs = static_cast<int>(std::min<int64_t>(v, 64));
  }

  // Echo the effective options (not --out, --config, --jobs or the display switches: they do
  // not change results).
  const std::set<std::string> path_flags = {"trace", "nodes", "cluster", "quotas"};
  const std::set<std::string> not_echoed = {"out", "config", "jobs", "no-progress",
                                            "include-timing"};
  for (const auto& f : Flags()) {
    if (!has(f.name) || not_echoed.count(f.name) != 0) continue;
    const std::string value = get(f.name);
    c.echo.emplace_back(f.name, path_flags.count(f.name) != 0 ? BaseName(value) : value);
  }
  return {};
}

Status WriteTextFile(const std::string& path, const std::string& content) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return Status::Error("cannot write " + path);
  f << content;
  f.close();
  if (!f) return Status::Error("error writing " + path);
  return {};
}

}  // namespace capext
