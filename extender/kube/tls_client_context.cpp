#include "extender/kube/tls_client_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <exception>

namespace capext::kube {
namespace {

namespace net = boost::asio;

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

}  // namespace

// The edge of Boost.Asio's ssl::context, which throws boost::system::system_error.
StatusOr<std::unique_ptr<net::ssl::context>> MakeTlsContext(const KubeConfig& config) try {
  auto context = std::make_unique<net::ssl::context>(net::ssl::context::tls_client);
  SSL_CTX* native = context->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  if (config.insecure_skip_tls_verify) {
    context->set_verify_mode(net::ssl::verify_none);
  } else {
    context->set_verify_mode(net::ssl::verify_peer);
    if (config.ca_pem.empty()) context->set_default_verify_paths();
  }
  if (!config.ca_pem.empty()) {
    // A store of its own: only the cluster CA is trusted, never the system roots.
    X509_STORE* store = X509_STORE_new();
    if (AddPemCertificates(store, config.ca_pem) == 0) {
      X509_STORE_free(store);
      return Status::Invalid("the certificate-authority data holds no PEM certificate");
    }
    SSL_CTX_set_cert_store(native, store);  // takes ownership
  }
  if (!config.client_cert_pem.empty()) {
    context->use_certificate_chain(net::buffer(config.client_cert_pem));
    context->use_private_key(net::buffer(config.client_key_pem), net::ssl::context::pem);
  }
  return context;
} catch (const std::exception& e) {
  return Status::Invalid(e.what());
}

}  // namespace capext::kube
