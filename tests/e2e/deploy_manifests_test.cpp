// deploy/: the kustomize base renders, and its pieces agree with each other (ports, names, paths),
// with least-privilege RBAC and without managedResources. Needs kubectl (for `kubectl kustomize`);
// without it every case WARNs and passes.
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/duration_text.h"
#include "config/extender_config.h"
#include "tests/support/test_paths.h"

namespace deploy_manifests_test {
namespace {

struct Rendered {
  int exit_status = -1;
  std::string out;
  std::string err;
  std::vector<YAML::Node> docs;
};

bool HaveKubectl() {
  return std::system("command -v kubectl >/dev/null 2>&1") == 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `kubectl kustomize <dir>` once per process (stderr kept apart so warnings never reach YAML).
const Rendered& Render() {
  static const Rendered rendered = [] {
    Rendered r;
    char err_path[] = "/tmp/deploy_manifests_test_XXXXXX";
    const int fd = mkstemp(err_path);
    if (fd < 0) return r;
    close(fd);
    const std::string cmd = std::string("kubectl kustomize '") +
                            capext::test::SourcePath("deploy") + "' 2>'" + err_path + "'";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe != nullptr) {
      char buf[8192];
      size_t n = 0;
      while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
        r.out.append(buf, n);
      const int status = pclose(pipe);
      r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    r.err = ReadFile(err_path);
    std::remove(err_path);
    if (r.exit_status == 0) {
      for (const YAML::Node& doc : YAML::LoadAll(r.out))
        if (doc.IsMap()) r.docs.push_back(doc);
    }
    return r;
  }();
  return rendered;
}

#define REQUIRE_RENDERED()                                             \
  if (!HaveKubectl()) {                                                \
    WARN("kubectl not found on PATH: deploy manifest checks skipped"); \
    return;                                                            \
  }                                                                    \
  const Rendered& rendered = Render();                                 \
  INFO("kubectl kustomize stderr: " << rendered.err);                  \
  REQUIRE(rendered.exit_status == 0);                                  \
  REQUIRE_FALSE(rendered.docs.empty())

std::string Str(const YAML::Node& n) {
  return n && n.IsScalar() ? n.as<std::string>() : "";
}

std::vector<YAML::Node> OfKind(const Rendered& r, const std::string& kind) {
  std::vector<YAML::Node> out;
  for (const YAML::Node& d : r.docs)
    if (Str(d["kind"]) == kind) out.push_back(d);
  return out;
}

// The object of `kind` named `name`, or (generated ConfigMaps) `name-<hash>`.
std::optional<YAML::Node> Find(const Rendered& r, const std::string& kind,
                               const std::string& name) {
  for (const YAML::Node& d : OfKind(r, kind)) {
    const std::string n = Str(d["metadata"]["name"]);
    if (n == name || (n.size() > name.size() + 1 && n.compare(0, name.size() + 1, name + "-") == 0))
      return d;
  }
  return std::nullopt;
}

YAML::Node Container(const YAML::Node& deployment, const std::string& name) {
  for (const YAML::Node& c : deployment["spec"]["template"]["spec"]["containers"])
    if (Str(c["name"]) == name) return c;
  return YAML::Node();
}

std::optional<int> ContainerPort(const YAML::Node& container, const std::string& port_name) {
  for (const YAML::Node& p : container["ports"])
    if (Str(p["name"]) == port_name) return p["containerPort"].as<int>();
  return std::nullopt;
}

// The ConfigMap name mounted by the Deployment's volume `volume`.
std::string VolumeConfigMap(const YAML::Node& deployment, const std::string& volume) {
  for (const YAML::Node& v : deployment["spec"]["template"]["spec"]["volumes"])
    if (Str(v["name"]) == volume) return Str(v["configMap"]["name"]);
  return "";
}

std::string MountPath(const YAML::Node& container, const std::string& volume) {
  for (const YAML::Node& m : container["volumeMounts"])
    if (Str(m["name"]) == volume) return Str(m["mountPath"]);
  return "";
}

// "http://127.0.0.1:8888/prefix" -> {host, port}.
std::pair<std::string, int> HostPort(const std::string& url) {
  std::string rest = url.substr(url.find("://") == std::string::npos ? 0 : url.find("://") + 3);
  rest = rest.substr(0, rest.find('/'));
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos) return {rest, url.rfind("https", 0) == 0 ? 443 : 80};
  return {rest.substr(0, colon), std::stoi(rest.substr(colon + 1))};
}

struct Configs {
  YAML::Node deployment;
  YAML::Node scheduler;  // the KubeSchedulerConfiguration
  YAML::Node extender;   // the capacity-extender config file
};

Configs LoadConfigs(const Rendered& r) {
  Configs c;
  const auto deployment = Find(r, "Deployment", "capacity-scheduler");
  REQUIRE(deployment);
  c.deployment = *deployment;
  const auto sched_cm = Find(r, "ConfigMap", "capacity-scheduler-config");
  const auto ext_cm = Find(r, "ConfigMap", "capacity-extender-config");
  REQUIRE(sched_cm);
  REQUIRE(ext_cm);
  // The Deployment mounts exactly these (hash-suffixed) ConfigMaps.
  CHECK(VolumeConfigMap(c.deployment, "scheduler-config") == Str((*sched_cm)["metadata"]["name"]));
  CHECK(VolumeConfigMap(c.deployment, "extender-config") == Str((*ext_cm)["metadata"]["name"]));
  c.scheduler = YAML::Load(Str((*sched_cm)["data"]["scheduler-config.yaml"]));
  c.extender = YAML::Load(Str((*ext_cm)["data"]["extender-config.yaml"]));
  REQUIRE(c.scheduler.IsMap());
  REQUIRE(c.extender.IsMap());
  return c;
}

}  // namespace

TEST_CASE("deploy base renders with every expected kind", "[deploy]") {
  REQUIRE_RENDERED();
  std::set<std::string> kinds;
  for (const YAML::Node& d : rendered.docs)
    kinds.insert(Str(d["kind"]));
  for (const char* kind :
       {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
        "ConfigMap", "Deployment", "Service", "ValidatingWebhookConfiguration",
        "CustomResourceDefinition", "PodDisruptionBudget"}) {
    INFO("kind " << kind);
    CHECK(kinds.count(kind) == 1);
  }
  // Examples are not part of the base.
  CHECK(kinds.count("ElasticQuota") == 0);
  CHECK(kinds.count("Job") == 0);
  // Everything namespaced lives in capacity-extender, except the one kube-system RoleBinding.
  for (const YAML::Node& d : rendered.docs) {
    const std::string ns = Str(d["metadata"]["namespace"]);
    if (ns.empty()) continue;
    INFO(Str(d["kind"]) << " " << Str(d["metadata"]["name"]));
    if (ns == "kube-system")
      CHECK(Str(d["roleRef"]["name"]) == "extension-apiserver-authentication-reader");
    else
      CHECK(ns == "capacity-extender");
  }
}

TEST_CASE("the extender's bind deadline leaves a margin under kube-scheduler's httpTimeout",
          "[deploy]") {
  // docs/architecture.md#how-a-bind-travels: a Binding sent at the deadline must still be answered
  // before kube-scheduler gives up.
  REQUIRE_RENDERED();
  const Configs c = LoadConfigs(rendered);
  std::chrono::milliseconds http_timeout{0}, bind_deadline{0};
  REQUIRE(
      capext::ParseDuration(Str(c.scheduler["extenders"][0]["httpTimeout"]), &http_timeout).ok());
  REQUIRE(capext::ParseDuration(Str(c.extender["bindDeadline"]), &bind_deadline).ok());
  CHECK(bind_deadline + std::chrono::milliseconds(500) <= http_timeout);
  CHECK(bind_deadline == capext::ExtenderConfig{}.bind_deadline);  // deploy/ uses the default
}

TEST_CASE("scheduler config, extender config and sidecar agree on the extender port", "[deploy]") {
  REQUIRE_RENDERED();
  const Configs c = LoadConfigs(rendered);
  CHECK(Str(c.scheduler["kind"]) == "KubeSchedulerConfiguration");
  CHECK(Str(c.scheduler["apiVersion"]) == "kubescheduler.config.k8s.io/v1");
  REQUIRE(c.scheduler["extenders"].IsSequence());
  REQUIRE(c.scheduler["extenders"].size() == 1);
  const YAML::Node ext = c.scheduler["extenders"][0];

  const auto [host, port] = HostPort(Str(ext["urlPrefix"]));
  CHECK(host == "127.0.0.1");
  CHECK(port == 8888);
  CHECK(c.extender["port"].as<int>() == port);
  CHECK(Str(c.extender["listenAddress"]) == host);
  const YAML::Node sidecar = Container(c.deployment, "capacity-extender");
  REQUIRE(sidecar);
  CHECK(ContainerPort(sidecar, "http") == std::optional<int>(port));

  CHECK(Str(ext["filterVerb"]) == "filter");
  CHECK(Str(ext["prioritizeVerb"]) == "prioritize");
  CHECK(Str(ext["preemptVerb"]) == "preempt");
  CHECK(Str(ext["bindVerb"]) == "bind");
  CHECK(ext["weight"].as<int>() == 1);
  CHECK(Str(ext["httpTimeout"]) == "5s");
  CHECK(ext["nodeCacheCapable"].as<bool>());
  CHECK_FALSE(ext["ignorable"].as<bool>());
  // Every pod of a quota namespace must reach the extender.
  CHECK_FALSE(ext["managedResources"]);
  CHECK(rendered.out.find("managedResources:") == std::string::npos);

  CHECK(Str(c.scheduler["profiles"][0]["schedulerName"]) == "capacity-scheduler");
  CHECK(c.scheduler["leaderElection"]["leaderElect"].as<bool>());
  CHECK(Str(c.scheduler["leaderElection"]["resourceName"]) == "capacity-scheduler");
}

TEST_CASE("deployment mounts what the containers are told to read", "[deploy]") {
  REQUIRE_RENDERED();
  const Configs c = LoadConfigs(rendered);
  const YAML::Node pod = c.deployment["spec"]["template"]["spec"];
  CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());

