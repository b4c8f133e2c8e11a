// The only file that includes cpprestsdk: its headers cost seconds per translation unit.
#include "extender/kube/rest_client.h"

#include <cpprest/http_client.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pplx/threadpool.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "extender/kube/kube_log.h"

namespace capext::kube {
namespace {

namespace http = web::http;
namespace http_client = web::http::client;

constexpr size_t kMaxWatchLine = 64u << 20;  // one event larger than this is a broken stream
constexpr size_t kReadBuffer = 64u << 10;

struct TlsMaterial {
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;
};

// Adds every certificate of a PEM bundle to `store`; returns how many.
int AddPemCertificates(X509_STORE* store, const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return 0;
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++added;
    X509_free(cert);
  }
  ERR_clear_error();  // the loop ends on a "no start line" error
  BIO_free(bio);
  return added;
}

// Configures one TLS context (cpprestsdk builds one per new connection and hands it to us).
// Throws std::exception on unusable material; Create() runs it once up front so that never
// happens inside cpprestsdk.
void ApplyTls(boost::asio::ssl::context& context, const TlsMaterial& tls) {
  SSL_CTX* native = context.native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  if (!tls.ca_pem.empty()) {
    // A fresh store drops the system roots cpprestsdk loaded: only the cluster CA is trusted.
    X509_STORE* store = X509_STORE_new();
    if (AddPemCertificates(store, tls.ca_pem) == 0) {
      X509_STORE_free(store);
      throw std::runtime_error("the certificate-authority data holds no PEM certificate");
    }
    SSL_CTX_set_cert_store(native, store);  // takes ownership
  }
  if (!tls.cert_pem.empty()) {
    context.use_certificate_chain(boost::asio::buffer(tls.cert_pem));
    context.use_private_key(boost::asio::buffer(tls.key_pem), boost::asio::ssl::context::pem);
  }
}

std::string DescribeException(const std::exception& e) {
  if (auto* http_error = dynamic_cast<const http::http_exception*>(&e)) {
    std::string text = http_error->what();
    // cpprestsdk maps asio's "end of file" (misc category, value 2) into the generic category,
    // where 2 reads "No such file or directory": say what it means instead.
    std::error_code code = http_error->error_code();
    std::string detail =
        code.value() == ENOENT ? "connection closed by the server" : code.message();
    if (!detail.empty() && text.find(detail) == std::string::npos) text += " (" + detail + ")";
    return text;
  }
  return e.what();
}

}  // namespace

void InitializeHttpThreadPool(size_t threads) {
  static std::once_flag once;
  bool first = false;
  std::call_once(once, [&] {
    first = true;
    try {
      crossplat::threadpool::initialize_with_threads(threads);
    } catch (const std::exception& e) {
      Log(LogSeverity::kWarning,
          std::string("cpprestsdk thread pool already running, size unchanged: ") + e.what());
    }
  });
  if (!first) Log(LogSeverity::kInfo, "InitializeHttpThreadPool called again: ignored");
}

class RestClient::Impl {
 public:
  Impl(KubeConfig config, RestClientOptions options)
      : config_(std::move(config)),
        options_(std::move(options)),
        tls_(std::make_shared<const TlsMaterial>(
            TlsMaterial{config_.ca_pem, config_.client_cert_pem, config_.client_key_pem})),
        client_(web::uri(config_.server), MakeConfig(options_.request_timeout)) {}

  http_client::http_client_config MakeConfig(std::chrono::milliseconds timeout) const {
    http_client::http_client_config config;
    config.set_timeout(timeout);
    config.set_validate_certificates(!config_.insecure_skip_tls_verify);
    std::shared_ptr<const TlsMaterial> tls = tls_;
    config.set_ssl_context_callback(
        [tls](boost::asio::ssl::context& context) { ApplyTls(context, *tls); });
    return config;
  }

  std::string CurrentToken() const { return config_.token ? config_.token->Current() : ""; }

  http::http_request MakeRequest(const std::string& method, const std::string& path,
                                 const std::string& token) const {
    http::http_request request(method);
    request.set_request_uri(web::uri(path));
    request.headers().add("Accept", "application/json");
    request.headers().add("User-Agent", options_.user_agent);
    if (!token.empty()) request.headers().add("Authorization", "Bearer " + token);
    return request;
  }

  RestResponse SendOnce(const std::string& method, const std::string& path, std::string body,
                        const std::string& content_type, const std::string& token,
                        std::stop_token stop) {
    RestResponse result;
    pplx::cancellation_token_source cancel;
    std::stop_callback on_stop(stop, [&cancel] { cancel.cancel(); });
    try {
      http::http_request request = MakeRequest(method, path, token);
      if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
        request.set_body(std::move(body), content_type);
      }
      http::http_response response = client_.request(request, cancel.get_token()).get();
      result.status = response.status_code();
      // Bodies of any size may arrive chunked (README fact 6): cpprestsdk de-chunks them.
      result.body = response.extract_utf8string(true).get();
    } catch (const pplx::task_canceled&) {
      result.status = 0;
      result.error = "cancelled";
    } catch (const std::exception& e) {
      // A cancelled request surfaces as an http_exception (operation_canceled) as often as a
      // task_canceled: the stop request, not the exception type, says it was ours.
      result.status = 0;
      result.error =
          stop.stop_requested() ? "cancelled" : method + " " + path + ": " + DescribeException(e);
    }
    return result;
  }

  KubeConfig config_;
  RestClientOptions options_;
  std::shared_ptr<const TlsMaterial> tls_;
  http_client::http_client client_;  // ordinary requests; thread-safe, pools connections
};

