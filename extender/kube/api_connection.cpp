#include "extender/kube/api_connection.h"

#include <openssl/ssl.h>

#include <charconv>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

namespace capext::kube {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;

// A list response of a large cluster is big; the limit only guards against a runaway server.
constexpr std::uint64_t kMaxResponseBody = 1ull << 30;
constexpr std::uint32_t kMaxResponseHeader = 64 * 1024;
// What one read asks of the socket. Beast reads as much as the read buffer's free capacity, at
// least 512 bytes, and a buffer the parser keeps emptying never grows: without this every watch
// event (5-6 KiB of JSON for a pod) took a dozen 512-byte reads, each a recv and an epoll_wait.
// Its cost: the buffer's 64 KiB per connection (live mode keeps a few dozen: about 2 MiB).
constexpr std::size_t kReadSize = 64 * 1024;

bool IsIpAddress(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

std::string DescribeError(const beast::error_code& ec, std::chrono::milliseconds timeout) {
  if (ec == beast::error::timeout)
    return "timed out after " + std::to_string(timeout.count()) + " ms";
  if (ec == net::error::eof || ec == beast_http::error::end_of_stream ||
      ec == beast_http::error::partial_message) {
    return "connection closed by the server";
  }
  return ec.message();
}

// Over TLS, a server that closed without close_notify (killed: kill -9 kube-apiserver, or its
// process restarted) shows up as a truncated stream, not as a plain end of file.
bool IsStaleConnection(const beast::error_code& ec) {
  return ec == net::error::eof || ec == beast_http::error::end_of_stream ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == net::ssl::error::stream_truncated;
}

StatusOr<ApiEndpoint> ParseApiEndpoint(const std::string& url) {
  ApiEndpoint endpoint;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    endpoint.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return Status::Invalid("API server URL \"" + url + "\" is not http:// or https://");
  }
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) endpoint.base_path = rest.substr(slash);
  while (!endpoint.base_path.empty() && endpoint.base_path.back() == '/')
    endpoint.base_path.pop_back();
  endpoint.host_header = authority;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) {
      return Status::Invalid("API server URL \"" + url + "\": unterminated IPv6 address");
    }
    endpoint.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':')
      endpoint.port = authority.substr(close + 2);
  } else {
    const size_t colon = authority.rfind(':');
    endpoint.host = authority.substr(0, colon);
    if (colon != std::string::npos) endpoint.port = authority.substr(colon + 1);
  }
  if (endpoint.port.empty()) endpoint.port = endpoint.tls ? "443" : "80";
  if (endpoint.host.empty()) {
    return Status::Invalid("API server URL \"" + url + "\" has no host");
  }
  return endpoint;
}

ApiConnection::ApiConnection(net::io_context& io, const ApiEndpoint& endpoint,
                             net::ssl::context* tls_context, bool verify_host)
    : io_(io),
      endpoint_(endpoint),
      tls_context_(tls_context),
      verify_host_(verify_host),
      deadline_(io.get_executor()) {
  if (tls_context_ != nullptr) {
    tls_.emplace(io_, *tls_context_);
  } else {
    plain_.emplace(io_);
  }
}

net::ip::tcp::socket& ApiConnection::Lowest() {
  return tls_ ? beast::get_lowest_layer(*tls_) : *plain_;
}

void ApiConnection::Expect(std::chrono::milliseconds timeout) {
  if (!deadline_ready_) {
    deadline_ready_ = true;
    deadline_.Init(weak_from_this(), [this] {
      timed_out_ = true;
      Close();
    });
  }
  deadline_.SetAfter(timeout);
}

ApiConnection::ErrorCode ApiConnection::Seen(ErrorCode ec) const {
  return ec && timed_out_ ? ErrorCode(beast::error::timeout) : ec;
}

void ApiConnection::Close() {
  open_ = false;
  deadline_.Cancel();
  beast::error_code ignored;
  Lowest().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  Lowest().close(ignored);
}

int RetryAfterSeconds(const beast_http::fields& fields) {
  auto it = fields.find(beast_http::field::retry_after);
  if (it == fields.end()) return -1;
  const std::string_view text(it->value().data(), it->value().size());
  int seconds = 0;
  if (text.empty() || text.size() > 9) return -1;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    seconds = seconds * 10 + (c - '0');
  }
  return seconds;
}

void ApiConnection::Connect(std::chrono::milliseconds timeout,
                            std::function<void(ErrorCode, const char*)> done) {
  ErrorCode not_numeric;
  const net::ip::address address = net::ip::make_address(endpoint_.host, not_numeric);
  unsigned port = 0;
  const auto [end, port_error] =
      std::from_chars(endpoint_.port.data(), endpoint_.port.data() + endpoint_.port.size(), port);
  if (!not_numeric && port_error == std::errc() &&
      end == endpoint_.port.data() + endpoint_.port.size() && port <= 65535) {
    return ConnectTo(net::ip::tcp::resolver::results_type::create(
                         net::ip::tcp::endpoint(address, static_cast<uint16_t>(port)),
                         endpoint_.host, endpoint_.port),
                     timeout, std::move(done));
  }
  auto self = shared_from_this();
  auto resolver = std::make_shared<net::ip::tcp::resolver>(io_);
  resolver->async_resolve(endpoint_.host, endpoint_.port,
                          [self, resolver, timeout, done = std::move(done)](
                              ErrorCode ec, net::ip::tcp::resolver::results_type results) mutable {
                            if (ec) return done(ec, "resolve");
                            self->ConnectTo(results, timeout, std::move(done));
                          });
}