  const YAML::Node scheduler = Container(c.deployment, "kube-scheduler");
  const YAML::Node sidecar = Container(c.deployment, "capacity-extender");
  REQUIRE(scheduler);
  REQUIRE(sidecar);
  CHECK(Str(scheduler["image"]).rfind("registry.k8s.io/kube-scheduler:v1.30.", 0) == 0);
  std::vector<std::string> cmd;
  for (const YAML::Node& a : scheduler["command"])
    cmd.push_back(Str(a));
  const std::string config_flag =
      "--config=" + MountPath(scheduler, "scheduler-config") + "/scheduler-config.yaml";
  CHECK(config_flag == "--config=/etc/kubernetes/scheduler-config.yaml");
  CHECK(std::find(cmd.begin(), cmd.end(), config_flag) != cmd.end());
  CHECK(scheduler["livenessProbe"]["httpGet"]["port"].as<int>() == 10259);
  CHECK(Str(scheduler["livenessProbe"]["httpGet"]["scheme"]) == "HTTPS");

  std::vector<std::string> args;
  for (const YAML::Node& a : sidecar["args"])
    args.push_back(Str(a));
  const std::vector<std::string> want = {
      "serve", "--config", MountPath(sidecar, "extender-config") + "/extender-config.yaml"};
  CHECK(args == want);
  CHECK(want[2] == "/etc/capacity-extender/extender-config.yaml");
  CHECK(Str(sidecar["readinessProbe"]["httpGet"]["path"]) == "/readyz");
  CHECK(Str(sidecar["livenessProbe"]["httpGet"]["path"]) == "/healthz");

