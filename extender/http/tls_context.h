// Internal to extender/http: the server's TLS configuration (OpenSSL through Asio).
#pragma once

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "extender/http/server.h"

namespace capext::http {

// A TLS server context with options.tls_cert_file (a PEM chain) and options.tls_key_file; with
// options.client_ca_file, clients must present a certificate signed by that CA. TLS 1.2 or later.
// Returns nullptr and sets *error if a file is missing, unreadable, or the key does not match.
// REQUIRES: options.tls_cert_file and options.tls_key_file are both non-empty.
std::unique_ptr<boost::asio::ssl::context> MakeServerTlsContext(const ServerOptions& options,
                                                                std::string* error);

// True when the peer of `ssl` (a completed handshake) presented a certificate that verified.
bool PeerCertificateVerified(const SSL* ssl);

}  // namespace capext::http
