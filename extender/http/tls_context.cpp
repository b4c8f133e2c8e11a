#include "extender/http/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <exception>

namespace capext::http {
namespace {

namespace ssl = boost::asio::ssl;

// Session resumption with client verification needs a context id (else OpenSSL refuses to resume
// and logs "session id context uninitialized"); any constant unique to this program will do.
constexpr unsigned char kSessionIdContext[] = "capacity-extender";

std::string Describe(const char* what, const std::string& file,
                     const boost::system::error_code& ec) {
  return std::string(what) + " " + file + ": " + ec.message();
}

}  // namespace

std::unique_ptr<ssl::context> MakeServerTlsContext(const ServerOptions& options,
                                                   std::string* error) {
  try {
    auto context = std::make_unique<ssl::context>(ssl::context::tls_server);
    boost::system::error_code ec;
    context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                             ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                             ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                         ec);
    if (ec) {
      *error = "TLS options: " + ec.message();
      return nullptr;
    }
    if (context->use_certificate_chain_file(options.tls_cert_file, ec); ec) {
      *error = Describe("TLS certificate", options.tls_cert_file, ec);
      return nullptr;
    }
    if (context->use_private_key_file(options.tls_key_file, ssl::context::pem, ec); ec) {
      *error = Describe("TLS key", options.tls_key_file, ec);
      return nullptr;
    }
    SSL_CTX* native = context->native_handle();
    if (SSL_CTX_check_private_key(native) != 1) {
      ERR_clear_error();
      *error = "TLS key " + options.tls_key_file + " does not match certificate " +
               options.tls_cert_file;
      return nullptr;
    }
    if (!options.client_ca_file.empty()) {
      if (context->load_verify_file(options.client_ca_file, ec); ec) {
        *error = Describe("TLS client CA", options.client_ca_file, ec);
        return nullptr;
      }
      // Tell clients which CA we accept (the CertificateRequest's list).
      if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.client_ca_file.c_str())) {
        SSL_CTX_set_client_CA_list(native, names);
      }
      ERR_clear_error();
      context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
      if (ec) {
        *error = "TLS verify mode: " + ec.message();
        return nullptr;
      }
      SSL_CTX_set_session_id_context(native, kSessionIdContext, sizeof(kSessionIdContext) - 1);
    }
    return context;
  } catch (const std::exception& e) {
    *error = std::string("TLS context: ") + e.what();
    return nullptr;
  }
}

bool PeerCertificateVerified(const SSL* ssl) {
  return SSL_get0_peer_certificate(ssl) != nullptr && SSL_get_verify_result(ssl) == X509_V_OK;
}

}  // namespace capext::http
