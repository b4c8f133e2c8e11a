// Percent-encoding of one URL path segment or query value (RFC 3986 unreserved characters are
// kept, every other byte becomes %XX), for names and continue tokens put into request paths.
#pragma once

#include <string>
#include <string_view>

namespace capext::kube {

std::string EscapeUrlComponent(std::string_view text);

}  // namespace capext::kube