RestClient::RestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestClient::~RestClient() = default;

Status RestClient::Create(const KubeConfig& config, const RestClientOptions& options,
                          std::unique_ptr<RestClient>* out) {
  if (config.server.empty()) return Status::Error("API server URL is empty");
  if (config.server.rfind("https://", 0) == 0) {
    try {
      boost::asio::ssl::context probe(boost::asio::ssl::context::sslv23_client);
      ApplyTls(probe, TlsMaterial{config.ca_pem, config.client_cert_pem, config.client_key_pem});
    } catch (const std::exception& e) {
      return Status::Error(std::string("TLS configuration for ") + config.server + " (" +
                           config.origin + "): " + e.what());
    }
  }
  try {
    out->reset(new RestClient(std::make_unique<Impl>(config, options)));
  } catch (const std::exception& e) {
    return Status::Error("API server URL \"" + config.server + "\": " + e.what());
  }
  return Status::Ok();
}

const std::string& RestClient::server() const {
  return impl_->config_.server;
}

RestResponse RestClient::Send(const std::string& method, const std::string& path, std::string body,
                              const std::string& content_type, std::stop_token stop) {
  std::string token = impl_->CurrentToken();
  bool may_retry = impl_->config_.token && impl_->config_.token->from_file();
  RestResponse response =
      impl_->SendOnce(method, path, may_retry ? body : std::move(body), content_type, token, stop);
  if (response.status == 401 && may_retry && impl_->config_.token->ForceReload()) {
    std::string fresh = impl_->CurrentToken();
    if (fresh != token) {
      response = impl_->SendOnce(method, path, std::move(body), content_type, fresh, stop);
    }
  }
  return response;
}

RestResponse RestClient::Get(const std::string& path, std::stop_token stop) {
  return Send("GET", path, "", "", stop);
}
RestResponse RestClient::Post(const std::string& path, std::string body,
                              const std::string& content_type) {
  return Send("POST", path, std::move(body), content_type);
}
RestResponse RestClient::Put(const std::string& path, std::string body,
                             const std::string& content_type) {
  return Send("PUT", path, std::move(body), content_type);
}
RestResponse RestClient::Patch(const std::string& path, std::string body,
                               const std::string& content_type) {
  return Send("PATCH", path, std::move(body), content_type);
}
RestResponse RestClient::Delete(const std::string& path) {
  return Send("DELETE", path, "", "");
}

WatchResult RestClient::Watch(const std::string& path, std::chrono::milliseconds inactivity_timeout,
                              const LineCallback& on_line, std::stop_token stop) {
  WatchResult result;
  // A client of its own: its inactivity timeout must exceed the watch's timeoutSeconds, unlike
  // ordinary calls, and a cancelled stream must not disturb the shared connection pool.
  http_client::http_client client(web::uri(impl_->config_.server),
                                  impl_->MakeConfig(inactivity_timeout));
  pplx::cancellation_token_source cancel;
  std::stop_callback on_stop(stop, [&cancel] { cancel.cancel(); });
  std::string token = impl_->CurrentToken();
  try {
    http::http_response response =
        client.request(impl_->MakeRequest("GET", path, token), cancel.get_token()).get();
    result.status = response.status_code();
    if (result.status != 200) {
      result.body = response.extract_utf8string(true).get();
      if (result.status == 401 && impl_->config_.token) impl_->config_.token->ForceReload();
      return result;
    }
    // The response task completed with the headers; the body streams in as chunks arrive.
    // getn(n) waits until n bytes are buffered, so ask for what is already there (at least 1
    // byte) to hand each event over as soon as it arrives. in_avail() only grows under us.
    concurrency::streams::streambuf<uint8_t> body = response.body().streambuf();
    std::vector<uint8_t> buffer(kReadBuffer);
    std::string pending;  // bytes after the last '\n' seen
    while (!stop.stop_requested()) {
      size_t want = std::clamp<size_t>(body.in_avail(), 1, buffer.size());
      size_t got = body.getn(buffer.data(), want).get();
      if (got == 0) {
        // End of the body. cpprestsdk closes the body buffer the same way whether the terminating
        // chunk arrived or the connection broke; only content_ready() tells them apart (throws).
        response.content_ready().get();
        result.completed = true;
        break;
      }
      pending.append(reinterpret_cast<const char*>(buffer.data()), got);
      size_t start = 0;
      for (size_t newline; (newline = pending.find('\n', start)) != std::string::npos;
           start = newline + 1) {
        if (newline == start) continue;
        ++result.lines;
        if (!on_line(std::string_view(pending).substr(start, newline - start))) {
          result.stopped = true;
          cancel.cancel();  // closes the connection: the rest of the stream is unwanted
          return result;
        }
      }
      pending.erase(0, start);
      if (pending.size() > kMaxWatchLine) {
        result.error = "watch event larger than " + std::to_string(kMaxWatchLine) + " bytes";
        cancel.cancel();
        return result;
      }
    }
    if (stop.stop_requested()) result.stopped = true;
  } catch (const pplx::task_canceled&) {
    result.stopped = stop.stop_requested();
    if (!result.stopped) result.error = "watch cancelled";
  } catch (const std::exception& e) {
    if (stop.stop_requested()) {
      result.stopped = true;
    } else {
      result.error = "watch " + path + ": " + DescribeException(e);
    }
  }
  if (result.stopped || !result.error.empty()) cancel.cancel();
  return result;
}

}  // namespace capext::kube
