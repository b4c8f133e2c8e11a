// Standard base64 (RFC 4648 section 4) with padding: the encoding of Kubernetes' []byte fields
// (AdmissionResponse.patch, a webhook's caBundle).
// Thread-safety: stateless.
#pragma once

#include <string>
#include <string_view>

namespace capext {

std::string Base64(std::string_view in);

}  // namespace capext