  // The webhook's certificate paths point into the mounted Secret.
  const std::string tls_dir = MountPath(sidecar, "webhook-tls");
  REQUIRE_FALSE(tls_dir.empty());
  CHECK(Str(c.extender["webhookTLSCertFile"]) == tls_dir + "/tls.crt");
  CHECK(Str(c.extender["webhookTLSKeyFile"]) == tls_dir + "/tls.key");

  for (const YAML::Node& container : {scheduler, sidecar}) {
    INFO("container " << Str(container["name"]));
    const YAML::Node sc = container["securityContext"];
    CHECK(sc["readOnlyRootFilesystem"].as<bool>());
    CHECK_FALSE(sc["allowPrivilegeEscalation"].as<bool>());
    REQUIRE(sc["capabilities"]["drop"].IsSequence());
    CHECK(Str(sc["capabilities"]["drop"][0]) == "ALL");
    CHECK(container["resources"]["requests"]);
  }
}

TEST_CASE("admission webhook reaches the sidecar's webhook listener", "[deploy]") {
  REQUIRE_RENDERED();
  const Configs c = LoadConfigs(rendered);
  const auto vwc = Find(rendered, "ValidatingWebhookConfiguration", "capacity-extender");
  REQUIRE(vwc);
  REQUIRE((*vwc)["webhooks"].size() == 1);
  const YAML::Node hook = (*vwc)["webhooks"][0];
  CHECK(Str(hook["failurePolicy"]) == "Fail");
  CHECK(Str(hook["sideEffects"]) == "None");
  REQUIRE(hook["admissionReviewVersions"].size() == 1);
  CHECK(Str(hook["admissionReviewVersions"][0]) == "v1");

  std::set<std::string> groups, operations;
  for (const YAML::Node& rule : hook["rules"]) {
    for (const YAML::Node& g : rule["apiGroups"])
      groups.insert(Str(g));
    for (const YAML::Node& o : rule["operations"])
      operations.insert(Str(o));
    CHECK(Str(rule["resources"][0]) == "elasticquotas");
  }
  CHECK(groups == std::set<std::string>{"scheduling.x-k8s.io", "scheduling.sigs.k8s.io"});
  CHECK(operations == std::set<std::string>{"CREATE", "UPDATE"});

  const YAML::Node svc_ref = hook["clientConfig"]["service"];
  CHECK(Str(svc_ref["path"]) == "/admit");
  const auto svc = Find(rendered, "Service", Str(svc_ref["name"]));
  REQUIRE(svc);
  CHECK(Str((*svc)["metadata"]["namespace"]) == Str(svc_ref["namespace"]));
  const int service_port = svc_ref["port"] ? svc_ref["port"].as<int>() : 443;
  std::string target;
  for (const YAML::Node& p : (*svc)["spec"]["ports"])
    if (p["port"].as<int>() == service_port) target = Str(p["targetPort"]);
  REQUIRE_FALSE(target.empty());
  const YAML::Node sidecar = Container(c.deployment, "capacity-extender");
  const std::optional<int> webhook_port = ContainerPort(sidecar, target);
  REQUIRE(webhook_port);
  CHECK(*webhook_port == c.extender["webhookPort"].as<int>());
  CHECK(*webhook_port != c.extender["port"].as<int>());
  // The Service selects the Deployment's pods.
  for (const auto& kv : (*svc)["spec"]["selector"]) {
    const YAML::Node labels = c.deployment["spec"]["template"]["metadata"]["labels"];
    CHECK(Str(labels[kv.first.as<std::string>()]) == Str(kv.second));
  }
}

