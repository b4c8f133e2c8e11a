// A blocking HTTP/1.1 test client on Boost.Beast: plain or TLS (optionally with a client
// certificate), a keep-alive connection that sends several requests, a one-shot Fetch, and a
// raw-bytes connection for malformed-request tests. Every operation is bounded by a timeout and
// reports failure in its result instead of throwing.
// Beast stays in http_client.cpp (compiled once into ce_test_support): its templates are the
// slowest part of the test build, above all under the sanitizers.
// Thread-safety: one object per thread; distinct objects are independent.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// One keep-alive connection.
class HttpConnection {
 public:
  explicit HttpConnection(ClientOptions options = {});
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  ~HttpConnection();

  // Connects (and completes the TLS handshake). False with error() set on failure.
  bool Connect(const std::string& host, uint16_t port);
  bool is_open() const;
  const std::string& error() const;
  uint16_t local_port() const;

  // Sends one request and reads its response. Closes the connection when the response says so
  // or on any error.
  ClientResponse Send(const std::string& method, const std::string& target,
                      const std::string& body = "", const HeaderList& headers = {});
  ClientResponse Get(const std::string& target) { return Send("GET", target); }
  ClientResponse Post(const std::string& target, const std::string& body) {
    return Send("POST", target, body);
  }
  void Close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One request on a fresh connection.
ClientResponse Fetch(const std::string& host, uint16_t port, const std::string& method,
                     const std::string& target, const std::string& body = "",
                     const ClientOptions& options = {});

// A plain TCP connection that writes arbitrary bytes and reads whatever comes back.
class RawConnection {
 public:
  RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  ~RawConnection();

  bool Connect(const std::string& host, uint16_t port,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  bool Write(std::string_view bytes,
             std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

  // Reads until the server closes the connection (closed_by_peer = true) or `timeout` passes.
  struct ReadResult {
    std::string data;
    bool closed_by_peer = false;
  };
  ReadResult ReadUntilClosed(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Connects, writes `bytes`, and returns everything the server sent until it closed (or until
// `timeout`). Empty if the connection failed.
std::string SendRawBytes(const std::string& host, uint16_t port, std::string_view bytes,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

}  // namespace capext::test
