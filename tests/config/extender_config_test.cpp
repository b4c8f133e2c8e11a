// Tests for the extender config: the flag/key table, LoadExtenderConfigFile, ParseServeFlags,
// ValidateExtenderConfig, ServeFlagsHelp and FormatDiagnostic.
#include "config/extender_config.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>
#include "tests/support/temp_dir.h"

#include "config/config_fields.h"
#include "config/duration_text.h"
#include "tests/support/test_paths.h"

namespace capext {
namespace extender_config_test {
namespace {

using std::chrono::milliseconds;

// A config file in a directory of its own (unique across parallel test processes), removed when
// the test ends.
class TempConfig {
 public:
  explicit TempConfig(const std::string& text) : path_(dir_.Write("extender-config.yaml", text)) {}
  std::string path() const { return path_; }

 private:
  capext::testing::TempDir dir_;
  std::string path_;
};

std::string Joined(const std::vector<ValidationFinding>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics)
    out += FormatDiagnostic(d) + "\n";
  return out;
}

// Each of these says whether the call appended no finding.
bool Parse(const std::vector<std::string>& args, ExtenderConfig* config,
           std::vector<ValidationFinding>* diagnostics) {
  bool help = false;
  const std::size_t before = diagnostics->size();
  ParseServeFlags(args, config, diagnostics, &help);
  CHECK_FALSE(help);
  return diagnostics->size() == before;
}
bool Load(const std::string& path, ExtenderConfig* config,
          std::vector<ValidationFinding>* diagnostics) {
  const std::size_t before = diagnostics->size();
  LoadExtenderConfigFile(path, config, diagnostics);
  return diagnostics->size() == before;
}
bool Validate(const ExtenderConfig& config, std::vector<ValidationFinding>* diagnostics) {
  const std::size_t before = diagnostics->size();
  ValidateExtenderConfig(config, diagnostics);
  return diagnostics->size() == before;
}

TEST_CASE("every setting has a distinct flag and key, and help shows each with its default") {
  std::set<std::string> flags, keys;
  const std::string help = ServeFlagsHelp();
  for (const auto& f : ExtenderConfigFields()) {
    INFO(f.key);
    CHECK(flags.insert(f.flag).second);
    CHECK(keys.insert(f.key).second);
    CHECK(help.find(std::string("--") + f.flag) != std::string::npos);
    CHECK(help.find(std::string("[") + f.key + "]") != std::string::npos);
  }
  CHECK(help.find("--request-timeout DURATION") != std::string::npos);
  CHECK(help.find("(default 4s)") != std::string::npos);
  CHECK(help.find("(default 16Mi)") != std::string::npos);
  CHECK(help.find("--config FILE") != std::string::npos);
}

TEST_CASE("formatting a default and reading it back gives the default") {
  const ExtenderConfig defaults;
  for (const auto& f : ExtenderConfigFields()) {
    INFO(f.key);
    ExtenderConfig config;
    const std::string text = FormatConfigField(f, defaults);
    if (text.empty()) continue;  // empty strings
    REQUIRE(SetConfigField(f, text, ValueSource::kFlag, &config).ok());
    CHECK(FormatConfigField(f, config) == text);
  }
}

TEST_CASE("durations read like Go's and print in their shortest exact form") {
  const std::vector<std::pair<std::string, int64_t>> good = {
      {"0", 0},           {"500ms", 500}, {"60s", 60000},  {"2m", 120000}, {"1h", 3600000},
      {"1h30m", 5400000}, {"1.5s", 1500}, {"0.5m", 30000}, {"4s", 4000}};
  for (const auto& [text, ms] : good) {
    INFO(text);
    milliseconds d{};
    REQUIRE(ParseDuration(text, &d).ok());
    CHECK(d.count() == ms);
  }
  for (const std::string text : {"", "4", "-1s", "1d", "s", "1.5ms", "1 s", "abc"}) {
    INFO(text);
    milliseconds d{1};
    const Status s = ParseDuration(text, &d);
    CHECK(s.code() == StatusCode::kInvalid);
    CHECK(s.message().find("duration \"" + text + "\"") != std::string::npos);
    CHECK(d.count() == 1);  // unchanged
  }
  CHECK(FormatDuration(milliseconds(600000)) == "10m");
  CHECK(FormatDuration(milliseconds(1500)) == "1500ms");
  CHECK(FormatDuration(milliseconds(0)) == "0s");
}

TEST_CASE("flags: both spellings, booleans bare or with a value, last one wins") {
  ExtenderConfig config;
  std::vector<ValidationFinding> diagnostics;
  REQUIRE(Parse({"--port", "9000", "--listen-address=0.0.0.0", "--cross-node-reclaim",
                 "--status-updates=false", "--body-limit", "1Mi", "--request-timeout=3s",
                 "--max-evictions-per-second", "0.5", "--port=9001", "--bind-deadline=4500ms",
                 "--max-binds-in-flight", "64", "--bind-connections=8"},
                &config, &diagnostics));
  CHECK(diagnostics.empty());
  CHECK(config.port == 9001);
  CHECK(config.listen_address == "0.0.0.0");
  CHECK(config.cross_node_reclaim);
  CHECK_FALSE(config.status_updates);
  CHECK(config.body_limit == 1024 * 1024);
  CHECK(config.request_timeout == milliseconds(3000));
  CHECK(config.max_evictions_per_second == 0.5);
  CHECK(config.bind_deadline == milliseconds(4500));
  CHECK(config.max_binds_in_flight == 64);
  CHECK(config.bind_connections == 8);
}

TEST_CASE("flags: every problem is reported, with the flag named") {
  ExtenderConfig config;
  std::vector<ValidationFinding> diagnostics;
  CHECK_FALSE(Parse({"--prot", "1", "--threads", "two", "--ignore-not-ready=maybe", "stray",
                     "--reclaim-interval", "5", "--scoring"},
                    &config, &diagnostics));
  const std::string text = Joined(diagnostics);
  CHECK(text.find("--prot: unknown flag (did you mean \"port\"?)") != std::string::npos);
  CHECK(text.find("--threads: expected an integer, got \"two\"") != std::string::npos);
  CHECK(text.find("--ignore-not-ready: expected true or false, got \"maybe\"") !=
        std::string::npos);
  CHECK(text.find("stray: unexpected argument") != std::string::npos);
  CHECK(text.find("--reclaim-interval: duration \"5\": missing unit") != std::string::npos);
  CHECK(text.find("--scoring: needs a value (NAME)") != std::string::npos);
  CHECK(config.threads == 2);  // a bad value leaves the setting alone
}

TEST_CASE("serve flags: --help is reported without parsing anything else") {
  ExtenderConfig config;
  std::vector<ValidationFinding> diagnostics;
  bool help = false;
  ParseServeFlags({"--nonsense", "-h"}, &config, &diagnostics, &help);
  CHECK(help);
  CHECK(diagnostics.empty());
}

TEST_CASE("serve flags: --config loads the file first; flags win wherever they appear") {
  TempConfig file("port: 7000\nthreads: 8\nreclaim: dry-run\nrequestTimeout: 2s\n");
  ExtenderConfig config;
  std::vector<ValidationFinding> diagnostics;
  REQUIRE(Parse({"--threads", "3", "--config", file.path()}, &config, &diagnostics));
  CHECK(config.port == 7000);
  CHECK(config.threads == 3);
  CHECK(config.reclaim == "dry-run");
  CHECK(config.request_timeout == milliseconds(2000));
  CHECK_FALSE(Parse({"--config=" + file.path(), "--config", file.path()}, &config, &diagnostics));
  CHECK(Joined(diagnostics).find("--config: given more than once") != std::string::npos);
}

TEST_CASE("the config file: unknown keys, wrong types and duplicates name file, line and key") {
  TempConfig file(
      "# comment\n"
      "port: \"8888\"\n"
      "listenAdress: 0.0.0.0\n"
      "threads: [1]\n"
      "ignoreNotReady: yes\n"
      "bodyLimit: lots\n"
      "port: 1\n"
      "snapshot:\n");
  ExtenderConfig config;
  std::vector<ValidationFinding> diagnostics;
  CHECK_FALSE(Load(file.path(), &config, &diagnostics));
  const std::string text = Joined(diagnostics);
  const std::string p = file.path();
  CHECK(text.find(p + ":2: port: expected an integer, got the string \"8888\"") !=
        std::string::npos);
  CHECK(text.find(p + ":3: listenAdress: unknown key (did you mean \"listenAddress\"?)") !=
        std::string::npos);
  CHECK(text.find(p + ":4: threads: expected a value, got a list") != std::string::npos);
  CHECK(text.find(p + ":5: ignoreNotReady: expected true or false, got \"yes\"") !=
        std::string::npos);
  CHECK(text.find(p + ":6: bodyLimit: expected a size in bytes") != std::string::npos);
  CHECK(text.find(p + ":7: port: given twice") != std::string::npos);
  CHECK(diagnostics.size() == 6);  // "snapshot:" (null) keeps the default
}

TEST_CASE("the config file: unreadable, not YAML, two documents, not a map") {
  ExtenderConfig config;
  std::vector<ValidationFinding> diagnostics;
  CHECK_FALSE(Load("/nonexistent/config.yaml", &config, &diagnostics));
  CHECK(Joined(diagnostics).find("cannot read") != std::string::npos);
  for (const std::string text : {"port: [1\n", "port: 1\n---\nport: 2\n", "- port\n"}) {
    TempConfig file(text);
    diagnostics.clear();
    INFO(text);
    CHECK_FALSE(Load(file.path(), &config, &diagnostics));
  }
  TempConfig empty("# nothing\n");
  diagnostics.clear();
  CHECK(Load(empty.path(), &config, &diagnostics));
}

TEST_CASE("the deploy config lists every key and is valid") {
  const std::string path = capext::test::SourcePath("deploy/config/extender-config.yaml");
  if (!std::filesystem::exists(path)) {
    WARN("deploy/config/extender-config.yaml not written yet");
    return;
  }
  ExtenderConfig config;
  std::vector<ValidationFinding> diagnostics;
  CHECK(Load(path, &config, &diagnostics));
  CHECK(Validate(config, &diagnostics));
  CHECK(Joined(diagnostics).empty());
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& key : ExtenderConfigKeys()) {
    INFO(key);
    CHECK(text.find("\n" + key + ":") != std::string::npos);
  }
}

TEST_CASE(
    "deviceClassMappings: Kueue's list, read strictly "
    "(docs/devices.md#4-the-quota-resource-of-a-deviceclass)") {
  TempConfig good(
      "deviceClassMappings:\n"
      "  - name: nvidia.com/gpu\n"
      "    deviceClassNames: [gpu.nvidia.com, a100.nvidia.com]\n"
      "  - {name: example.com/fpga, deviceClassNames: [fpga.example.com], "
      "allocationModeAllCount: 4}\n");
  ExtenderConfig config;
  std::vector<ValidationFinding> diagnostics;
  REQUIRE(Load(good.path(), &config, &diagnostics));
  REQUIRE(config.device_class_mappings.size() == 2);
  CHECK(config.device_class_mappings[0].resource == "nvidia.com/gpu");
  CHECK(config.device_class_mappings[0].device_classes ==
        std::vector<std::string>{"gpu.nvidia.com", "a100.nvidia.com"});
  CHECK_FALSE(config.device_class_mappings[0].all_count);
  CHECK(config.device_class_mappings[1].all_count == 4);

  TempConfig bad(
      "deviceClassMappings:\n"
      "  - {name: nvidia.com/gpu, deviceClassNames: [gpu.nvidia.com], colour: red}\n"
      "  - {name: other, deviceClassNames: [gpu.nvidia.com]}\n"
      "  - {deviceClassNames: [x], allocationModeAllCount: -1}\n");
  diagnostics.clear();
  ExtenderConfig unchanged;
  CHECK_FALSE(Load(bad.path(), &unchanged, &diagnostics));
  const std::string all = Joined(diagnostics);
  CHECK_THAT(all, Catch::Contains("colour"));
  CHECK_THAT(all, Catch::Contains("DeviceClass gpu.nvidia.com is mapped twice"));
  CHECK_THAT(all, Catch::Contains("expected a non-negative integer"));
  CHECK_THAT(all, Catch::Contains("name: missing"));
  CHECK(unchanged.device_class_mappings.empty());
}

TEST_CASE("validation: the defaults are valid") {
  std::vector<ValidationFinding> diagnostics;
  CHECK(Validate(ExtenderConfig{}, &diagnostics));
  CHECK(diagnostics.empty());
}

TEST_CASE("validation: policy names, modes and cross-field rules") {
  struct Case {
    std::function<void(ExtenderConfig*)> change;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](ExtenderConfig* c) { c->scoring = "least-alocated"; },
       "scoring: unknown scoring \"least-alocated\" (did you mean \"least-allocated\"?)"},
      {[](ExtenderConfig* c) { c->victim_order = "random"; }, "victimOrder: unknown victim order"},
      {[](ExtenderConfig* c) { c->quota_semantics = "k8s"; }, "quotaSemantics: unknown"},
      {[](ExtenderConfig* c) { c->reclaim = "true"; }, "reclaim: unknown reclaim mode \"true\""},
      {[](ExtenderConfig* c) { c->reserve_at = "prefilter"; },
       "reserveAt: unknown reserveAt verb \"prefilter\""},
      {[](ExtenderConfig* c) { c->watch_encoding = "yaml"; },
       "watchEncoding: unknown watch encoding \"yaml\""},
      {[](ExtenderConfig* c) { c->log_format = "text"; }, "logFormat: unknown log format"},
      {[](ExtenderConfig* c) { c->log_level = "trace"; }, "logLevel: unknown log level"},
      {[](ExtenderConfig* c) { c->port = 70000; }, "port: port 70000 is outside 0..65535"},
      {[](ExtenderConfig* c) { c->webhook_port = -1; }, "webhookPort: port -1 is outside"},
      {[](ExtenderConfig* c) { c->tls_cert_file = "c.pem"; },
       "tlsKeyFile: tlsCertFile and tlsKeyFile must be given together"},
      {[](ExtenderConfig* c) { c->client_ca_file = "ca.pem"; },
       "clientCAFile: client certificates need TLS"},
      {[](ExtenderConfig* c) { c->webhook_port = 8443; },
       "webhookPort: the admission webhook is HTTPS only"},
      {[](ExtenderConfig* c) { c->webhook_tls_key_file = "k.pem"; },
       "webhookTLSCertFile: webhookTLSCertFile and webhookTLSKeyFile must be given together"},
      {[](ExtenderConfig* c) {
         c->snapshot = "s.yaml";
         c->kubeconfig = "k";
       },
       "snapshot: snapshot (embedded mode) and kubeconfig (live mode) exclude each other"},
      {[](ExtenderConfig* c) { c->path_prefix = "scheduler"; },
       "pathPrefix: \"scheduler\" must start with /"},
      {[](ExtenderConfig* c) { c->threads = 0; }, "threads: 0 is outside 1..1024"},
      {[](ExtenderConfig* c) { c->request_timeout = milliseconds(0); },
       "requestTimeout: must be longer than 0"},
      {[](ExtenderConfig* c) { c->max_evictions_per_second = 0; },
       "maxEvictionsPerSecond: must be larger than 0"},
      {[](ExtenderConfig* c) { c->body_limit = 0; }, "bodyLimit: must be larger than 0"},
      {[](ExtenderConfig* c) { c->bind_deadline = milliseconds(0); },
       "bindDeadline: must be longer than 0"},
      {[](ExtenderConfig* c) { c->max_binds_in_flight = 0; },
       "maxBindsInFlight: 0 is outside 1..1000000"},
      {[](ExtenderConfig* c) { c->bind_connections = 2000; },
       "bindConnections: 2000 is outside 1..1024"},
      {[](ExtenderConfig* c) { c->filter_hold_queued_binds = -1; },
       "filterHoldQueuedBinds: -1 is outside 0..1000000"},
      {[](ExtenderConfig* c) { c->filter_hold_limit = milliseconds(-1); },
       "filterHoldLimit: must not be negative (0s: never hold)"},
      {[](ExtenderConfig* c) { c->leader_election = "lease"; },
       "leaderElection: unknown leader election mode \"lease\""},
      {[](ExtenderConfig* c) { c->leader_lease = "kube-scheduler"; },
       "leaderLease: \"kube-scheduler\" must be namespace/name"},
      {[](ExtenderConfig* c) { c->leader_lease = "kube-system/"; },
       "leaderLease: \"kube-system/\" must be namespace/name"},
      {[](ExtenderConfig* c) { c->lease_renew_deadline = milliseconds(15000); },
       "leaseRenewDeadline: 15000 ms must be shorter than leaseDuration (15000 ms)"},
      {[](ExtenderConfig* c) { c->lease_check_interval = milliseconds(6000); },
       "leaseCheckInterval: 6000 ms must be at most half of leaseRenewDeadline (10000 ms)"},
  };
  for (const auto& c : cases) {
    INFO(c.expected);
    ExtenderConfig config;
    c.change(&config);
    std::vector<ValidationFinding> diagnostics;
    CHECK_FALSE(Validate(config, &diagnostics));
    REQUIRE(diagnostics.size() == 1);
    CHECK(FormatDiagnostic(diagnostics[0]).find(c.expected) != std::string::npos);
  }
}

TEST_CASE("a webhook with both files, on a port of its own, is valid") {
  ExtenderConfig config;
  config.webhook_port = 8443;
  config.webhook_tls_cert_file = "tls.crt";
  config.webhook_tls_key_file = "tls.key";
  std::vector<ValidationFinding> diagnostics;
  CHECK(Validate(config, &diagnostics));
  config.webhook_port = config.port;
  CHECK_FALSE(Validate(config, &diagnostics));
}

TEST_CASE("FormatDiagnostic leaves out what is unknown") {
  CHECK(FormatDiagnostic({Severity::kError, 3, "port", "bad", "f.yaml"}) == "f.yaml:3: port: bad");
  CHECK(FormatDiagnostic({Severity::kError, 0, "", "bad", "f.yaml"}) == "f.yaml: bad");
  CHECK(FormatDiagnostic({Severity::kError, 0, "--port", "bad"}) == "--port: bad");
}

}  // namespace
}  // namespace extender_config_test
}  // namespace capext