TEST_CASE("pod-gating webhook: pod CREATE in labelled namespaces, to /mutate, gate mode",
          "[deploy]") {
  REQUIRE_RENDERED();
  const Configs c = LoadConfigs(rendered);
  const auto mwc = Find(rendered, "MutatingWebhookConfiguration", "capacity-extender");
  REQUIRE(mwc);
  REQUIRE((*mwc)["webhooks"].size() == 1);
  const YAML::Node hook = (*mwc)["webhooks"][0];
  CHECK(Str(hook["failurePolicy"]) == "Fail");
  // Admission at creation holds quota, except on a dry run (docs/workloads-live.md).
  CHECK(Str(hook["sideEffects"]) == "NoneOnDryRun");
  CHECK(Str(hook["namespaceSelector"]["matchLabels"]["capacity-extender.io/quota"]) == "true");
  REQUIRE(hook["rules"].size() == 1);
  CHECK(Str(hook["rules"][0]["resources"][0]) == "pods");
  CHECK(Str(hook["rules"][0]["operations"][0]) == "CREATE");
  CHECK(hook["rules"][0]["operations"].size() == 1);
  CHECK(Str(hook["clientConfig"]["service"]["path"]) == "/mutate");
  // The same Service (and so the same listener) as the validating webhook.
  const auto vwc = Find(rendered, "ValidatingWebhookConfiguration", "capacity-extender");
  REQUIRE(vwc);
  CHECK(Str(hook["clientConfig"]["service"]["name"]) ==
        Str((*vwc)["webhooks"][0]["clientConfig"]["service"]["name"]));
  CHECK(Str(c.extender["admissionMode"]) == "gate");
  // The gated scheduler is the one this Deployment runs.
  CHECK(Str(c.extender["gateSchedulerNames"]) == Str(c.scheduler["profiles"][0]["schedulerName"]));
}

