// Internal to extender/http: what a connection over ServerOptions::max_connections gets.
#pragma once

#include <boost/asio/ip/tcp.hpp>

namespace capext::http {

// Answers a plain-HTTP connection with a canned 503 {"error":"too many connections"} and
// `Connection: close`, then half-closes and discards input until the client closes (so that the
// 503 is not lost to a reset), all within one second. Runs on the socket's executor and owns
// itself until done; does not count as a connection.
void RejectOverload(boost::asio::ip::tcp::socket socket);

}  // namespace capext::http
