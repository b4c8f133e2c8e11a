#include "extender/http/message_conversion.h"

#include <cctype>
#include <iterator>
#include <string_view>
#include <utility>

namespace capext::http {
namespace {

namespace bhttp = boost::beast::http;

bool HasLineBreak(std::string_view text) {
  return text.find_first_of("\r\n") != text.npos;
}

}  // namespace

Request TakeRequest(BeastRequest& message) {
  Request request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.body = std::move(message.body());
  request.headers.reserve(static_cast<std::size_t>(std::distance(message.begin(), message.end())));
  for (const auto& field : message) {
    const auto raw_name = field.name_string();
    std::string name(raw_name.data(), raw_name.size());
    for (char& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto value = field.value();
    request.headers.emplace_back(std::move(name), std::string(value.data(), value.size()));
  }
  return request;
}

void FillResponse(Response&& response, unsigned version, bool keep_alive, BeastResponse& out) {
  out.clear();  // the fields; the body is replaced below
  const int status = response.status;
  out.result(status >= 100 && status <= 999 ? static_cast<unsigned>(status) : 500u);
  out.version(version);
  if (!response.content_type.empty()) out.set(bhttp::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) {
    if (!name.empty() && !HasLineBreak(name) && !HasLineBreak(value)) out.insert(name, value);
  }
  out.keep_alive(keep_alive);
  out.body() = std::move(response.body);
  out.prepare_payload();
}

}  // namespace capext::http