TEST_CASE("RBAC grants no wildcards and exactly the extender's verbs", "[deploy]") {
  REQUIRE_RENDERED();
  // (group, resource) -> verbs, over every rule of the extender's ClusterRole.
  std::set<std::string> granted;
  for (const char* kind : {"ClusterRole", "Role"}) {
    for (const YAML::Node& role : OfKind(rendered, kind)) {
      const std::string role_name = Str(role["metadata"]["name"]);
      for (const YAML::Node& rule : role["rules"]) {
        for (const char* field : {"verbs", "resources", "apiGroups", "resourceNames"}) {
          for (const YAML::Node& v : rule[field]) {
            INFO(kind << " " << role_name << " " << field);
            CHECK(Str(v).find('*') == std::string::npos);
          }
        }
        CHECK_FALSE(rule["nonResourceURLs"]);
        if (role_name != "capacity-extender") continue;
        for (const YAML::Node& g : rule["apiGroups"])
          for (const YAML::Node& r : rule["resources"])
            for (const YAML::Node& v : rule["verbs"])
              granted.insert(Str(g) + "/" + Str(r) + ":" + Str(v));
      }
    }
  }
  std::set<std::string> want;
  auto grant = [&want](const std::string& group, const std::string& resource,
                       std::initializer_list<const char*> verbs) {
    for (const char* v : verbs)
      want.insert(group + "/" + resource + ":" + v);
  };
  for (const char* r : {"pods", "nodes"})
    grant("", r, {"get", "list", "watch"});
  grant("scheduling.k8s.io", "priorityclasses", {"get", "list", "watch"});
  grant("policy", "poddisruptionbudgets", {"get", "list", "watch"});
  for (const char* r : {"resourceclaims", "resourceclaimtemplates", "deviceclasses"})
    grant("resource.k8s.io", r, {"get", "list", "watch"});  // docs/devices.md
  for (const char* g : {"scheduling.x-k8s.io", "scheduling.sigs.k8s.io"}) {
    grant(g, "elasticquotas", {"get", "list", "watch"});
    grant(g, "elasticquotas/status", {"patch"});
  }
  grant("", "pods/binding", {"create"});
  grant("", "pods/eviction", {"create"});
  // Requeue nudge and gate removal (patch); gate detection's dry-run create.
  grant("", "pods", {"create", "patch"});
  grant("scheduling.x-k8s.io", "podgroups", {"get", "list", "watch"});
  grant("scheduling.k8s.io", "workloads", {"get", "list", "watch"});
  grant("events.k8s.io", "events", {"create", "patch"});  // Events on pending pods
  CHECK(granted == want);

  // The stock kube-scheduler's built-in roles are bound to the pod's service account.
  const auto deployment = Find(rendered, "Deployment", "capacity-scheduler");
  REQUIRE(deployment);
  const std::string sa = Str((*deployment)["spec"]["template"]["spec"]["serviceAccountName"]);
  REQUIRE(Find(rendered, "ServiceAccount", sa));
  std::set<std::string> bound;
  for (const char* kind : {"ClusterRoleBinding", "RoleBinding"}) {
    for (const YAML::Node& b : OfKind(rendered, kind)) {
      for (const YAML::Node& s : b["subjects"]) {
        if (Str(s["kind"]) == "ServiceAccount" && Str(s["name"]) == sa &&
            Str(s["namespace"]) == "capacity-extender")
          bound.insert(Str(b["roleRef"]["kind"]) + ":" + Str(b["roleRef"]["name"]));
      }
    }
  }
  for (const char* role :
       {"ClusterRole:capacity-extender", "ClusterRole:system:kube-scheduler",
        "ClusterRole:system:volume-scheduler", "Role:extension-apiserver-authentication-reader",
        "Role:capacity-scheduler-leader-election", "Role:capacity-extender-lease-reader"}) {
    INFO(role);
    CHECK(bound.count(role) == 1);
  }

  // Leader election: the lease the scheduler config names, in the namespace it names.
  const Configs c = LoadConfigs(rendered);
  const YAML::Node le = c.scheduler["leaderElection"];
  const auto role = Find(rendered, "Role", "capacity-scheduler-leader-election");
  REQUIRE(role);
  CHECK(Str((*role)["metadata"]["namespace"]) == Str(le["resourceNamespace"]));
  bool named_lease = false;
  for (const YAML::Node& rule : (*role)["rules"])
    for (const YAML::Node& n : rule["resourceNames"])
      named_lease = named_lease || Str(n) == Str(le["resourceName"]);
  CHECK(named_lease);
}

