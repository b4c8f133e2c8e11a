#include "extender/kube/kube_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "extender/kube/kube_log.h"

namespace capext::kube {
namespace {

bool ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream content;
  content << in.rdbuf();
  *out = content.str();
  return true;
}

// Standard base64 (RFC 4648 section 4), whitespace ignored, padding optional.
bool DecodeBase64(const std::string& text, std::string* out) {
  out->clear();
  uint32_t accumulator = 0;
  int bits = 0;
  bool padding_seen = false;
  for (char c : text) {
    int value;
    if (c >= 'A' && c <= 'Z') {
      value = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      value = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      value = c - '0' + 52;
    } else if (c == '+') {
      value = 62;
    } else if (c == '/') {
      value = 63;
    } else if (c == '=') {
      padding_seen = true;
      continue;
    } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      continue;
    } else {
      return false;
    }
    if (padding_seen) return false;  // data after '='
    accumulator = (accumulator << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((accumulator >> bits) & 0xFF));
    }
  }
  return bits < 6;  // a lone 6-bit group cannot encode a byte
}

std::string Scalar(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  if (!value || !value.IsScalar()) return "";
  return value.Scalar();
}

// The `field` map of the entry of `list` whose name is `name` (kubeconfig's named lists).
YAML::Node FindNamed(const YAML::Node& list, const std::string& name, const char* field) {
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const auto& entry : list) {
    if (entry.IsMap() && Scalar(entry, "name") == name) return entry[field];
  }
  return YAML::Node();
}

std::string ResolvePath(const std::string& kubeconfig_path, const std::string& file) {
  std::filesystem::path p(file);
  if (p.is_absolute()) return file;
  return (std::filesystem::path(kubeconfig_path).parent_path() / p).string();
}

// Reads `<field>-data` (base64) or `<field>` (a file path) into *pem. Either may be absent.
Status ReadPemField(const std::string& kubeconfig_path, const YAML::Node& map,
                    const std::string& field, const std::string& where, std::string* pem) {
  std::string data = Scalar(map, (field + "-data").c_str());
  if (!data.empty()) {
    if (!DecodeBase64(data, pem)) {
      return Status::Error(where + "." + field + "-data is not valid base64");
    }
    return Status::Ok();
  }
  std::string file = Scalar(map, field.c_str());
  if (file.empty()) return Status::Ok();
  std::string resolved = ResolvePath(kubeconfig_path, file);
  if (!ReadWholeFile(resolved, pem)) {
    return Status::Error(where + "." + field + ": cannot read " + resolved);
  }
  return Status::Ok();
}

