// Internal to extender/http: the JSON errors produced by the transport itself.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "extender/http/server.h"

namespace capext::http {

// {"error":"<message>"} with `message` escaped as a JSON string.
inline std::string JsonErrorBody(std::string_view message) {
  std::string body = R"({"error":")";
  body.reserve(body.size() + message.size() + 2);
  for (char c : message) {
    if (c == '"' || c == '\\') {
      body += '\\';
      body += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
      body += escaped;
    } else {
      body += c;
    }
  }
  body += "\"}";
  return body;
}

// A JSON error response with JsonErrorBody(message).
inline Response ErrorResponse(int status, std::string_view message) {
  return Response{status, "application/json", JsonErrorBody(message), {}};
}

}  // namespace capext::http