TEST_CASE(
    "two replicas, one actor: spread, budgeted, rolled one at a time, following the "
    "scheduler's lease",
    "[deploy]") {
  REQUIRE_RENDERED();
  const Configs c = LoadConfigs(rendered);
  const YAML::Node spec = c.deployment["spec"];
  CHECK(spec["replicas"].as<int>() == 2);
  CHECK(Str(spec["strategy"]["type"]) == "RollingUpdate");
  CHECK(spec["strategy"]["rollingUpdate"]["maxUnavailable"].as<int>() == 1);
  CHECK(spec["strategy"]["rollingUpdate"]["maxSurge"].as<int>() == 0);
  const YAML::Node labels = spec["template"]["metadata"]["labels"];
  auto selects_pods = [&](const YAML::Node& match_labels) {
    if (!match_labels.IsMap() || match_labels.size() == 0) return false;
    for (const auto& kv : match_labels)
      if (Str(labels[kv.first.as<std::string>()]) != Str(kv.second)) return false;
    return true;
  };
  // Required anti-affinity: never two on one node.
  const YAML::Node terms = spec["template"]["spec"]["affinity"]["podAntiAffinity"]
                               ["requiredDuringSchedulingIgnoredDuringExecution"];
  REQUIRE(terms.IsSequence());
  REQUIRE(terms.size() == 1);
  CHECK(Str(terms[0]["topologyKey"]) == "kubernetes.io/hostname");
  CHECK(selects_pods(terms[0]["labelSelector"]["matchLabels"]));
  // A drain takes at most one.
  const auto pdb = Find(rendered, "PodDisruptionBudget", "capacity-scheduler");
  REQUIRE(pdb);
  CHECK(Str((*pdb)["metadata"]["namespace"]) == "capacity-extender");
  CHECK((*pdb)["spec"]["maxUnavailable"].as<int>() == 1);
  CHECK(selects_pods((*pdb)["spec"]["selector"]["matchLabels"]));

  // The sidecars follow the scheduler's own lease, with its lease duration and a margin.
  const YAML::Node le = c.scheduler["leaderElection"];
  CHECK(le["leaderElect"].as<bool>());
  CHECK(Str(c.extender["leaderElection"]) == "follow-scheduler");
  CHECK(Str(c.extender["leaderLease"]) ==
        Str(le["resourceNamespace"]) + "/" + Str(le["resourceName"]));
  CHECK(Str(c.extender["leaseDuration"]) == Str(le["leaseDuration"]));
  CHECK(Str(c.extender["leaseDuration"]) == "15s");
  CHECK(Str(c.extender["leaseRenewDeadline"]) == "10s");
  CHECK(Str(c.extender["leaderIdentity"]).empty());  // the hostname: the pod name
  // The sidecar may read that lease, and only read it.
  const auto reader = Find(rendered, "Role", "capacity-extender-lease-reader");
  REQUIRE(reader);
  CHECK(Str((*reader)["metadata"]["namespace"]) == Str(le["resourceNamespace"]));
  REQUIRE((*reader)["rules"].size() == 1);
  const YAML::Node rule = (*reader)["rules"][0];
  CHECK(Str(rule["apiGroups"][0]) == "coordination.k8s.io");
  CHECK(Str(rule["resources"][0]) == "leases");
  REQUIRE(rule["resourceNames"].size() == 1);
  CHECK(Str(rule["resourceNames"][0]) == Str(le["resourceName"]));
  REQUIRE(rule["verbs"].size() == 1);
  CHECK(Str(rule["verbs"][0]) == "get");
}

