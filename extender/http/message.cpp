#include "extender/http/message.h"

namespace capext::http {

std::string_view Request::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return {};
}

}  // namespace capext::http
