// The HTTP(S) transport of the extender: accepts connections, parses HTTP/1.x requests, hands each
// one to a Handler and writes its Response back. It knows nothing about scheduling.
//
// Behaviour the rest of the extender can rely on:
//  - HTTP/1.1 keep-alive; HTTP/1.0 and `Connection: close` close after the response. Requests on
//    one connection are answered strictly in order (one at a time: the next request is read only
//    after the previous response has been written).
//  - Every response carries Content-Length. Errors produced by the transport itself have a JSON
//    body {"error":"..."} and close the connection: 400 malformed request, 413 body over
//    ServerOptions::body_limit, 431 header over 64 KiB, 500 handler threw or dropped its
//    Responder, 503 over ServerOptions::max_connections (plain HTTP only; TLS just closes).
//  - With tls_cert_file/tls_key_file the server speaks HTTPS only; with client_ca_file it requires
//    a client certificate signed by that CA (the handshake fails without one).
//  - No exception escapes this API.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extender/http/message.h"

namespace capext::http {

struct ServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 8888;  // 0 = pick a free port (see Server::port())
  int io_threads = 2;
  std::size_t body_limit = 16 * 1024 * 1024;
  std::chrono::milliseconds read_timeout{10000};  // per request (headers+body); also per write
  std::chrono::milliseconds idle_timeout{90000};  // keep-alive idle
  std::size_t max_connections = 4096;
  std::string tls_cert_file, tls_key_file;  // both set -> HTTPS only
  std::string client_ca_file;               // set -> require and verify client certificates (mTLS)
  // The request paths whose Request::client_gone is found out: one more recv per request, so only
  // where a handler reads it. Empty: every request's.
  std::vector<std::string> client_gone_paths;
};

// Thread-safety: all methods may be called from any thread except a server IO thread (that is,
// from inside a Handler), where only port() and Shutdown() are allowed; Shutdown() then returns at
// once and finishes in the background. Wait() or the destructor there would deadlock.
class Server {
 public:
  // Binds and listens. Returns nullptr and sets *error (if non-null) on failure: invalid options,
  // bad address, port in use, unreadable or mismatched certificate/key/CA.
  static std::unique_ptr<Server> Start(ServerOptions options, Handler handler, std::string* error);

  // The bound port (the chosen one when ServerOptions::port was 0).
  uint16_t port() const;

  // Stops accepting, closes idle keep-alive connections, lets in-flight requests finish for up to
  // `drain` (their responses carry `Connection: close`), then closes everything and joins the IO
  // threads. Blocks until done. Idempotent; concurrent callers all return once it completed.
  void Shutdown(std::chrono::milliseconds drain);

  // Blocks until Shutdown (called by anyone) has completed.
  void Wait();

  // Shutdown(0) if still running.
  ~Server();

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

 private:
  class Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace capext::http
