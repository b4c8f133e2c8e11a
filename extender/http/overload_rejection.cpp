#include "extender/http/overload_rejection.h"

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>

#include "extender/http/error_body.h"

namespace capext::http {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr std::chrono::milliseconds kRejectionLimit{1000};

class OverloadRejection : public std::enable_shared_from_this<OverloadRejection> {
 public:
  explicit OverloadRejection(tcp::socket socket) : stream_(std::move(socket)) {}

  void Start() {
    static const std::string kResponse = [] {
      const std::string body = JsonErrorBody("too many connections");
      return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
             "Content-Length: " +
             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    }();
    stream_.expires_after(kRejectionLimit);
    net::async_write(stream_, net::buffer(kResponse),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->stream_.close();
                       self->stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
                       self->Drain();
                     });
  }

 private:
  void Drain() {
    stream_.async_read_some(net::buffer(sink_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->stream_.close();
                              self->Drain();
                            });
  }

  beast::tcp_stream stream_;
  std::array<char, 1024> sink_;
};

}  // namespace

void RejectOverload(tcp::socket socket) {
  std::make_shared<OverloadRejection>(std::move(socket))->Start();
}

}  // namespace capext::http
