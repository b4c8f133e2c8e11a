// Internal to extender/http: conversion between Beast's messages and our Request/Response.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "extender/http/server.h"

namespace capext::http {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastResponse = boost::beast::http::response<boost::beast::http::string_body>;

// Method, target, body (moved out of `message`) and headers (names lower-cased). The connection
// fills in tls, client_verified and peer.
Request TakeRequest(BeastRequest& message);

// Overwrites `out` (reusing its storage) with `response` for an HTTP/1.<version % 10> client:
// status (outside 100..999 becomes 500), Content-Type, the extra headers without any containing CR
// or LF, the Connection header `keep_alive` calls for, the body (moved) and Content-Length.
void FillResponse(Response&& response, unsigned version, bool keep_alive, BeastResponse& out);

}  // namespace capext::http
