// RealControlPlane (real_control_plane.h): scripts/control-plane.sh does the processes, this
// class the objects (through the admin REST client and kubectl).
#include "tests/support/real_control_plane.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "extender/kube/kube_config.h"
#include "tests/support/test_paths.h"

namespace capext::test {
namespace {

std::string ScriptPath() {
  return SourcePath("scripts/control-plane.sh");
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// NAME=value lines (values may be single-quoted) into a map.
std::map<std::string, std::string> ParseState(const std::string& text) {
  std::map<std::string, std::string> state;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
      value = value.substr(1, value.size() - 2);
    }
    state[line.substr(0, eq)] = value;
  }
  return state;
}

std::string NowRfc3339() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void WriteResources(JsonWriter& w, const FakeNode& node) {
  w.StartObject();
  w.Key("cpu");
  w.String(node.cpu.c_str());
  w.Key("memory");
  w.String(node.memory.c_str());
  w.Key("pods");
  w.String(node.pods.c_str());
  for (const auto& [name, value] : node.extended) {
    w.Key(name.c_str());
    w.String(value.c_str());
  }
  w.EndObject();
}

std::string NodeJson(const FakeNode& node) {
  rapidjson::StringBuffer out;
  JsonWriter w(out);
  w.StartObject();
  w.Key("apiVersion");
  w.String("v1");
  w.Key("kind");
  w.String("Node");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  w.String(node.name.c_str());
  w.Key("labels");
  w.StartObject();
  std::map<std::string, std::string> labels = node.labels;
  labels["kubernetes.io/hostname"] = node.name;
  for (const auto& [key, value] : labels) {
    w.Key(key.c_str());
    w.String(value.c_str());
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return out.GetString();
}

std::string NodeStatusPatch(const FakeNode& node) {
  const std::string now = NowRfc3339();
  rapidjson::StringBuffer out;
  JsonWriter w(out);
  w.StartObject();
  w.Key("status");
  w.StartObject();
  w.Key("capacity");
  WriteResources(w, node);
  w.Key("allocatable");
  WriteResources(w, node);
  w.Key("conditions");
  w.StartArray();
  w.StartObject();
  for (const auto& [key, value] :
       std::vector<std::pair<const char*, std::string>>{{"type", "Ready"},
                                                        {"status", "True"},
                                                        {"reason", "KubeletReady"},
                                                        {"message", "fake node, no kubelet"},
                                                        {"lastHeartbeatTime", now},
                                                        {"lastTransitionTime", now}}) {
    w.Key(key);
    w.String(value.c_str());
  }
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return out.GetString();
}

}  // namespace

std::string RealControlPlane::Unavailable() {
  const CommandResult check = RunCommand({ScriptPath(), "check"}, {}, std::chrono::seconds(60));
  if (check.exit_code == 0) return "";
  return Trimmed(check.output.empty() ? "scripts/control-plane.sh check failed" : check.output);
}

RealControlPlane::RealControlPlane(ControlPlaneOptions options) : options_(std::move(options)) {}

RealControlPlane::~RealControlPlane() {
  Stop();
}

CommandResult RealControlPlane::Script(const std::string& command,
                                       const std::vector<std::string>& env) const {
  std::vector<std::string> all = {"CONTROL_PLANE_DIR=" + dir_};
  all.insert(all.end(), env.begin(), env.end());
  return RunCommand({ScriptPath(), command}, all, std::chrono::minutes(5));
}

Status RealControlPlane::Start() {
  if (started_) return Status::Conflict("the control plane is already started");
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/capext_control_plane_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return Status::Unavailable("mkdtemp " + pattern);
  dir_ = pattern;
  started_ = true;  // from here on Stop() has something to clean up
  const CommandResult up = Script(
      "up", {"OWNER_PID=" + std::to_string(getpid()), "KUBE_BIN_CACHE=" + BinaryDir() + "/kube-bin",
             "FEATURE_GATES=" + options_.feature_gates,
             "APISERVER_V=" + std::to_string(options_.apiserver_verbosity)});
  if (!up.ok()) return Status::Unavailable("control-plane.sh up failed:\n" + up.output);
  state_ = ParseState(ReadAll(dir_ + "/state.env"));
  return ConnectApi();
}

Status RealControlPlane::ConnectApi() {
  api_.reset();
  kube::KubeConfig config;
  Status loaded = kube::LoadKubeConfigFile(AdminKubeconfig(), {}, &config);
  if (!loaded.ok()) return loaded;
  kube::RestClientOptions client_options;
  client_options.user_agent = "capacity-extender-tests";
  client_options.max_connections = 8;
  return kube::RestClient::Create(config, client_options, &api_);
}

Status RealControlPlane::StartScheduler(const SchedulerOptions& o) {
  if (!started_) return Status::Unavailable("start the control plane first");
  const CommandResult started = Script(
      "scheduler", {"EXTENDER_URL=" + o.extender_url, "FILTER_VERB=" + o.filter_verb,
                    "PRIORITIZE_VERB=" + o.prioritize_verb, "PREEMPT_VERB=" + o.preempt_verb,
                    "BIND_VERB=" + o.bind_verb, "EXTENDER_WEIGHT=" + std::to_string(o.weight),
                    "HTTP_TIMEOUT=" + o.http_timeout,
                    std::string("NODE_CACHE_CAPABLE=") + (o.node_cache_capable ? "true" : "false"),
                    std::string("ENABLE_HTTPS=") + (o.enable_https ? "true" : "false"),
                    std::string("IGNORABLE=") + (o.ignorable ? "true" : "false"),
                    "SCHEDULER_NAME=" + o.scheduler_name, "SCHED_V=" + std::to_string(o.verbosity),
                    "SCHED_QPS=" + (o.client_qps > 0 ? std::to_string(o.client_qps) : ""),
                    "SCHED_BURST=" + (o.client_burst > 0 ? std::to_string(o.client_burst) : ""),
                    "SCHED_CONFIG=" + o.config_file});
  if (!started.ok())
    return Status::Unavailable("control-plane.sh scheduler failed:\n" + started.output);
  return {};
}

Status RealControlPlane::StopScheduler() {
  if (!started_) return {};
  const CommandResult stopped = Script("stop-scheduler");
  if (!stopped.ok())
    return Status::Unavailable("control-plane.sh stop-scheduler failed:\n" + stopped.output);
  return {};
}

Status RealControlPlane::KillApiServer() {
  const CommandResult killed = Script("kill-apiserver");
  if (!killed.ok())
    return Status::Unavailable("control-plane.sh kill-apiserver failed:\n" + killed.output);
  return {};
}

Status RealControlPlane::RestartApiServer() {
  const CommandResult started = Script("start-apiserver");
  if (!started.ok()) {
    return Status::Unavailable("control-plane.sh start-apiserver failed:\n" + started.output);
  }
  // The old client's kept-alive connections went with the killed process: the tests' client
  // starts clean rather than count on its retry of a stale connection.
  return ConnectApi();
}

void RealControlPlane::Stop() {
  if (!started_) return;
  started_ = false;
  api_.reset();
  (void)Script("down");
  if (std::getenv("CE_KEEP_CONTROL_PLANE_DIR") == nullptr) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::string RealControlPlane::server() const {
  auto it = state_.find("SERVER");
  return it == state_.end() ? "" : it->second;
}

std::string RealControlPlane::AdminKubeconfig() const {
  return dir_ + "/etc/admin.kubeconfig";
}
std::string RealControlPlane::CaFile() const {
  return dir_ + "/pki/ca.crt";
}
std::string RealControlPlane::SchedulerLogPath() const {
  return dir_ + "/logs/kube-scheduler.log";
}
std::string RealControlPlane::ApiServerLogPath() const {
  return dir_ + "/logs/kube-apiserver.log";
}
std::string RealControlPlane::Log(const std::string& path) const {
  return ReadAll(path);
}

int RealControlPlane::Pid(const std::string& process) const {
  const std::string text = Trimmed(ReadAll(dir_ + "/pids/" + process + ".pid"));
  if (text.empty()) return -1;
  const int pid = std::atoi(text.c_str());
  return pid > 0 && ::kill(pid, 0) == 0 ? pid : -1;
}

std::string RealControlPlane::EtcdUrl() const {
  auto it = state_.find("ETCD_PORT");
  return it == state_.end() ? "" : "http://127.0.0.1:" + it->second;
}

CommandResult RealControlPlane::Kubectl(const std::vector<std::string>& args) const {
  auto it = state_.find("KUBECTL");
  if (it == state_.end()) return {-1, "kubectl: the control plane is not started"};
  std::vector<std::string> argv = {it->second, "--kubeconfig", AdminKubeconfig()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, {}, std::chrono::minutes(2));
}

Status RealControlPlane::Apply(const std::string& yaml) const {
  const std::string path = dir_ + "/apply-" + std::to_string(++applied_) + ".yaml";
  std::ofstream(path, std::ios::binary) << yaml;
  return ApplyFiles({path});
}

Status RealControlPlane::ApplyFiles(const std::vector<std::string>& paths) const {
  std::vector<std::string> args = {"apply"};
  for (const std::string& p : paths) {
    args.push_back("-f");
    args.push_back(!p.empty() && p[0] == '/' ? p : SourcePath(p));
  }
  const CommandResult applied = Kubectl(args);
  if (!applied.ok()) return Status::Invalid("kubectl apply failed:\n" + applied.output);
  return {};
}

Status RealControlPlane::SendAll(const std::vector<ApiRequest>& requests) {
  // In slices the client's queue holds (RestClientOptions::max_queued, 4,096): 5,000 nodes are
  // 5,000 requests per round.
  constexpr std::size_t kSlice = 1024;
  std::string failures;
  for (std::size_t first = 0; first < requests.size(); first += kSlice) {
    const std::size_t end = std::min(requests.size(), first + kSlice);
    std::mutex mutex;
    std::condition_variable done;
    std::size_t left = end - first;
    for (std::size_t i = first; i < end; ++i) {
      const ApiRequest& r = requests[i];
      api_->SendAsync(r.method, r.path, r.body, r.content_type,
                      [&, what = r.method + " " + r.path](kube::RestResponse response) {
                        std::lock_guard<std::mutex> lock(mutex);
                        if (!response.ok()) {
                          failures += what + ": " + std::to_string(response.status) + " " +
                                      response.error + " " + response.body + "\n";
                        }
                        if (--left == 0) done.notify_all();
                      });
    }
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return left == 0; });
  }
  if (!failures.empty()) return Status::Unavailable(failures);
  return {};
}

