// The benchmark's own HTTP/1.1 client (bench_podcost_bench): what kube-scheduler and the test's
// user send to the extender and to the API-server double. Blocking POSIX sockets on 127.0.0.1, so
// that the client costs as little as possible next to the processes it measures.
//  * HttpConnection: one keep-alive connection; responses framed by Content-Length or chunked
//    (the double answers bodies over 2 KB chunked, as Go's net/http does).
//  * GoTransportPool: kube-scheduler's extender client as Go's http.Transport behaves: a request
//    takes an idle connection or dials a new one, and a finished connection is kept only while
//    fewer than `max_idle` are idle (Go keeps 2 per host: extender-protocol.md measured 600-950
//    new connections per 3,000 pods). A reused connection the server has closed is redialled
//    once, as Go retries an idempotent-looking request on a dead idle connection.
// Thread-safety: HttpConnection is used by one thread at a time; GoTransportPool is thread-safe.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "bench/micro/bench_support.h"

namespace capext::bench {

class HttpConnection {
 public:
  HttpConnection() = default;
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  ~HttpConnection() { Close(); }

  bool Connect(uint16_t port) {
    Close();
    fd_ = ConnectLoopback(port);
    return fd_ >= 0;
  }
  bool connected() const { return fd_ >= 0; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Sends a complete request and reads one response. Returns the HTTP status, or 0 on a transport
  // or framing error (the connection is then closed). The body (de-chunked) is in body(). A
  // response carrying "Connection: close" closes the connection after it is read.
  int RoundTrip(std::string_view request) {
    body_.clear();
    if (fd_ < 0) return 0;
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return Fail();
      sent += static_cast<std::size_t>(n);
    }
    std::size_t header_end;
    while ((header_end = in_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return Fail();
    }
    const std::string headers = Lowercase(in_.substr(0, header_end));
    if (headers.size() < 12 || headers.compare(0, 5, "http/") != 0) return Fail();
    const int status = std::atoi(headers.c_str() + 9);
    in_.erase(0, header_end + 4);
    const bool close_after = headers.find("\r\nconnection: close") != std::string::npos;
    if (headers.find("\r\ntransfer-encoding: chunked") != std::string::npos) {
      if (!ReadChunked()) return Fail();
    } else {
      const std::size_t at = headers.find("\r\ncontent-length:");
      const std::size_t length =
          at == std::string::npos ? 0 : std::strtoul(headers.c_str() + at + 17, nullptr, 10);
      while (in_.size() < length) {
        if (!Fill()) return Fail();
      }
      body_.assign(in_, 0, length);
      in_.erase(0, length);
    }
    if (close_after) Close();
    return status;
  }
  const std::string& body() const { return body_; }

  // A request with the headers Go's net/http client sends (and in its order: the captures'
  // meta.json), Host = 127.0.0.1:port.
  static std::string GoRequest(std::string_view method, std::string_view target, uint16_t port,
                               std::string_view body, std::string_view extra_headers = {}) {
    std::string r;
    r.reserve(body.size() + 256);
    r.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1:");
    r.append(std::to_string(port)).append("\r\nUser-Agent: Go-http-client/1.1\r\n");
    if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
      r.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
      r.append("Content-Type: application/json\r\n");
    }
    r.append(extra_headers);
    r.append("Accept-Encoding: gzip\r\n\r\n");
    r.append(body);
    return r;
  }

 private:
  static std::string Lowercase(std::string s) {
    for (char& c : s)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
  }
  bool Fill() {
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    in_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  bool ReadChunked() {
    for (;;) {
      std::size_t line_end;
      while ((line_end = in_.find("\r\n")) == std::string::npos) {
        if (!Fill()) return false;
      }
      const std::size_t size = std::strtoul(in_.c_str(), nullptr, 16);
      in_.erase(0, line_end + 2);
      while (in_.size() < size + 2) {
        if (!Fill()) return false;
      }
      body_.append(in_, 0, size);
      in_.erase(0, size + 2);  // the data and its CRLF (no trailers are sent)
      if (size == 0) return true;
    }
  }
  int Fail() {
    Close();
    in_.clear();
    return 0;
  }

  int fd_ = -1;
  std::string in_;  // bytes read past the previous response
  std::string body_;
};

class GoTransportPool {
 public:
  GoTransportPool(uint16_t port, std::size_t max_idle) : port_(port), max_idle_(max_idle) {}

  // One round trip; returns the status (0 on failure) and the body in *body.
  int RoundTrip(const std::string& request, std::string* body) {
    std::unique_ptr<HttpConnection> connection = TakeIdle();
    const bool reused = connection != nullptr;
    if (!connection) connection = Dial();
    if (!connection) return 0;
    int status = connection->RoundTrip(request);
    if (status == 0 && reused) {
      connection = Dial();
      if (!connection) return 0;
      status = connection->RoundTrip(request);
    }
    if (body) *body = connection->body();
    if (status != 0 && connection->connected()) GiveBack(std::move(connection));
    return status;
  }
  uint16_t port() const { return port_; }
  int64_t dials() const { return dials_.load(); }

 private:
  std::unique_ptr<HttpConnection> TakeIdle() {
    std::lock_guard lock(mutex_);
    if (idle_.empty()) return nullptr;
    auto c = std::move(idle_.back());
    idle_.pop_back();
    return c;
  }
  std::unique_ptr<HttpConnection> Dial() {
    auto c = std::make_unique<HttpConnection>();
    ++dials_;
    return c->Connect(port_) ? std::move(c) : nullptr;
  }
  void GiveBack(std::unique_ptr<HttpConnection> c) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < max_idle_) idle_.push_back(std::move(c));
  }

  const uint16_t port_;
  const std::size_t max_idle_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<HttpConnection>> idle_;
  std::atomic<int64_t> dials_{0};
};

}  // namespace capext::bench
