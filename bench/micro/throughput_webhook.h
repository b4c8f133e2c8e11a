// Gate mode's /mutate webhook as bench_throughput_bench's "product-gate" runs it: the product's
// webhook listener on a free port of 127.0.0.1 and kube-apiserver calling it at every pod's
// creation, as deploy/webhook installs it.
//  * MakeWebhookTls: a throwaway CA and a serving certificate for IP 127.0.0.1, made with the
//    openssl CLI as deploy/webhook/make-certs.sh makes them (its scratch, the CA key included,
//    in a temporary folder removed at once).
//  * FreeTcpPort: a port nothing listens on now, on every interface (the listener binds
//    0.0.0.0); another process may take it before the product does (the run then retries).
//  * MutatingWebhookRegistration: deploy/webhook/mutating-webhook.yaml's
//    MutatingWebhookConfiguration under another name, its clientConfig pointed at the
//    listener (url and caBundle), applied with kubectl; Register returns once the API server
//    calls the webhook, Remove once it no longer does (failurePolicy Fail: a stale registration
//    would refuse the next configuration's pods).
//  * OutcomeOfCreation: what the create responses of the pods carried, our gate or the
//    admitted-at annotation (docs/workloads-live.md#admission-at-creation).
// Thread-safety: one thread at a time.
#pragma once

#include <netinet/in.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/podcost_child_process.h"
#include "config/base64.h"
#include "config/yaml_json.h"
#include "core/pod.h"
#include "core/status.h"
#include "tests/support/real_control_plane.h"
#include "tests/support/run_command.h"
#include "tests/support/test_paths.h"

namespace capext::bench {

// The serving material of the product's webhook listener.
struct WebhookTls {
  std::string ca_pem;     // the CA certificate: the registration's caBundle
  std::string cert_file;  // --webhook-tls-cert: the serving certificate, IP SAN 127.0.0.1
  std::string key_file;   // --webhook-tls-key
  bool ok() const { return !ca_pem.empty(); }
};

// Writes ca.crt, tls.crt and tls.key into `dir` (created). The certificates are valid for two
// days: a benchmark's lifetime.
inline Status MakeWebhookTls(const std::string& dir, WebhookTls* out) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string scratch_template =
      (std::filesystem::temp_directory_path(ec) / "throughput-webhook-XXXXXX").string();
  if (mkdtemp(scratch_template.data()) == nullptr)
    return Status::Unavailable("cannot make a temporary folder for openssl");
  const std::string scratch = scratch_template;
  struct RemoveScratch {
    std::string path;
    ~RemoveScratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } remove_scratch{scratch};
  const std::string ca = dir + "/ca.crt", cert = dir + "/tls.crt", key = dir + "/tls.key";
  const std::string ca_key = scratch + "/ca.key", csr = scratch + "/tls.csr",
                    serial = scratch + "/ca.srl", ext = scratch + "/server.ext";
  std::ofstream(ext) << "basicConstraints = critical, CA:FALSE\n"
                        "keyUsage = critical, digitalSignature, keyEncipherment\n"
                        "extendedKeyUsage = serverAuth\n"
                        "subjectAltName = IP:127.0.0.1\n";
  const std::vector<std::vector<std::string>> commands = {
      {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-sha256", "-subj",
       "/CN=capacity-extender-bench-ca", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
       "keyUsage=critical,keyCertSign,cRLSign", "-keyout", ca_key, "-out", ca},
      {"openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
       "-keyout", key, "-out", csr},
      {"openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
       "-CAserial", serial, "-days", "2", "-sha256", "-extfile", ext, "-out", cert},
      {"openssl", "verify", "-CAfile", ca, cert}};
  for (const auto& argv : commands) {
    const test::CommandResult result = test::RunCommand(argv, {}, std::chrono::seconds(60));
    if (!result.ok()) {
      std::string line;
      for (const std::string& a : argv)
        line += (line.empty() ? "" : " ") + a;
      return Status::Unavailable(line + " failed:\n" + result.output);
    }
  }
  *out = {ReadWholeFile(ca), cert, key};
  if (!out->ok()) return Status::Unavailable("openssl wrote no " + ca);
  return {};
}

// A TCP port free on every interface now; 0 when none could be had.
inline uint16_t FreeTcpPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

// What the create responses (the pods as stored) carried.
struct PodCreationOutcome {
  int gated = 0;     // our scheduling gate in spec.schedulingGates
  int admitted = 0;  // the admitted-at annotation: admitted at creation by /mutate
  int unreadable = 0;
};

inline void CountCreatedPod(const std::string& body, PodCreationOutcome* outcome) {
  rapidjson::Document pod;
  pod.Parse(body.c_str(), body.size());
  if (pod.HasParseError() || !pod.IsObject()) {
    ++outcome->unreadable;
    return;
  }
  if (pod.HasMember("spec") && pod["spec"].IsObject() && pod["spec"].HasMember("schedulingGates") &&
      pod["spec"]["schedulingGates"].IsArray()) {
    for (const auto& gate : pod["spec"]["schedulingGates"].GetArray()) {
      if (gate.IsObject() && gate.HasMember("name") && gate["name"].IsString() &&
          std::string(gate["name"].GetString()) == kQuotaGate) {
        ++outcome->gated;
        break;
      }
    }
  }
  if (pod.HasMember("metadata") && pod["metadata"].IsObject() &&
      pod["metadata"].HasMember("annotations") && pod["metadata"]["annotations"].IsObject() &&
      pod["metadata"]["annotations"].HasMember(kAdmittedAtAnnotation)) {
    ++outcome->admitted;
  }
}

