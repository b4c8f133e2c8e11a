// ApiConnection: one HTTP/1.1 keep-alive connection to the API server (plain TCP or TLS), driven
// asynchronously on the client's io_context. It carries one exchange at a time: either a whole
// request/response (Exchange) or a streamed response body (Stream, for watches).
//
// Thread-safety: every method must be called on the io_context's thread (the client thread);
// completion handlers run there too. Close() makes any operation in flight complete with an
// error (operation_aborted or a closed-socket error). A timeout closes the connection too; the
// operation in flight then completes with beast::error::timeout. The deadlines are
// http::ConnectionDeadline's: moving one costs no system call (a watch moves it per piece).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "extender/http/connection_deadline.h"

namespace capext::kube {

// Where the API server is: parsed from KubeConfig::server ("https://host:port/prefix").
struct ApiEndpoint {
  bool tls = false;
  std::string host;         // without IPv6 brackets
  std::string port;         // "443" when the URL has none (80 for http)
  std::string host_header;  // as in the URL ("[::1]:6443")
  std::string base_path;    // "" or "/prefix" (no trailing '/')
};

// The endpoint of an http(s)://host[:port][/path] URL; Invalid for any other text.
StatusOr<ApiEndpoint> ParseApiEndpoint(const std::string& url);

namespace beast_http = boost::beast::http;
using ApiRequest = beast_http::request<beast_http::string_body>;
using ApiResponse = beast_http::response<beast_http::string_body>;

// The Retry-After header in seconds (delta-seconds, as kube-apiserver writes it); -1 when absent
// or not a number of seconds.
int RetryAfterSeconds(const beast_http::fields& fields);
// A transport error of an ApiConnection in words ("timed out after 500 ms", "connection closed by
// the server", else the error's own message).
std::string DescribeError(const boost::beast::error_code& ec, std::chrono::milliseconds timeout);
// A closed keep-alive connection shows up on reuse as one of these, before any response byte.
bool IsStaleConnection(const boost::beast::error_code& ec);

class ApiConnection : public std::enable_shared_from_this<ApiConnection> {
 public:
  using ErrorCode = boost::beast::error_code;
  // `tls_context` is null for plain HTTP; it must outlive the connection.
  ApiConnection(boost::asio::io_context& io, const ApiEndpoint& endpoint,
                boost::asio::ssl::context* tls_context, bool verify_host);

  // Resolves, connects and (TLS) handshakes within `timeout`. `stage` names what failed. A host
  // that is an IP address is not resolved: asio's resolver starts a thread of its own (once per
  // io_context) on first use, which a client that only ever talks to an IP address never needs.
  void Connect(std::chrono::milliseconds timeout,
               std::function<void(ErrorCode, const char* stage)> done);

  // Writes `request` and reads the whole response within `timeout`. `got_some` tells whether any
  // byte of a response arrived (a reused connection the server had closed gets none).
  void Exchange(std::shared_ptr<ApiRequest> request, std::chrono::milliseconds timeout,
                std::function<void(ErrorCode, ApiResponse&&, bool got_some)> done);

  // Writes `request`, reads the response header (within `timeout`), then hands the body over
  // piece by piece as it arrives (on_data returning false ends the exchange, which then
  // completes with operation_aborted); `inactivity` bounds the wait for each piece. `done` runs
  // once: `complete` is true when the body ended normally (terminating chunk or full length).
  // on_header gets the status, the Retry-After header in seconds (-1 when absent) and the
  // Content-Type header ("" when absent; valid only during the call).
  void Stream(
      std::shared_ptr<ApiRequest> request, std::chrono::milliseconds timeout,
      std::chrono::milliseconds inactivity,
      std::function<void(int status, int retry_after_seconds, std::string_view content_type)>
          on_header,
      std::function<bool(std::string_view data)> on_data,
      std::function<void(ErrorCode, bool complete)> done);

  void Close();
  bool is_open() const { return open_; }

 private:
  boost::asio::ip::tcp::socket& Lowest();
  // Starts the deadline of the step in progress (`timeout` from now).
  void Expect(std::chrono::milliseconds timeout);
  // `ec` as the caller sees it: beast::error::timeout when the deadline closed the connection.
  ErrorCode Seen(ErrorCode ec) const;
  // Connect's steps after the name is resolved.
  void ConnectTo(const boost::asio::ip::tcp::resolver::results_type& endpoints,
                 std::chrono::milliseconds timeout,
                 std::function<void(ErrorCode, const char* stage)> done);
  template <class F>
  void WithStream(F&& f) {
    if (tls_) {
      f(*tls_);
    } else {
      f(*plain_);
    }
  }
  void ReadSome(std::chrono::milliseconds inactivity,
                std::function<bool(std::string_view data)> on_data,
                std::function<void(ErrorCode, bool complete)> done);

  boost::asio::io_context& io_;
  ApiEndpoint endpoint_;
  boost::asio::ssl::context* tls_context_;
  bool verify_host_;
  std::optional<boost::asio::ip::tcp::socket> plain_;
  std::optional<boost::beast::ssl_stream<boost::asio::ip::tcp::socket>> tls_;
  http::ConnectionDeadline deadline_;
  bool deadline_ready_ = false;  // Init done (it needs shared_from_this)
  bool timed_out_ = false;
  boost::beast::flat_buffer buffer_;
  std::optional<beast_http::response_parser<beast_http::string_body>> parser_;
  std::optional<beast_http::response_parser<beast_http::buffer_body>> stream_parser_;
  std::array<char, 64 * 1024> chunk_{};
  bool open_ = false;
};

}  // namespace capext::kube
