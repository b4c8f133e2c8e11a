#include "tests/support/http_client.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <cctype>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace capext::test {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

// Runs one asynchronous operation to completion on `ioc`; the stream's own expiry bounds it.
template <class Start>
beast::error_code RunOne(net::io_context& ioc, Start&& start) {
  beast::error_code result;
  start([&result](beast::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run();
  return result;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

struct HttpConnection::Impl {
  ClientOptions options;
  net::io_context ioc{1};
  std::unique_ptr<ssl::context> tls_context;
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  std::string error;
  uint16_t local_port = 0;

  beast::tcp_stream& Tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }

  bool is_open() const {
    if (tls) return beast::get_lowest_layer(*tls).socket().is_open();
    return plain != nullptr && plain->socket().is_open();
  }

  void Close() {
    if (plain || tls) {
      beast::error_code ec;
      Tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
      Tcp().close();
    }
    tls.reset();
    plain.reset();
  }

  bool Fail(const std::string& what, beast::error_code ec) {
    error = what + ": " + ec.message();
    Close();
    return false;
  }

  bool MakeTlsContext(beast::error_code& ec) {
    tls_context = std::make_unique<ssl::context>(ssl::context::tls_client);
    if (!options.ca_file.empty()) {
      if (tls_context->load_verify_file(options.ca_file, ec); ec) return Fail("CA file", ec);
      tls_context->set_verify_mode(ssl::verify_peer, ec);
    } else {
      tls_context->set_verify_mode(ssl::verify_none, ec);
    }
    if (!options.cert_file.empty()) {
      if (tls_context->use_certificate_chain_file(options.cert_file, ec); ec) {
        return Fail("client certificate", ec);
      }
      if (tls_context->use_private_key_file(options.key_file, ssl::context::pem, ec); ec) {
        return Fail("client key", ec);
      }
    }
    return true;
  }

  bool Connect(const std::string& host, uint16_t port) {
    Close();
    error.clear();
    buffer.clear();
    beast::error_code ec;
    const net::ip::address address = net::ip::make_address(host, ec);
    if (ec) return Fail("bad address " + host, ec);
    const tcp::endpoint endpoint(address, port);
    if (options.tls && !MakeTlsContext(ec)) return false;
    plain = std::make_unique<beast::tcp_stream>(ioc);
    plain->expires_after(options.timeout);
    ec = RunOne(ioc, [&](auto done) { plain->async_connect(endpoint, done); });
    if (ec) return Fail("connect", ec);
    plain->socket().set_option(tcp::no_delay(true), ec);
    local_port = plain->socket().local_endpoint(ec).port();
    if (options.tls) {
      tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(std::move(*plain), *tls_context);
      plain.reset();
      if (!options.ca_file.empty()) {
        // Verify the certificate names the address we connected to.
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls->native_handle()), host.c_str());
      }
      Tcp().expires_after(options.timeout);
      ec = RunOne(ioc, [&](auto done) { tls->async_handshake(ssl::stream_base::client, done); });
      if (ec) return Fail("TLS handshake", ec);
    }
    return true;
  }

  ClientResponse Exchange(bhttp::request<bhttp::string_body>& request) {
    ClientResponse result;
    auto fail = [&](const char* what, beast::error_code ec) {
      result.error = std::string(what) + ": " + ec.message();
      Close();
      return result;
    };
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(boost::none);
    parser.header_limit(1024 * 1024);
    Tcp().expires_after(options.timeout);
    beast::error_code ec = RunOne(ioc, [&](auto done) {
      if (tls) return bhttp::async_write(*tls, request, done);
      bhttp::async_write(*plain, request, done);
    });
    if (ec) return fail("write", ec);
    Tcp().expires_after(options.timeout);
    ec = RunOne(ioc, [&](auto done) {
      if (tls) return bhttp::async_read(*tls, buffer, parser, done);
      bhttp::async_read(*plain, buffer, parser, done);
    });
    if (ec) return fail("read", ec);
    const auto& message = parser.get();
    result.status = static_cast<int>(message.result_int());
    result.body = message.body();
    for (const auto& field : message) {
      const auto name = field.name_string();
      result.headers.emplace_back(Lower({name.data(), name.size()}), std::string(field.value()));
    }
    result.keep_alive = message.keep_alive();
    if (!result.keep_alive) Close();
    return result;
  }
};

HttpConnection::HttpConnection(ClientOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

HttpConnection::~HttpConnection() {
  Close();
}

bool HttpConnection::Connect(const std::string& host, uint16_t port) {
  return impl_->Connect(host, port);
}

bool HttpConnection::is_open() const {
  return impl_->is_open();
}
const std::string& HttpConnection::error() const {
  return impl_->error;
}
uint16_t HttpConnection::local_port() const {
  return impl_->local_port;
}
void HttpConnection::Close() {
  impl_->Close();
}

ClientResponse HttpConnection::Send(const std::string& method, const std::string& target,
                                    const std::string& body, const HeaderList& headers) {
  ClientResponse result;
  if (!impl_->is_open()) {
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
  return impl_->Exchange(request);
}

ClientResponse Fetch(const std::string& host, uint16_t port, const std::string& method,
                     const std::string& target, const std::string& body,
                     const ClientOptions& options) {
  HttpConnection connection(options);
  if (!connection.Connect(host, port)) {
    ClientResponse result;
    result.error = connection.error();
    return result;
  }
  return connection.Send(method, target, body);
}

struct RawConnection::Impl {
  net::io_context ioc{1};
  beast::tcp_stream stream{ioc};
};

RawConnection::RawConnection() : impl_(std::make_unique<Impl>()) {}
RawConnection::~RawConnection() = default;

bool RawConnection::Connect(const std::string& host, uint16_t port,
                            std::chrono::milliseconds timeout) {
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(host, ec);
  if (ec) return false;
  impl_->stream.expires_after(timeout);
  ec = RunOne(impl_->ioc,
              [&](auto done) { impl_->stream.async_connect(tcp::endpoint(address, port), done); });
  return !ec;
}

bool RawConnection::Write(std::string_view bytes, std::chrono::milliseconds timeout) {
  impl_->stream.expires_after(timeout);
  return !RunOne(impl_->ioc, [&](auto done) {
    net::async_write(impl_->stream, net::buffer(bytes.data(), bytes.size()), done);
  });
}

RawConnection::ReadResult RawConnection::ReadUntilClosed(std::chrono::milliseconds timeout) {
  ReadResult result;
  impl_->stream.expires_after(timeout);
  for (;;) {
    char chunk[4096];
    std::size_t got = 0;
    beast::error_code ec = RunOne(impl_->ioc, [&](auto done) {
      impl_->stream.async_read_some(net::buffer(chunk),
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

std::string SendRawBytes(const std::string& host, uint16_t port, std::string_view bytes,
                         std::chrono::milliseconds timeout) {
  RawConnection connection;
  if (!connection.Connect(host, port, timeout) || !connection.Write(bytes, timeout)) return "";
  return connection.ReadUntilClosed(timeout).data;
}

}  // namespace capext::test