TEST_CASE("ElasticQuota CRD is compatible with scheduler-plugins'", "[deploy]") {
  REQUIRE_RENDERED();
  const auto crd = Find(rendered, "CustomResourceDefinition", "elasticquotas.scheduling.x-k8s.io");
  REQUIRE(crd);
  const YAML::Node spec = (*crd)["spec"];
  CHECK(Str((*crd)["metadata"]["annotations"]["api-approved.kubernetes.io"]) ==
        "https://github.com/kubernetes-sigs/scheduler-plugins/pull/52");
  CHECK(Str(spec["group"]) == "scheduling.x-k8s.io");
  CHECK(Str(spec["scope"]) == "Namespaced");
  CHECK(Str(spec["names"]["kind"]) == "ElasticQuota");
  CHECK(Str(spec["names"]["listKind"]) == "ElasticQuotaList");
  CHECK(Str(spec["names"]["plural"]) == "elasticquotas");
  CHECK(Str(spec["names"]["singular"]) == "elasticquota");
  REQUIRE(spec["names"]["shortNames"].size() == 2);
  CHECK(Str(spec["names"]["shortNames"][0]) == "eq");
  CHECK(Str(spec["names"]["shortNames"][1]) == "eqs");
  REQUIRE(spec["versions"].size() == 1);
  const YAML::Node v = spec["versions"][0];
  CHECK(Str(v["name"]) == "v1alpha1");
  CHECK(v["served"].as<bool>());
  CHECK(v["storage"].as<bool>());
  CHECK(v["subresources"]["status"].IsMap());

  std::vector<std::string> columns;
  for (const YAML::Node& col : v["additionalPrinterColumns"])
    columns.push_back(Str(col["name"]) + "=" + Str(col["jsonPath"]));
  CHECK(columns == std::vector<std::string>{"Used=.status.used", "Min=.spec.min", "Max=.spec.max",
                                            "Age=.metadata.creationTimestamp"});

  const std::string quantity =
      R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)";
  const YAML::Node props = v["schema"]["openAPIV3Schema"]["properties"];
  for (const YAML::Node& list :
       {props["spec"]["properties"]["min"], props["spec"]["properties"]["max"],
        props["status"]["properties"]["used"]}) {
    const YAML::Node item = list["additionalProperties"];
    CHECK(Str(item["pattern"]) == quantity);
    CHECK(item["x-kubernetes-int-or-string"].as<bool>());
    REQUIRE(item["anyOf"].size() == 2);
    CHECK(Str(item["anyOf"][0]["type"]) == "integer");
    CHECK(Str(item["anyOf"][1]["type"]) == "string");
  }
}
}  // namespace deploy_manifests_test