inline PodCreationOutcome OutcomeOfCreation(const std::vector<std::string>& responses) {
  PodCreationOutcome outcome;
  for (const std::string& body : responses)
    CountCreatedPod(body, &outcome);
  return outcome;
}

// deploy/webhook/mutating-webhook.yaml's webhook, registered as `name` for the listener on
// 127.0.0.1:<port>; removed (and waited out) by Remove or the destructor.
class MutatingWebhookRegistration {
 public:
  // `probe_namespace`: a namespace the registration's selector takes in (a quota namespace).
  MutatingWebhookRegistration(test::RealControlPlane& cluster, std::string probe_namespace,
                              std::string name = "capacity-extender-bench")
      : cluster_(cluster), probe_namespace_(std::move(probe_namespace)), name_(std::move(name)) {}
  MutatingWebhookRegistration(const MutatingWebhookRegistration&) = delete;
  MutatingWebhookRegistration& operator=(const MutatingWebhookRegistration&) = delete;
  ~MutatingWebhookRegistration() { (void)Remove(); }

  // Applies the registration and waits until a dry-run pod creation in the probe namespace
  // comes back gated: the API server calls the webhook (a dry run is always gated, and holds
  // nothing). Its informer picks a new registration up a moment after the write.
  Status Register(uint16_t port, const WebhookTls& tls) {
    YAML::Node config;
    try {
      config = YAML::LoadFile(test::SourcePath("deploy/webhook/mutating-webhook.yaml"));
    } catch (const YAML::Exception& e) {
      return Status::Invalid(std::string("deploy/webhook/mutating-webhook.yaml: ") + e.what());
    }
    if (!config["webhooks"] || !config["webhooks"].IsSequence() || config["webhooks"].size() != 1)
      return Status::Invalid("deploy/webhook/mutating-webhook.yaml: not one webhook");
    config["metadata"]["name"] = name_;
    YAML::Node webhook = config["webhooks"][0];
    YAML::Node client;
    client["url"] = fmt::format("https://127.0.0.1:{}/mutate", port);
    client["caBundle"] = Base64(tls.ca_pem);
    webhook["clientConfig"] = client;
    // As JSON (which kubectl applies as YAML): an emitted YAML loses the quotes that keep the
    // namespaceSelector's "true" a string; the conversion keeps quoted scalars strings.
    rapidjson::Document json;
    rapidjson::Value root;
    if (Status s = YamlToJson(config, json.GetAllocator(), &root); !s.ok()) return s;
    // deploy/'s 5 s would refuse a pod whose call is slow on this shared machine and end the
    // run; with 10 s a slow call shows in the creation's time instead.
    root["webhooks"][0]["timeoutSeconds"].SetInt(10);
    rapidjson::StringBuffer text;
    rapidjson::Writer<rapidjson::StringBuffer> writer(text);
    root.Accept(writer);
    registered_ = true;  // from here on, Remove has something to undo
    if (Status s = cluster_.Apply(text.GetString()); !s.ok()) return s;
    std::string last;
    const bool called = PollUntil(
        [&] {
          const kube::RestResponse probe = DryRunPod();
          PodCreationOutcome outcome;
          if (probe.ok()) CountCreatedPod(probe.body, &outcome);
          last = fmt::format("{} {}{}", probe.status, probe.error, probe.body.substr(0, 600));
          return outcome.gated == 1;
        },
        std::chrono::seconds(30), std::chrono::milliseconds(100));
    if (!called) {
      return Status::Unavailable(
          "the API server did not call the registered /mutate webhook within 30 s (a dry-run "
          "pod in " +
          probe_namespace_ + " came back ungated); last answer: " + last);
    }
    return {};
  }

  // Deletes the registration and waits until a dry-run pod creation in the probe namespace
  // succeeds without our gate: the API server no longer calls the webhook.
  Status Remove() {
    if (!registered_) return {};
    const kube::RestResponse deleted = cluster_.api().Delete(
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/" + name_);
    if (!deleted.ok() && deleted.status != 404) {
      return Status::Unavailable(fmt::format("DELETE mutatingwebhookconfiguration {}: {} {}{}",
                                             name_, deleted.status, deleted.error, deleted.body));
    }
    const bool gone = PollUntil(
        [&] {
          const kube::RestResponse probe = DryRunPod();
          PodCreationOutcome outcome;
          if (probe.ok()) CountCreatedPod(probe.body, &outcome);
          return probe.ok() && outcome.gated == 0;
        },
        std::chrono::seconds(30), std::chrono::milliseconds(100));
    if (!gone) {
      return Status::Unavailable("the API server still calls the deleted webhook " + name_ +
                                 " 30 s later");
    }
    registered_ = false;
    return {};
  }

 private:
  kube::RestResponse DryRunPod() {
    return cluster_.api().Post(
        "/api/v1/namespaces/" + probe_namespace_ + "/pods?dryRun=All",
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"webhook-probe"},)"
        R"("spec":{"schedulerName":"default-scheduler","containers":[{"name":"main",)"
        R"("image":"registry.k8s.io/pause:3.9","resources":{"requests":{"cpu":"10m"}}}]}})");
  }

  test::RealControlPlane& cluster_;
  std::string probe_namespace_;
  std::string name_;
  bool registered_ = false;
};

}  // namespace capext::bench
