// The TLS context of an API client, from the kubeconfig's material: the server certificate is
// verified against KubeConfig::ca_pem (only those roots) or, when that is empty, the system
// roots, unless the kubeconfig asked for insecure-skip-tls-verify; the client certificate and key
// are presented when configured. TLS 1.2 at least.
// Thread-safety: a function of its argument.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <memory>

#include "core/status.h"
#include "extender/kube/kube_config.h"

namespace capext::kube {

// Invalid on unusable material (a CA bundle without a certificate, a key that does not parse:
// Boost.Asio's exceptions are caught here and their text becomes the message).
StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeTlsContext(const KubeConfig& config);

}  // namespace capext::kube