void ApiConnection::ConnectTo(const net::ip::tcp::resolver::results_type& endpoints,
                              std::chrono::milliseconds timeout,
                              std::function<void(ErrorCode, const char*)> done) {
  auto self = shared_from_this();
  Expect(timeout);
  net::async_connect(
      Lowest(), endpoints,
      [self, done = std::move(done)](ErrorCode ec, const net::ip::tcp::endpoint&) mutable {
        if (ec) return done(self->Seen(ec), "connect");
        self->Lowest().set_option(net::ip::tcp::no_delay(true), ec);
        if (!self->tls_) {
          self->open_ = true;
          self->deadline_.Set(http::ConnectionDeadline::kNever);
          return done({}, "");
        }
        SSL* ssl = self->tls_->native_handle();
        if (!IsIpAddress(self->endpoint_.host)) {
          SSL_set_tlsext_host_name(ssl, self->endpoint_.host.c_str());
        }
        if (self->verify_host_) {
          self->tls_->set_verify_callback(net::ssl::host_name_verification(self->endpoint_.host));
        }
        self->tls_->async_handshake(net::ssl::stream_base::client,
                                    [self, done = std::move(done)](ErrorCode ec) {
                                      if (ec) return done(self->Seen(ec), "TLS handshake");
                                      self->open_ = true;
                                      self->deadline_.Set(http::ConnectionDeadline::kNever);
                                      done({}, "");
                                    });
      });
}

void ApiConnection::Exchange(std::shared_ptr<ApiRequest> request, std::chrono::milliseconds timeout,
                             std::function<void(ErrorCode, ApiResponse&&, bool)> done) {
  auto self = shared_from_this();
  Expect(timeout);
  parser_.emplace();
  parser_->body_limit(kMaxResponseBody);
  parser_->header_limit(kMaxResponseHeader);
  buffer_.reserve(kReadSize);
  WithStream([&](auto& stream) {
    beast_http::async_write(
        stream, *request, [self, request, done = std::move(done)](ErrorCode ec, size_t) mutable {
          if (ec) return done(self->Seen(ec), ApiResponse{}, false);
          self->WithStream([&](auto& s) {
            beast_http::async_read(s, self->buffer_, *self->parser_,
                                   [self, done = std::move(done)](ErrorCode ec, size_t) {
                                     const bool got_some = self->parser_->got_some();
                                     if (ec) return done(self->Seen(ec), ApiResponse{}, got_some);
                                     self->deadline_.Set(http::ConnectionDeadline::kNever);
                                     done({}, self->parser_->release(), true);
                                   });
          });
        });
  });
}

void ApiConnection::Stream(std::shared_ptr<ApiRequest> request, std::chrono::milliseconds timeout,
                           std::chrono::milliseconds inactivity,
                           std::function<void(int, int, std::string_view)> on_header,
                           std::function<bool(std::string_view)> on_data,
                           std::function<void(ErrorCode, bool)> done) {
  auto self = shared_from_this();
  Expect(timeout);
  stream_parser_.emplace();
  // A watch never ends by size. (Not boost::none: Boost 1.74 then rejects every Content-Length.)
  stream_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  stream_parser_->header_limit(kMaxResponseHeader);
  buffer_.reserve(kReadSize);
  WithStream([&](auto& stream) {
    beast_http::async_write(
        stream, *request,
        [self, request, inactivity, on_header = std::move(on_header), on_data = std::move(on_data),
         done = std::move(done)](ErrorCode ec, size_t) mutable {
          if (ec) return done(self->Seen(ec), false);
          self->WithStream([&](auto& s) {
            beast_http::async_read_header(
                s, self->buffer_, *self->stream_parser_,
                [self, inactivity, on_header = std::move(on_header), on_data = std::move(on_data),
                 done = std::move(done)](ErrorCode ec, size_t) mutable {
                  if (ec) return done(self->Seen(ec), false);
                  const auto& header = self->stream_parser_->get();
                  const auto content_type = header.find(beast_http::field::content_type);
                  on_header(header.result_int(), RetryAfterSeconds(header),
                            content_type == header.end()
                                ? std::string_view()
                                : std::string_view(content_type->value().data(),
                                                   content_type->value().size()));
                  self->ReadSome(inactivity, std::move(on_data), std::move(done));
                });
          });
        });
  });
}

void ApiConnection::ReadSome(std::chrono::milliseconds inactivity,
                             std::function<bool(std::string_view)> on_data,
                             std::function<void(ErrorCode, bool)> done) {
  if (stream_parser_->is_done()) return done({}, true);
  auto& body = stream_parser_->get().body();
  body.data = chunk_.data();
  body.size = chunk_.size();
  Expect(inactivity);
  auto self = shared_from_this();
  WithStream([&](auto& stream) {
    beast_http::async_read_some(
        stream, buffer_, *stream_parser_,
        [self, inactivity, on_data = std::move(on_data), done = std::move(done)](ErrorCode ec,
                                                                                 size_t) mutable {
          if (ec == beast_http::error::need_buffer) ec = {};
          const size_t got = self->chunk_.size() - self->stream_parser_->get().body().size;
          if (got > 0 && !on_data(std::string_view(self->chunk_.data(), got))) {
            return done(boost::asio::error::operation_aborted, false);
          }
          if (ec) return done(self->Seen(ec), false);
          self->ReadSome(inactivity, std::move(on_data), std::move(done));
        });
  });
}

}  // namespace capext::kube