Status LoadParsedKubeConfig(const std::string& path, const YAML::Node& root,
                            const KubeConfigFileOptions& options, KubeConfig* out) {
  std::string context_name =
      options.context.empty() ? Scalar(root, "current-context") : options.context;
  if (context_name.empty()) return Status::Error("no current-context and no context chosen");
  YAML::Node context = FindNamed(root["contexts"], context_name, "context");
  if (!context || !context.IsMap()) {
    return Status::Error("context \"" + context_name + "\" not found in contexts");
  }
  std::string cluster_name = Scalar(context, "cluster");
  YAML::Node cluster = FindNamed(root["clusters"], cluster_name, "cluster");
  if (!cluster || !cluster.IsMap()) {
    return Status::Error("cluster \"" + cluster_name + "\" (of context \"" + context_name +
                         "\") not found in clusters");
  }
  KubeConfig config;
  config.origin = "kubeconfig " + path + ", context " + context_name;
  config.namespace_name = Scalar(context, "namespace");
  config.server = Scalar(cluster, "server");
  while (!config.server.empty() && config.server.back() == '/')
    config.server.pop_back();
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return Status::Error("cluster \"" + cluster_name + "\".server must be an http(s) URL, got \"" +
                         config.server + "\"");
  }
  std::string cluster_where = "cluster \"" + cluster_name + "\"";
  Status status =
      ReadPemField(path, cluster, "certificate-authority", cluster_where, &config.ca_pem);
  if (!status.ok()) return status;
  if (cluster["insecure-skip-tls-verify"]) {
    try {
      config.insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"].as<bool>();
    } catch (const YAML::Exception&) {
      return Status::Error(cluster_where + ".insecure-skip-tls-verify must be true or false");
    }
  }
  if (config.insecure_skip_tls_verify && !config.ca_pem.empty()) {
    // kubectl refuses this combination too: the user cannot have meant both.
    return Status::Error(cluster_where +
                         ": certificate-authority together with insecure-skip-tls-verify");
  }

  std::string user_name = Scalar(context, "user");
  if (!user_name.empty()) {
    YAML::Node user = FindNamed(root["users"], user_name, "user");
    if (!user) {
      return Status::Error("user \"" + user_name + "\" (of context \"" + context_name +
                           "\") not found in users");
    }
    std::string user_where = "user \"" + user_name + "\"";
    if (user.IsMap()) {
      if (user["exec"] || user["auth-provider"]) {
        return Status::Error(user_where +
                             ": exec and auth-provider credential plugins are not supported; "
                             "use a token, tokenFile or client certificate");
      }
      status = ReadPemField(path, user, "client-certificate", user_where, &config.client_cert_pem);
      if (!status.ok()) return status;
      status = ReadPemField(path, user, "client-key", user_where, &config.client_key_pem);
      if (!status.ok()) return status;
      if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
        return Status::Error(user_where + ": client-certificate and client-key must come together");
      }
      std::string token_file = Scalar(user, "tokenFile");
      std::string token = Scalar(user, "token");
      if (!token_file.empty()) {
        if (!token.empty()) {
          Log(LogSeverity::kInfo, user_where + " has token and tokenFile: using tokenFile");
        }
        status = BearerTokenSource::FromFile(ResolvePath(path, token_file),
                                             options.token_recheck_interval, &config.token);
        if (!status.ok()) return status.WithContext(user_where + ".tokenFile");
      } else if (!token.empty()) {
        config.token = BearerTokenSource::Fixed(token);
      }
    }
  }
  if (config.insecure_skip_tls_verify) {
    Log(LogSeverity::kWarning,
        "TLS VERIFICATION OF THE API SERVER IS DISABLED (insecure-skip-tls-verify: true in " +
            config.origin + "): anyone on the path can impersonate the API server");
  }
  if (config.server.rfind("http://", 0) == 0) {
    Log(LogSeverity::kWarning, "API server " + config.server + " is plain HTTP (" + config.origin +
                                   "): credentials and cluster data travel unencrypted");
  }
  *out = std::move(config);
  return Status::Ok();
}

}  // namespace

Status LoadKubeConfigFile(const std::string& path, const KubeConfigFileOptions& options,
                          KubeConfig* out) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status::Error("kubeconfig " + path + ": cannot read the file");
  } catch (const YAML::Exception& e) {
    return Status::Error("kubeconfig " + path + ": " + e.what());
  }
  try {
    Status status = LoadParsedKubeConfig(path, root, options, out);
    return status.ok() ? status : status.WithContext("kubeconfig " + path);
  } catch (const YAML::Exception& e) {
    return Status::Error("kubeconfig " + path + ": " + e.what());
  }
}

bool RunningInCluster() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  return host != nullptr && *host != '\0';
}

Status LoadInClusterConfig(const InClusterSource& source, KubeConfig* out) {
  std::string host = source.host;
  std::string port = source.port;
  if (host.empty()) {
    const char* env = std::getenv("KUBERNETES_SERVICE_HOST");
    host = env ? env : "";
  }
  if (port.empty()) {
    const char* env = std::getenv("KUBERNETES_SERVICE_PORT");
    port = env ? env : "";
  }
  if (host.empty() || port.empty()) {
    return Status::Error(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  KubeConfig config;
  bool ipv6 = host.find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + host + "]" : host) + ":" + port;
  config.origin = "in-cluster service account";
  if (!ReadWholeFile(source.ca_file, &config.ca_pem) || config.ca_pem.empty()) {
    return Status::Error("in-cluster config: cannot read CA file " + source.ca_file);
  }
  Status status =
      BearerTokenSource::FromFile(source.token_file, source.token_recheck_interval, &config.token);
  if (!status.ok()) return status.WithContext("in-cluster config");
  std::string ns;
  if (ReadWholeFile(source.namespace_file, &ns)) {
    while (!ns.empty() && (ns.back() == '\n' || ns.back() == ' '))
      ns.pop_back();
    config.namespace_name = ns;
  }
  *out = std::move(config);
  return Status::Ok();
}

Status LoadKubeConfig(const std::string& kubeconfig_path, KubeConfig* out) {
  if (!kubeconfig_path.empty()) return LoadKubeConfigFile(kubeconfig_path, {}, out);
  if (RunningInCluster()) return LoadInClusterConfig(InClusterSource{}, out);
  return Status::Error(
      "no API server configured: pass --kubeconfig FILE, or run in a pod (in-cluster)");
}

}  // namespace capext::kube
