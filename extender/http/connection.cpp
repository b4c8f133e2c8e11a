// One connection's life: [TLS handshake] -> wait for a request (idle timeout) -> read it (read
// timeout) -> Handler -> write the response -> again, until keep-alive ends; then a graceful close.
// Everything below runs on the connection's strand; requests are served one at a time, which is
// what keeps pipelined responses in order.
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "extender/http/connection.h"
#include "extender/http/connection_deadline.h"
#include "extender/http/connection_registry.h"
#include "extender/http/error_body.h"
#include "extender/http/message_conversion.h"
#include "extender/http/reply_channel.h"
#include "extender/http/tls_context.h"

namespace capext::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr std::size_t kReadChunk = 16 * 1024;
// How long a closing connection keeps reading (and discarding) what the client still sends, so
// that the kernel does not answer unread data with a reset that destroys our last response.
constexpr std::chrono::milliseconds kLingerLimit{1000};

// Plain sockets: the deadlines are ConnectionDeadline's (see there why not beast::tcp_stream's).
using PlainStream = tcp::socket;
using TlsStream = beast::ssl_stream<tcp::socket>;

std::string PeerName(const tcp::socket& socket) {
  boost::system::error_code ec;
  const tcp::endpoint endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  const net::ip::address address = endpoint.address();
  std::string ip = address.to_string(ec);
  if (address.is_v6()) ip = "[" + ip + "]";
  return ip + ":" + std::to_string(endpoint.port());
}

// True when the peer's FIN is the next thing on `socket`: a one-byte peek that does not wait
// reads end-of-stream. False when data, nothing yet, or an error comes first.
bool PeerClosed(tcp::socket& socket) {
  char byte = 0;
  const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0;
}

template <class Stream>
class StreamConnection final : public Connection {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

 public:
  template <class... StreamArgs>
  explicit StreamConnection(const ConnectionContext& context, StreamArgs&&... stream_args)
      : context_(context),
        stream_(std::forward<StreamArgs>(stream_args)...),
        deadline_(stream_.get_executor()) {}

  void Start() override { net::dispatch(stream_.get_executor(), Bind(&StreamConnection::Begin)); }
  void RequestDrain() override {
    net::post(stream_.get_executor(), Bind(&StreamConnection::Drain));
  }
  void RequestClose() override {
    net::post(stream_.get_executor(), Bind(&StreamConnection::Close));
  }

  void PostResponse(std::uint64_t request_serial, Response response) override {
    net::post(stream_.get_executor(),
              [self = Self(), request_serial, response = std::move(response)]() mutable {
                self->Deliver(request_serial, std::move(response));
              });
  }
  void DeliverInline(std::uint64_t request_serial, Response response) override {
    Deliver(request_serial, std::move(response));
  }

 private:
  enum class Phase {
    kStarting,
    kHandshake,
    kIdle,     // waiting for the first byte of a request
    kReading,  // part of a request has arrived
    kAwaitingResponse,
    kWriting,
    kClosing,  // last response written; lingering
    kClosed,
  };

  std::shared_ptr<StreamConnection> Self() {
    return std::static_pointer_cast<StreamConnection>(shared_from_this());
  }
  template <class Method>
  auto Bind(Method method) {
    return beast::bind_front_handler(method, Self());
  }
  tcp::socket& Tcp() { return beast::get_lowest_layer(stream_); }
  const ServerOptions& Options() const { return *context_.options; }
  bool AsksClientGone(std::string_view target) const {
    const std::vector<std::string>& paths = Options().client_gone_paths;
    if (paths.empty()) return true;
    const std::string_view path = target.substr(0, target.find('?'));
    return std::find(paths.begin(), paths.end(), path) != paths.end();
  }

  void Begin() {
    if (phase_ == Phase::kClosed) return;  // drained before it started
    deadline_.Init(weak_from_this(), [this] { Close(); });
    peer_ = PeerName(Tcp());
    if constexpr (kTls) {
      phase_ = Phase::kHandshake;
      deadline_.SetAfter(Options().read_timeout);
      stream_.async_handshake(net::ssl::stream_base::server, Bind(&StreamConnection::OnHandshake));
    } else {
      ReadNextRequest();
    }
  }

  void OnHandshake(beast::error_code ec) {
    if (phase_ == Phase::kClosed) return;
    if (ec) return Close();
    if constexpr (kTls) client_verified_ = PeerCertificateVerified(stream_.native_handle());
    ReadNextRequest();
  }

