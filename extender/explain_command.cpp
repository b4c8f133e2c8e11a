// capacity-extender explain: the explanation of one pod against a snapshot (or the bundled
// example): a pod of the snapshot by NAMESPACE/NAME, or a pod manifest with -f.
#include <iostream>
#include <optional>

#include "config/duration_text.h"
#include "config/extender_config.h"
#include "config/snapshot.h"
#include "extender/commands.h"
#include "extender/embedded/cluster_source.h"
#include "extender/explain.h"
#include "extender/serve_options.h"
#include "policies/admission_rules.h"
#include "policies/policies.h"
#include "policies/victim_orders.h"

namespace capext {

int RunExplainCommand(const std::vector<std::string>& args) {
  std::string snapshot, pod_file, pod_key, output = "text", semantics_name = "capacity-extender";
  std::string min_run_time;
  // Read as serve reads them: admissionRules, victimOrder, fairSharing and fairShareMinRunTime.
  ExtenderConfig config;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    bool ok = true;
    if (a == "--help" || a == "-h") {
      std::cout
          << "usage: capacity-extender explain [--snapshot FILE] [--quota-semantics NAME] "
             "[--admission-rules NAMES] [--victim-order NAME] [--fair-sharing] "
             "[--fair-share-min-run-time DURATION] [-o text|json]\n"
             "       (NAMESPACE/NAME | -f POD.yaml)\n\n"
             "Prints, for one pod, the quota arithmetic of its ElasticQuota (used, reserved,\n"
             "request, nominated sums, min, max, cluster totals), why each node fits or not,\n"
             "and what the reclaim controller would evict. Fair sharing's arithmetic is shown\n"
             "at every level; with --fair-sharing (serve's fairSharing) the plan across nodes\n"
             "also reclaims between borrowers, sparing pods that started less than\n"
             "--fair-share-min-run-time ago (default 5m). --admission-rules and\n"
             "--victim-order pick plugins by name as serve's flags do. Without --snapshot the\n"
             "bundled example cluster is used.\n";
      return 0;
    } else if (a == "--snapshot") {
      ok = value(&snapshot);
    } else if (a == "-f") {
      ok = value(&pod_file);
    } else if (a == "-o") {
      ok = value(&output);
    } else if (a == "--quota-semantics") {
      ok = value(&semantics_name);
    } else if (a == "--admission-rules") {
      ok = value(&config.admission_rules);
    } else if (a == "--victim-order") {
      ok = value(&config.victim_order);
    } else if (a == "--fair-sharing") {
      config.fair_sharing = true;
    } else if (a == "--fair-share-min-run-time") {
      ok = value(&min_run_time);
      if (ok) {
        if (Status s = ParseDuration(min_run_time, &config.fair_share_min_run_time); !s.ok()) {
          std::cerr << "explain: --fair-share-min-run-time: " << s.message() << "\n";
          return 2;
        }
      }
    } else if (!a.empty() && a[0] != '-' && pod_key.empty()) {
      pod_key = a;
    } else {
      ok = false;
    }
    if (!ok) {
      std::cerr << "explain: bad argument '" << a << "' (see --help)\n";
      return 2;
    }
  }
  const auto* semantics = QuotaSemanticsPolicies().Find(semantics_name);
  if (semantics == nullptr || (output != "text" && output != "json") ||
      (pod_key.empty() == pod_file.empty())) {
    std::cerr << "explain: give exactly one of NAMESPACE/NAME or -f POD.yaml; -o text|json\n";
    return 2;
  }
  QuotaSemantics with_rules;
  if (Status s = WithAdmissionRules(semantics->make(), config.admission_rules, &with_rules);
      !s.ok()) {
    std::cerr << "explain: --admission-rules: " << s.message() << "\n";
    return 2;
  }
  const auto* victim_order = VictimOrderPolicies().Find(config.victim_order);
  if (victim_order == nullptr) {
    std::cerr << "explain: --victim-order: unknown " << VictimOrderPolicies().what() << " '"
              << config.victim_order << "' (" << VictimOrderPolicies().NamesText() << ")\n";
    return 2;
  }
  SchedulerCache cache(with_rules, DecodeOptions{});
  std::string source;
  if (Status s = LoadEmbeddedCluster(snapshot, &cache, &source); !s.ok()) {
    std::cerr << "explain: " << s.message() << "\n";
    return 2;
  }
  std::optional<NormalizedPod> pod;
  if (!pod_file.empty()) {
    Snapshot pods;
    if (Status s = LoadSnapshotFile(pod_file, DecodeOptions{}, &pods);
        !s.ok() || pods.pods.size() != 1) {
      std::cerr << "explain: " << (s.ok() ? pod_file + ": expected exactly one Pod" : s.message())
                << "\n";
      return 2;
    }
    const std::string key = StoreKeyOf(pods.pods[0]);
    cache.Write([&](ClusterState& state) {
      if (!state.FindPod(key)) state.UpsertPod(pods.pods[0]);
      pod = *state.FindPod(key);
    });
  } else {
    const auto slash = pod_key.find('/');
    const NormalizedPod* found =
        slash == std::string::npos ? nullptr : cache.Read([&](const ClusterState& state) {
          return state.FindPodByName(pod_key.substr(0, slash), pod_key.substr(slash + 1));
        });
    if (found == nullptr) {
      std::cerr << "explain: pod " << pod_key << " is not in " << source << "\n";
      return 1;
    }
    pod = *found;
  }
  const VictimOrder& order = *victim_order->make();
  FairReclaimOptions fair = FairReclaimOptionsFrom(config);
  fair.now_ms = cache.NowMs();
  std::cout << cache.Read([&](const ClusterState& state) {
    return output == "json" ? ExplainPodJson(state, *pod, order, fair)
                            : ExplainPodText(state, *pod, order, fair);
  });
  return 0;
}

}  // namespace capext
