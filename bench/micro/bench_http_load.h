// The load side of the HTTP micro-benchmarks: the real http::Server on a free loopback port, a
// keep-alive HTTP/1.1 client on a blocking POSIX socket (as cheap as a client can be, so that the
// server gets most of the machine), and a load of N requests shared by several such clients with
// their latency percentiles. Header-only; nothing here is used by the product.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench/micro/bench_harness.h"
#include "extender/http/server.h"

namespace capext::bench {

// A blocking TCP connection to 127.0.0.1:port with TCP_NODELAY (as kube-scheduler's Go client
// sets it); the socket, or -1.
inline int ConnectLoopback(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// ---------------------------------------------------------------------------------------------
// A keep-alive HTTP/1.1 client on a blocking socket (as cheap as a client can be, so that the
// server gets most of the machine).
class KeepAliveClient {
 public:
  ~KeepAliveClient() { Close(); }
  bool Connect(uint16_t port) {
    fd_ = ConnectLoopback(port);
    return fd_ >= 0;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  static std::string PostRequest(const std::string& path, const std::string& body) {
    return "POST " + path +
           " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Go-http-client/1.1\r\n"
           "Content-Type: application/json\r\nAccept-Encoding: gzip\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  // Sends a complete request and reads one Content-Length-framed response. Returns the status
  // (0 on error); the body is in body().
  int RoundTrip(const std::string& request) {
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return 0;
      sent += static_cast<std::size_t>(n);
    }
    buffer_.clear();
    std::size_t header_end = std::string::npos, total = 0;
    char chunk[65536];
    for (;;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) return 0;
      buffer_.append(chunk, static_cast<std::size_t>(n));
      if (header_end == std::string::npos) {
        header_end = buffer_.find("\r\n\r\n");
        if (header_end == std::string::npos) continue;
        const std::size_t at = buffer_.find("Content-Length: ");
        if (at == std::string::npos || at > header_end) return 0;
        total = header_end + 4 + std::strtoul(buffer_.c_str() + at + 16, nullptr, 10);
      }
      if (buffer_.size() >= total) break;
    }
    body_start_ = header_end + 4;
    if (buffer_.size() < 12) return 0;
    return std::atoi(buffer_.c_str() + 9);
  }
  std::string_view body() const {
    return std::string_view(buffer_).substr(std::min(body_start_, buffer_.size()));
  }

 private:
  int fd_ = -1;
  std::string buffer_;
  std::size_t body_start_ = 0;
};

// The real server on 127.0.0.1, a free port, 2 IO threads (the deployment's default). Exits the
// benchmark when it cannot start.
inline std::unique_ptr<http::Server> StartLoopbackServer(http::Handler handler) {
  http::ServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.io_threads = 2;
  std::string error;
  auto server = http::Server::Start(options, std::move(handler), &error);
  if (!server) {
    std::fprintf(stderr, "cannot start the server: %s\n", error.c_str());
    std::exit(1);
  }
  return server;
}

struct LoadResult {
  std::size_t requests = 0;
  std::size_t failures = 0;
  double seconds = 0;
  double per_second = 0;
  Summary latency_us;
};

// `clients` threads, one keep-alive connection each, share `total` requests (request(i) builds
// the i-th complete HTTP request). check(status, body) may reject an answer (counted a failure).
template <typename MakeRequest, typename Check>
LoadResult RunKeepAliveLoad(uint16_t port, int clients, std::size_t total, MakeRequest request,
                            Check check) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> failures{0};
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
  std::vector<std::thread> threads;
  const auto started = Clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      KeepAliveClient client;
      if (!client.Connect(port)) {
        ++failures;
        return;
      }
      auto& samples = latencies[static_cast<std::size_t>(c)];
      for (std::size_t i = next++; i < total; i = next++) {
        const auto& req = request(i);
        const auto t0 = Clock::now();
        const int status = client.RoundTrip(req);
        samples.push_back(MicrosSince(t0));
        if (status == 0) {
          ++failures;
          if (!client.Connect(port)) return;
          continue;
        }
        if (!check(status, client.body())) ++failures;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  LoadResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::vector<double> all;
  for (auto& s : latencies)
    all.insert(all.end(), s.begin(), s.end());
  r.requests = all.size();
  r.failures = failures.load();
  r.per_second = static_cast<double>(r.requests) / r.seconds;
  r.latency_us = Summarize(std::move(all));
  return r;
}

}  // namespace capext::bench
