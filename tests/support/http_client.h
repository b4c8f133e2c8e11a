// A blocking HTTP/1.1 test client on Boost.Beast, header-only: plain or TLS (optionally with a
// client certificate), a keep-alive connection that sends several requests, a one-shot Fetch, and a
// raw-bytes connection for malformed-request tests. Every operation is bounded by a timeout and
// reports failure in its result instead of throwing.
// Thread-safety: one object per thread; distinct objects are independent.
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace capext::test {

struct ClientOptions {
  bool tls = false;
  std::string ca_file;    // TLS: verify the server's certificate (and its IP/name) against it
  std::string cert_file;  // TLS: client certificate chain (PEM), optional
  std::string key_file;   // TLS: its key
  std::chrono::milliseconds timeout{5000};  // per connect, handshake, request or read
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct ClientResponse {
  std::string error;  // empty on success
  int status = 0;
  std::string body;
  HeaderList headers;  // names lower-cased
  bool keep_alive = false;

  bool ok() const { return error.empty(); }
  std::string Header(std::string_view lower_name) const {
    for (const auto& [name, value] : headers) {
      if (name == lower_name) return value;
    }
    return "";
  }
};

namespace client_detail {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// Runs one asynchronous operation to completion on `ioc`; the stream's own expiry bounds it.
template <class Start>
beast::error_code RunOne(net::io_context& ioc, Start&& start) {
  beast::error_code result = net::error::would_block;
  start([&result](beast::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run();
  return result;
}

inline std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace client_detail

// One client connection; keeps it open across requests while the server allows keep-alive.
class HttpConnection {
 public:
  explicit HttpConnection(ClientOptions options = {}) : options_(std::move(options)) {}
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  ~HttpConnection() { Close(); }

  // Connects (and completes the TLS handshake). False with error() set on failure.
  bool Connect(const std::string& host, uint16_t port) {
    namespace net = client_detail::net;
    namespace beast = client_detail::beast;
    Close();
    error_.clear();
    buffer_.clear();
    beast::error_code ec;
    const net::ip::address address = net::ip::make_address(host, ec);
    if (ec) return Fail("bad address " + host, ec);
    const client_detail::tcp::endpoint endpoint(address, port);
    if (options_.tls && !MakeTlsContext(ec)) return false;
    plain_ = std::make_unique<beast::tcp_stream>(ioc_);
    plain_->expires_after(options_.timeout);
    ec = client_detail::RunOne(ioc_, [&](auto done) { plain_->async_connect(endpoint, done); });
    if (ec) return Fail("connect", ec);
    plain_->socket().set_option(client_detail::tcp::no_delay(true), ec);
    local_port_ = plain_->socket().local_endpoint(ec).port();
    if (options_.tls) {
      tls_ =
          std::make_unique<beast::ssl_stream<beast::tcp_stream>>(std::move(*plain_), *tls_context_);
      plain_.reset();
      if (!options_.ca_file.empty()) {
        // The server is addressed by IP: check the certificate's IP subjectAltName.
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls_->native_handle()), host.c_str());
      }
      Tcp().expires_after(options_.timeout);
      ec = client_detail::RunOne(
          ioc_, [&](auto done) { tls_->async_handshake(net::ssl::stream_base::client, done); });
      if (ec) return Fail("TLS handshake", ec);
    }
    return true;
  }

  bool is_open() const {
    if (tls_) return client_detail::beast::get_lowest_layer(*tls_).socket().is_open();
    return plain_ != nullptr && plain_->socket().is_open();
  }
  const std::string& error() const { return error_; }
  uint16_t local_port() const { return local_port_; }

  // Sends one request and reads its response. Closes the connection when the response says so
  // or on any error.
  ClientResponse Send(const std::string& method, const std::string& target,
                      const std::string& body = "", const HeaderList& headers = {}) {
    namespace bhttp = client_detail::beast::http;
    ClientResponse result;
    if (!is_open()) {
      result.error = "not connected";
      return result;
    }
    bhttp::request<bhttp::string_body> request;
    request.method_string(method);
    request.target(target);
    request.version(11);
    request.set(bhttp::field::host, "127.0.0.1");
    if (!body.empty()) request.set(bhttp::field::content_type, "application/json");
    for (const auto& [name, value] : headers)
      request.set(name, value);
    request.body() = body;
    request.prepare_payload();
    return Exchange(request);
  }
  ClientResponse Get(const std::string& target) { return Send("GET", target); }
  ClientResponse Post(const std::string& target, const std::string& body) {
    return Send("POST", target, body);
  }

  void Close() {
    if (plain_ || tls_) {
      client_detail::beast::error_code ec;
      Tcp().socket().shutdown(client_detail::tcp::socket::shutdown_both, ec);
      Tcp().close();
    }
    tls_.reset();
    plain_.reset();
  }

 private:
  client_detail::beast::tcp_stream& Tcp() {
    return tls_ ? client_detail::beast::get_lowest_layer(*tls_) : *plain_;
  }

  template <class Request>
  ClientResponse Exchange(Request& request) {
    namespace beast = client_detail::beast;
    namespace bhttp = client_detail::beast::http;
    ClientResponse result;
    auto fail = [&](const char* what, beast::error_code ec) {
      result.error = std::string(what) + ": " + ec.message();
      Close();
      return result;
    };
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(boost::none);
    parser.header_limit(1024 * 1024);
    Tcp().expires_after(options_.timeout);
    beast::error_code ec = client_detail::RunOne(ioc_, [&](auto done) {
      if (tls_) return bhttp::async_write(*tls_, request, done);
      bhttp::async_write(*plain_, request, done);
    });
    if (ec) return fail("write", ec);
    Tcp().expires_after(options_.timeout);
    ec = client_detail::RunOne(ioc_, [&](auto done) {
      if (tls_) return bhttp::async_read(*tls_, buffer_, parser, done);
      bhttp::async_read(*plain_, buffer_, parser, done);
    });
    if (ec) return fail("read", ec);
    const auto& message = parser.get();
    result.status = static_cast<int>(message.result_int());
    result.body = message.body();
    for (const auto& field : message) {
      const auto name = field.name_string();
      result.headers.emplace_back(client_detail::Lower({name.data(), name.size()}),
                                  std::string(field.value()));
    }
    result.keep_alive = message.keep_alive();
    if (!result.keep_alive) Close();
    return result;
  }

  bool MakeTlsContext(client_detail::beast::error_code& ec) {
    namespace ssl = client_detail::net::ssl;
    tls_context_ = std::make_unique<ssl::context>(ssl::context::tls_client);
    if (!options_.ca_file.empty()) {
      if (tls_context_->load_verify_file(options_.ca_file, ec); ec) return Fail("CA file", ec);
      tls_context_->set_verify_mode(ssl::verify_peer, ec);
    } else {
      tls_context_->set_verify_mode(ssl::verify_none, ec);
    }
    if (!options_.cert_file.empty()) {
      if (tls_context_->use_certificate_chain_file(options_.cert_file, ec); ec) {
        return Fail("client certificate", ec);
      }
      if (tls_context_->use_private_key_file(options_.key_file, ssl::context::pem, ec); ec) {
        return Fail("client key", ec);
      }
    }
    return true;
  }

  bool Fail(const std::string& what, client_detail::beast::error_code ec) {
    error_ = what + ": " + ec.message();
    Close();
    return false;
  }

  ClientOptions options_;
  client_detail::net::io_context ioc_{1};
  std::unique_ptr<client_detail::net::ssl::context> tls_context_;
  std::unique_ptr<client_detail::beast::tcp_stream> plain_;
  std::unique_ptr<client_detail::beast::ssl_stream<client_detail::beast::tcp_stream>> tls_;
  client_detail::beast::flat_buffer buffer_;
  std::string error_;
  uint16_t local_port_ = 0;
};

// One request on a fresh connection.
inline ClientResponse Fetch(const std::string& host, uint16_t port, const std::string& method,
                            const std::string& target, const std::string& body = "",
                            const ClientOptions& options = {}) {
  HttpConnection connection(options);
  if (!connection.Connect(host, port)) {
    ClientResponse result;
    result.error = connection.error();
    return result;
  }
  return connection.Send(method, target, body);
}

// A plain TCP connection that writes arbitrary bytes and reads whatever comes back.
class RawConnection {
 public:
  RawConnection() = default;
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool Connect(const std::string& host, uint16_t port,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    namespace net = client_detail::net;
    client_detail::beast::error_code ec;
    const net::ip::address address = net::ip::make_address(host, ec);
    if (ec) return false;
    stream_.expires_after(timeout);
    ec = client_detail::RunOne(ioc_, [&](auto done) {
      stream_.async_connect(client_detail::tcp::endpoint(address, port), done);
    });
    return !ec;
  }

  bool Write(std::string_view bytes,
             std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    stream_.expires_after(timeout);
    return !client_detail::RunOne(ioc_, [&](auto done) {
      client_detail::net::async_write(stream_, client_detail::net::buffer(bytes), done);
    });
  }

  // Reads until the server closes the connection (closed_by_peer = true) or `timeout` passes.
  struct ReadResult {
    std::string data;
    bool closed_by_peer = false;
  };
  ReadResult ReadUntilClosed(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    namespace beast = client_detail::beast;
    ReadResult result;
    stream_.expires_after(timeout);
    for (;;) {
      char chunk[4096];
      std::size_t got = 0;
      beast::error_code ec = client_detail::RunOne(ioc_, [&](auto done) {
        stream_.async_read_some(client_detail::net::buffer(chunk),
                                [&got, done](beast::error_code e, std::size_t n) mutable {
                                  got = n;
                                  done(e);
                                });
      });
      result.data.append(chunk, got);
      if (ec) {
        result.closed_by_peer = ec != beast::error::timeout;
        return result;
      }
    }
  }

 private:
  client_detail::net::io_context ioc_{1};
  client_detail::beast::tcp_stream stream_{ioc_};
};

// Connects, writes `bytes`, and returns everything the server sent until it closed (or until
// `timeout`). Empty if the connection failed.
inline std::string SendRawBytes(
    const std::string& host, uint16_t port, std::string_view bytes,
    std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  RawConnection connection;
  if (!connection.Connect(host, port, timeout) || !connection.Write(bytes, timeout)) return "";
  return connection.ReadUntilClosed(timeout).data;
}

}  // namespace capext::test
