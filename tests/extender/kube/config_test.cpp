// KubeConfig loading (kubeconfig files, in-cluster) and BearerTokenSource rotation.
#include "extender/kube/kube_config.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "extender/kube/kube_log.h"
#include "tests/support/apiserver_double_process.h"

namespace capext::kube {
namespace config_test {
namespace {

using testing::TempDir;

// "hello" -> "aGVsbG8=" etc.: enough base64 for PEM-looking payloads.
const char* kCaPem = "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
const char* kCaPemBase64 =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClEwRT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=";

std::string KubeconfigYaml(const std::string& cluster_extra, const std::string& user_extra,
                           const std::string& current = "main") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: " + current +
         "\n"
         "clusters:\n"
         "- name: c1\n"
         "  cluster:\n"
         "    server: https://10.0.0.1:6443/\n" +
         cluster_extra +
         "- name: c2\n"
         "  cluster:\n"
         "    server: https://other:443\n"
         "contexts:\n"
         "- name: main\n"
         "  context: {cluster: c1, user: u1, namespace: team-a}\n"
         "- name: second\n"
         "  context: {cluster: c2, user: u2}\n"
         "users:\n"
         "- name: u1\n"
         "  user:\n" +
         user_extra +
         "- name: u2\n"
         "  user:\n"
         "    token: second-token\n";
}

// Captures log lines for the duration of a test.
class CapturedLog {
 public:
  CapturedLog() {
    SetLogSink([this](LogSeverity severity, const std::string& message) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.push_back({severity, message});
    });
  }
  ~CapturedLog() { SetLogSink(nullptr); }
  bool Contains(LogSeverity severity, const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [s, m] : lines_) {
      if (s == severity && m.find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<LogSeverity, std::string>> lines_;
};

TEST_CASE("kubeconfig: current context with server namespace token and CA data", "[kube]") {
  TempDir dir;
  dir.Write("config",
            KubeconfigYaml("    certificate-authority-data: " + std::string(kCaPemBase64) + "\n",
                           "    token: abc123\n"));
  KubeConfig config;
  Status status = LoadKubeConfigFile(dir.File("config"), {}, &config);
  REQUIRE(status.ok());
  CHECK(config.server == "https://10.0.0.1:6443");  // trailing '/' dropped
  CHECK(config.namespace_name == "team-a");
  CHECK(config.ca_pem == kCaPem);
  CHECK(!config.insecure_skip_tls_verify);
  REQUIRE(config.token);
  CHECK(!config.token->from_file());
  CHECK(config.token->Current() == "abc123");
  CHECK(config.origin.find("context main") != std::string::npos);
}

TEST_CASE("kubeconfig: an explicit context wins over current-context", "[kube]") {
  TempDir dir;
  dir.Write("config", KubeconfigYaml("", "    token: abc\n"));
  KubeConfig config;
  KubeConfigFileOptions options;
  options.context = "second";
  REQUIRE(LoadKubeConfigFile(dir.File("config"), options, &config).ok());
  CHECK(config.server == "https://other:443");
  CHECK(config.token->Current() == "second-token");
  CHECK(config.namespace_name.empty());
}

TEST_CASE("kubeconfig: files are relative to the kubeconfig - tokenFile wins over token",
          "[kube]") {
  TempDir dir;
  std::filesystem::create_directories(dir.File("certs"));
  dir.Write("certs/ca.pem", kCaPem);
  dir.Write("certs/client.pem", "CLIENT CERT");
  dir.Write("certs/client.key", "CLIENT KEY");
  dir.Write("token", "  file-token\n");
  dir.Write("config", KubeconfigYaml("    certificate-authority: certs/ca.pem\n",
                                     "    client-certificate: certs/client.pem\n"
                                     "    client-key: " +
                                         dir.File("certs/client.key") +
                                         "\n"
                                         "    token: inline-token\n"
                                         "    tokenFile: token\n"));
  KubeConfig config;
  Status status = LoadKubeConfigFile(dir.File("config"), {}, &config);
  REQUIRE(status.ok());
  CHECK(config.ca_pem == kCaPem);
  CHECK(config.client_cert_pem == "CLIENT CERT");
  CHECK(config.client_key_pem == "CLIENT KEY");
  REQUIRE(config.token);
  CHECK(config.token->from_file());
  CHECK(config.token->Current() == "file-token");
}

TEST_CASE("kubeconfig: client certificate and key data are base64", "[kube]") {
  TempDir dir;
  dir.Write("config", KubeconfigYaml("",
                                     "    client-certificate-data: Q0VSVA==\n"
                                     "    client-key-data: S0VZ\n"));
  KubeConfig config;
  REQUIRE(LoadKubeConfigFile(dir.File("config"), {}, &config).ok());
  CHECK(config.client_cert_pem == "CERT");
  CHECK(config.client_key_pem == "KEY");
  CHECK(!config.token);
}

TEST_CASE("kubeconfig: insecure-skip-tls-verify only when written - and loudly", "[kube]") {
  TempDir dir;
  CapturedLog log;
  dir.Write("config", KubeconfigYaml("    insecure-skip-tls-verify: true\n", "    token: t\n"));
  KubeConfig config;
  REQUIRE(LoadKubeConfigFile(dir.File("config"), {}, &config).ok());
  CHECK(config.insecure_skip_tls_verify);
  CHECK(log.Contains(LogSeverity::kWarning, "TLS VERIFICATION OF THE API SERVER IS DISABLED"));

  dir.Write("config2", KubeconfigYaml("    insecure-skip-tls-verify: true\n"
                                      "    certificate-authority-data: " +
                                          std::string(kCaPemBase64) + "\n",
                                      "    token: t\n"));
  Status both = LoadKubeConfigFile(dir.File("config2"), {}, &config);
  REQUIRE(!both.ok());
  CHECK(both.message().find("insecure-skip-tls-verify") != std::string::npos);
}

TEST_CASE("kubeconfig: errors name the file and the missing piece", "[kube]") {
  TempDir dir;
  KubeConfig config;
  Status missing = LoadKubeConfigFile(dir.File("nope"), {}, &config);
  REQUIRE(!missing.ok());
  CHECK(missing.message().find("nope") != std::string::npos);

  dir.Write("config", KubeconfigYaml("", "    token: t\n", "ghost"));
  Status no_context = LoadKubeConfigFile(dir.File("config"), {}, &config);
  REQUIRE(!no_context.ok());
  CHECK(no_context.message().find("context \"ghost\" not found") != std::string::npos);

  dir.Write("exec", KubeconfigYaml("", "    exec: {command: aws}\n"));
  Status exec = LoadKubeConfigFile(dir.File("exec"), {}, &config);
  REQUIRE(!exec.ok());
  CHECK(exec.message().find("not supported") != std::string::npos);

  dir.Write("badb64", KubeconfigYaml("    certificate-authority-data: '@@@'\n", ""));
  Status bad = LoadKubeConfigFile(dir.File("badb64"), {}, &config);
  REQUIRE(!bad.ok());
  CHECK(bad.message().find("certificate-authority-data") != std::string::npos);

  dir.Write("notoken", KubeconfigYaml("", "    tokenFile: missing-token\n"));
  Status no_token = LoadKubeConfigFile(dir.File("notoken"), {}, &config);
  REQUIRE(!no_token.ok());
  CHECK(no_token.message().find("missing-token") != std::string::npos);

  dir.Write("yaml", "clusters: [\n");
  CHECK(!LoadKubeConfigFile(dir.File("yaml"), {}, &config).ok());
}

TEST_CASE("in-cluster config from service-account files", "[kube]") {
  TempDir dir;
  dir.Write("token", "sa-token\n");
  dir.Write("ca.crt", kCaPem);
  dir.Write("namespace", "kube-system");
  InClusterSource source;
  source.token_file = dir.File("token");
  source.ca_file = dir.File("ca.crt");
  source.namespace_file = dir.File("namespace");
  source.host = "10.96.0.1";
  source.port = "443";
  KubeConfig config;
  REQUIRE(LoadInClusterConfig(source, &config).ok());
  CHECK(config.server == "https://10.96.0.1:443");
  CHECK(config.ca_pem == kCaPem);
  CHECK(config.namespace_name == "kube-system");
  REQUIRE(config.token);
  CHECK(config.token->from_file());
  CHECK(config.token->Current() == "sa-token");

  source.host = "fd00::1";
  REQUIRE(LoadInClusterConfig(source, &config).ok());
  CHECK(config.server == "https://[fd00::1]:443");

  source.token_file = dir.File("absent");
  Status status = LoadInClusterConfig(source, &config);
  REQUIRE(!status.ok());
  CHECK(status.message().find("absent") != std::string::npos);
}

TEST_CASE("without --kubeconfig outside a pod there is no configuration", "[kube]") {
  if (RunningInCluster()) return;  // this check only means something outside a pod
  KubeConfig config;
  Status status = LoadKubeConfig("", &config);
  REQUIRE(!status.ok());
  CHECK(status.message().find("--kubeconfig") != std::string::npos);
}

TEST_CASE("a rotated token file is picked up after the recheck interval", "[kube]") {
  TempDir dir;
  dir.Write("token", "first");
  std::shared_ptr<BearerTokenSource> token;
  REQUIRE(BearerTokenSource::FromFile(dir.File("token"), std::chrono::hours(1), &token).ok());
  CHECK(token->Current() == "first");

  dir.Write("token", "second-longer");  // size differs: a change even within one mtime tick
  CHECK(token->Current() == "first");   // the interval has not passed
  CHECK(token->ForceReload());          // what a 401 does
  CHECK(token->Current() == "second-longer");

  std::shared_ptr<BearerTokenSource> eager;
  REQUIRE(
      BearerTokenSource::FromFile(dir.File("token"), std::chrono::milliseconds(0), &eager).ok());
  dir.Write("token", "third");
  CHECK(eager->Current() == "third");

  dir.Write("token", "");  // an empty rewrite (mid-rotation) keeps the last good token
  CHECK(eager->Current() == "third");

  auto fixed = BearerTokenSource::Fixed("fixed");
  CHECK(!fixed->ForceReload());
  CHECK(fixed->Current() == "fixed");
}

}  // namespace
}  // namespace config_test
}  // namespace capext::kube