Status RealControlPlane::CreateNamespace(const std::string& name) {
  for (const auto& [path, body] : std::vector<std::pair<std::string, std::string>>{
           {"/api/v1/namespaces",
            R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + R"("}})"},
           {"/api/v1/namespaces/" + name + "/serviceaccounts",
            R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}})"}}) {
    const kube::RestResponse created = api_->Post(path, body);
    if (!created.ok() && created.status != 409) {
      return Status::Unavailable("POST " + path + ": " + std::to_string(created.status) + " " +
                                 created.error + created.body);
    }
  }
  return {};
}

Status RealControlPlane::CreateFakeNode(const FakeNode& node) {
  return CreateFakeNodes({node});
}

Status RealControlPlane::CreateFakeNodes(const std::vector<FakeNode>& nodes) {
  // Three rounds: every Node, then every status, then every taint list. Admission added the
  // not-ready taint at creation, so the last round must come after the first.
  std::vector<ApiRequest> creates, statuses, taints;
  for (const FakeNode& node : nodes) {
    creates.push_back({"POST", "/api/v1/nodes", NodeJson(node), "application/json"});
    statuses.push_back({"PATCH", "/api/v1/nodes/" + node.name + "/status", NodeStatusPatch(node),
                        "application/merge-patch+json"});
    taints.push_back({"PATCH", "/api/v1/nodes/" + node.name,
                      R"({"spec":{"taints":)" + node.taints_json + "}}",
                      "application/merge-patch+json"});
  }
  for (const auto* round : {&creates, &statuses, &taints}) {
    if (Status s = SendAll(*round); !s.ok()) return s;
  }
  return {};
}

