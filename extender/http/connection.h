// Internal to extender/http: one accepted client connection. It reads a request, hands it to the
// Handler, writes the response, and repeats while keep-alive lasts. All its state lives on its own
// strand; the public methods below are the only ways in from other threads.
#pragma once

#include <cstdint>
#include <list>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "extender/http/server.h"

namespace capext::http {

class ConnectionRegistry;
struct ResponseGate;

// What all connections of one server share. The pointees are owned by the server and outlive every
// connection (connections die, at the latest, with the server's io_context).
struct ConnectionContext {
  const ServerOptions* options = nullptr;
  const Handler* handler = nullptr;
  ConnectionRegistry* registry = nullptr;
  std::shared_ptr<ResponseGate> gate;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  virtual ~Connection() = default;

  // Begins the TLS handshake or the first read. Call once, after registering the connection.
  virtual void Start() = 0;
  // Server shutdown: close now if no request is in progress, else after its response.
  virtual void RequestDrain() = 0;
  // Close now, abandoning any request in progress.
  virtual void RequestClose() = 0;
  // Completes request number `request_serial` from any thread (posted onto the strand). Ignored if
  // that request is no longer awaiting its response.
  virtual void PostResponse(std::uint64_t request_serial, Response response) = 0;
  // As PostResponse, without the hop. REQUIRES: running on this connection's strand (that is,
  // inside its Handler call).
  virtual void DeliverInline(std::uint64_t request_serial, Response response) = 0;

 private:
  friend class ConnectionRegistry;
  // Guarded by the registry's mutex.
  std::list<std::shared_ptr<Connection>>::iterator registry_slot_;
  bool registered_ = false;
};

// Both take a socket accepted onto its own strand and return a connection that has not started.
std::shared_ptr<Connection> MakePlainConnection(boost::asio::ip::tcp::socket socket,
                                                const ConnectionContext& context);
std::shared_ptr<Connection> MakeTlsConnection(boost::asio::ip::tcp::socket socket,
                                              boost::asio::ssl::context& tls,
                                              const ConnectionContext& context);

}  // namespace capext::http