  void ReadNextRequest() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(static_cast<std::uint64_t>(Options().body_limit));
    parser_->eager(true);
    if (buffer_.size() > 0) {  // pipelined bytes already here
      phase_ = Phase::kReading;
      received_ = std::chrono::steady_clock::now();
      return ParseBuffered();
    }
    // Only the wait for a request's first byte is subject to the idle timeout; from then on the
    // read timeout applies.
    phase_ = Phase::kIdle;
    deadline_.SetAfter(Options().idle_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk), Bind(&StreamConnection::OnFirstBytes));
  }

  void OnFirstBytes(beast::error_code ec, std::size_t bytes) {
    if (phase_ == Phase::kClosed) return;
    if (ec) return Close();  // client closed, idle timeout, reset
    received_ = std::chrono::steady_clock::now();
    buffer_.commit(bytes);
    phase_ = Phase::kReading;
    ParseBuffered();
  }

  // Parses what is buffered; a request that arrived whole is dispatched without another I/O.
  void ParseBuffered() {
    beast::error_code ec;
    buffer_.consume(parser_->put(buffer_.data(), ec));
    if (ec == bhttp::error::need_more || (!ec && !parser_->is_done())) {
      deadline_.SetAfter(Options().read_timeout);
      return bhttp::async_read(stream_, buffer_, *parser_, Bind(&StreamConnection::OnRequestRead));
    }
    OnRequestRead(ec, 0);
  }

  void OnRequestRead(beast::error_code ec, std::size_t /*bytes*/) {
    if (phase_ == Phase::kClosed) return;
    if (!ec) return Dispatch();
    if (ec == bhttp::error::body_limit) {
      return SendError(
          413, "request body exceeds limit of " + std::to_string(Options().body_limit) + " bytes");
    }
    if (ec == bhttp::error::header_limit) {
      return SendError(
          431, "request header exceeds limit of " + std::to_string(kHeaderLimit) + " bytes");
    }
    const bool parse_error =
        ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category();
    if (!parse_error || ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message) {
      return Close();  // the client went away or timed out: nobody to answer
    }
    SendError(400, "malformed HTTP request: " + ec.message());
  }

  void Dispatch() {
    auto& message = parser_->get();
    Request request = TakeRequest(message);
    request.tls = kTls;
    request.client_verified = client_verified_;
    request.peer = peer_;
    request.received = received_;
    if constexpr (!kTls) {
      request.client_gone =
          buffer_.size() == 0 && AsksClientGone(request.target) && PeerClosed(Tcp());
    }
    keep_alive_ = message.keep_alive();
    version_ = message.version();
    phase_ = Phase::kAwaitingResponse;
    deadline_.Set(ConnectionDeadline::kNever);  // the handler takes what it takes

    auto channel = std::make_shared<ReplyChannel>(shared_from_this(), ++serial_, context_.gate);
    HandlerCallScope scope(this);
    try {
      (*context_.handler)(std::move(request), MakeResponder(channel));
    } catch (const std::exception& e) {
      channel->Send(ErrorResponse(500, std::string("handler failed: ") + e.what()));
    } catch (...) {
      channel->Send(ErrorResponse(500, "handler failed"));
    }
    channel.reset();  // a Responder the handler dropped answers 500 here, still inline
  }

  void Deliver(std::uint64_t request_serial, Response response) {
    if (phase_ != Phase::kAwaitingResponse || request_serial != serial_) return;
    Write(std::move(response));
  }

  // A transport error: answer and close.
  void SendError(int status, const std::string& message) {
    keep_alive_ = false;
    if (parser_ && parser_->is_header_done()) version_ = parser_->get().version();
    Write(ErrorResponse(status, message));
  }

  void Write(Response response) {
    FillResponse(std::move(response), version_, keep_alive_ && !draining_, response_);
    phase_ = Phase::kWriting;
    deadline_.SetAfter(Options().read_timeout);
    bhttp::async_write(stream_, response_, Bind(&StreamConnection::OnWrite));
  }

  void OnWrite(beast::error_code ec, std::size_t /*bytes*/) {
    if (phase_ == Phase::kClosed) return;
    if (ec) return Close();
    if (!keep_alive_ || draining_) return CloseGracefully();
    ReadNextRequest();
  }

  void Drain() {
    draining_ = true;
    switch (phase_) {
      case Phase::kStarting:
      case Phase::kHandshake:
      case Phase::kIdle:
        return Close();
      default:
        return;  // a request in progress closes after its response; kClosing ends by itself
    }
  }

  void CloseGracefully() {
    phase_ = Phase::kClosing;
    if constexpr (kTls) {
      deadline_.SetAfter(std::min(kLingerLimit, Options().read_timeout));
      stream_.async_shutdown(Bind(&StreamConnection::OnTlsShutdown));
    } else {
      Linger();
    }
  }

  void OnTlsShutdown(beast::error_code /*ec*/) {
    if (phase_ == Phase::kClosed) return;
    Linger();
  }

  // Half-closes, then discards input until the client closes too or the linger limit passes.
  void Linger() {
    beast::error_code ec;
    Tcp().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return Close();
    buffer_.clear();
    deadline_.SetAfter(std::min(kLingerLimit, Options().read_timeout));
    Tcp().async_read_some(buffer_.prepare(kReadChunk), Bind(&StreamConnection::OnLingerRead));
  }

  void OnLingerRead(beast::error_code ec, std::size_t /*bytes*/) {
    if (phase_ == Phase::kClosed) return;
    if (ec) return Close();
    Tcp().async_read_some(buffer_.prepare(kReadChunk), Bind(&StreamConnection::OnLingerRead));
  }

  void Close() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    deadline_.Cancel();
    beast::error_code ignored;
    Tcp().close(ignored);  // pending operations complete with operation_aborted and see kClosed
    context_.registry->Remove(this);
  }

  const ConnectionContext context_;
  Stream stream_;
  ConnectionDeadline deadline_;  // of the step in progress; expiry closes the connection
  beast::flat_buffer buffer_;    // reused across requests; may hold pipelined bytes
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  BeastResponse response_;
  std::string peer_;
  std::chrono::steady_clock::time_point received_{};  // first byte of the request in progress
  Phase phase_ = Phase::kStarting;
  std::uint64_t serial_ = 0;  // of the request in progress
  unsigned version_ = 11;
  bool keep_alive_ = false;
  bool draining_ = false;
  bool client_verified_ = false;
};

}  // namespace

std::shared_ptr<Connection> MakePlainConnection(tcp::socket socket,
                                                const ConnectionContext& context) {
  return std::make_shared<StreamConnection<PlainStream>>(context, std::move(socket));
}

std::shared_ptr<Connection> MakeTlsConnection(tcp::socket socket, net::ssl::context& tls,
                                              const ConnectionContext& context) {
  return std::make_shared<StreamConnection<TlsStream>>(context, std::move(socket), tls);
}

}  // namespace capext::http