Status RealControlPlane::CreateFakeNodes(int count, const std::string& cpu,
                                         const std::string& memory, const std::string& pods,
                                         const std::string& prefix) {
  std::vector<FakeNode> nodes(static_cast<std::size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i) {
    FakeNode& node = nodes[static_cast<std::size_t>(i)];
    node.name = prefix + std::to_string(i);
    node.cpu = cpu;
    node.memory = memory;
    node.pods = pods;
  }
  return CreateFakeNodes(nodes);
}

Status RealControlPlane::MarkPodRunning(const std::string& ns, const std::string& name) {
  const std::string now = NowRfc3339();
  const kube::RestResponse patched =
      api_->Patch("/api/v1/namespaces/" + ns + "/pods/" + name + "/status",
                  R"({"status":{"phase":"Running","startTime":")" + now +
                      R"(","conditions":[{"type":"Ready","status":"True","lastTransitionTime":")" +
                      now + R"("}]}})",
                  "application/strategic-merge-patch+json");
  if (!patched.ok()) {
    return Status::Unavailable("pod " + ns + "/" + name + " status: " +
                               std::to_string(patched.status) + " " + patched.error + patched.body);
  }
  return {};
}

Status RealControlPlane::InstallExtenderRbac() {
  if (Status s =
          ApplyFiles({"deploy/namespace.yaml", "deploy/crd/elasticquota-crd.yaml", "deploy/rbac"});
      !s.ok()) {
    return s;
  }
  const CommandResult established = Kubectl("wait", "--for=condition=Established", "--timeout=60s",
                                            "crd/elasticquotas.scheduling.x-k8s.io");
  if (!established.ok()) return Status::Unavailable("CRD not established:\n" + established.output);
  return {};
}

Status RealControlPlane::WriteExtenderKubeconfig(std::string* path) {
  const CommandResult token =
      Kubectl("create", "token", "capacity-scheduler", "-n", "capacity-extender", "--duration=1h");
  if (!token.ok()) return Status::Unavailable("kubectl create token failed:\n" + token.output);
  *path = dir_ + "/etc/extender.kubeconfig";
  std::ofstream out(*path, std::ios::binary);
  out << "apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: "
      << server() << "\n    certificate-authority: " << CaFile()
      << "\nusers:\n- name: capacity-scheduler\n  user:\n    token: " << Trimmed(token.output)
      << "\ncontexts:\n- name: extender\n  context: {cluster: local, user: capacity-scheduler, "
         "namespace: capacity-extender}\ncurrent-context: extender\n";
  return {};
}

}  // namespace capext::test
