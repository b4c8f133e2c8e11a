// The do-nothing extender bench_podcost_bench measures next to capacity-extender, in the same run
// and with the same traffic (the issue's table used a do-nothing Go extender): Boost.Beast on ONE
// thread, everything asynchronous. Each request body is parsed whole (RapidJSON DOM, as Go's
// encoding/json decodes ExtenderArgs); /filter answers every node it was given, /prioritize a
// score of 0 per node, /bind POSTs the Binding to the API server (kept-alive connections, reused
// when idle) and answers when the API server has. No cache, no watches, no quotas: the floor an
// extender with these verbs cannot go below. Run as a child process (bench_podcost_bench
// --noop-extender), so that its cost is read from /proc exactly as the real binary's.
// Thread-safety: everything runs on the io_context's one thread.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace capext::bench {

namespace noop {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

// POSTs Bindings to the API server over kept-alive connections (a new one when none is idle).
class BindingClient {
 public:
  BindingClient(net::io_context& io, uint16_t port, std::string authorization)
      : io_(io),
        endpoint_(net::ip::make_address("127.0.0.1"), port),
        authorization_(std::move(authorization)) {}

  // Calls done(HTTP status, 0 on a transport error) once the API server answered.
  void Bind(const std::string& ns, const std::string& name, const std::string& uid,
            const std::string& node, std::function<void(int)> done) {
    auto call = std::make_shared<Call>();
    call->done = std::move(done);
    call->request.method(http::verb::post);
    call->request.target("/api/v1/namespaces/" + ns + "/pods/" + name + "/binding");
    call->request.version(11);
    call->request.set(http::field::host, "127.0.0.1");
    call->request.set(http::field::content_type, "application/json");
    call->request.set(http::field::authorization, authorization_);
    call->request.keep_alive(true);
    call->request.body() = R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" + name +
                           R"(","namespace":")" + ns + R"(","uid":")" + uid +
                           R"("},"target":{"apiVersion":"v1","kind":"Node","name":")" + node +
                           R"("}})";
    call->request.prepare_payload();
    if (!idle_.empty()) {
      call->stream = std::move(idle_.back());
      idle_.pop_back();
      Send(call);
      return;
    }
    call->stream = std::make_unique<beast::tcp_stream>(io_);
    call->stream->async_connect(endpoint_, [this, call](beast::error_code ec) {
      if (ec) return call->done(0);
      call->stream->socket().set_option(tcp::no_delay(true));
      Send(call);
    });
  }

 private:
  struct Call {
    std::unique_ptr<beast::tcp_stream> stream;
    http::request<http::string_body> request;
    http::response<http::string_body> response;
    beast::flat_buffer buffer;
    std::function<void(int)> done;
  };

  void Send(const std::shared_ptr<Call>& call) {
    http::async_write(*call->stream, call->request, [this, call](beast::error_code ec, size_t) {
      if (ec) return call->done(0);
      http::async_read(*call->stream, call->buffer, call->response,
                       [this, call](beast::error_code ec2, size_t) {
                         if (ec2) return call->done(0);
                         if (call->response.keep_alive()) idle_.push_back(std::move(call->stream));
                         call->done(static_cast<int>(call->response.result_int()));
                       });
    });
  }

  net::io_context& io_;
  tcp::endpoint endpoint_;
  std::string authorization_;
  std::vector<std::unique_ptr<beast::tcp_stream>> idle_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, BindingClient* binder)
      : stream_(std::move(socket)), binder_(binder) {}

  void Read() {
    parser_.emplace();
    parser_->body_limit(64 << 20);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (!ec) self->Handle();
                     });
  }

 private:
  void Handle() {
    auto& request = parser_->get();
    keep_alive_ = request.keep_alive();
    rapidjson::Document args;
    args.Parse(request.body().data(), request.body().size());
    const std::string target(request.target());
    if (args.HasParseError() || !args.IsObject()) return Reply(400, R"({"Error":"bad body"})");
    if (target == "/filter" || target == "/prioritize") {
      const bool filter = target == "/filter";
      rapidjson::StringBuffer out;
      rapidjson::Writer<rapidjson::StringBuffer> w(out);
      if (filter) {
        w.StartObject();
        w.Key("Nodes");
        w.Null();
        w.Key("NodeNames");
      }
      w.StartArray();
      if (args.HasMember("NodeNames") && args["NodeNames"].IsArray()) {
        for (const auto& name : args["NodeNames"].GetArray()) {
          if (!name.IsString()) continue;
          if (filter) {
            w.String(name.GetString(), name.GetStringLength());
          } else {
            w.StartObject();
            w.Key("Host");
            w.String(name.GetString(), name.GetStringLength());
            w.Key("Score");
            w.Int(0);
            w.EndObject();
          }
        }
      }
      w.EndArray();
      if (filter) {
        w.Key("FailedNodes");
        w.StartObject();
        w.EndObject();
        w.Key("FailedAndUnresolvableNodes");
        w.StartObject();
        w.EndObject();
        w.Key("Error");
        w.String("");
        w.EndObject();
      }
      return Reply(200, std::string(out.GetString(), out.GetSize()));
    }
    if (target == "/bind") {
      auto text = [&](const char* key) {
        return args.HasMember(key) && args[key].IsString() ? std::string(args[key].GetString())
                                                           : std::string();
      };
      binder_->Bind(text("PodNamespace"), text("PodName"), text("PodUID"), text("Node"),
                    [self = shared_from_this()](int status) {
                      self->Reply(
                          200, status == 201 ? R"({"Error":""})" : R"({"Error":"binding failed"})");
                    });
      return;
    }
    Reply(404, R"({"Error":"unknown verb"})");
  }

  void Reply(int status, std::string body) {
    response_ = {};
    response_.result(static_cast<unsigned>(status));
    response_.version(11);
    response_.set(http::field::content_type, "application/json");
    response_.keep_alive(keep_alive_);
    response_.body() = std::move(body);
    response_.prepare_payload();
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec || !self->keep_alive_) {
                          beast::error_code ignored;
                          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                          return;
                        }
                        self->Read();
                      });
  }

  beast::tcp_stream stream_;
  BindingClient* binder_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  bool keep_alive_ = true;
};

}  // namespace noop

// The server: Listen() binds 127.0.0.1 (a free port), Run() serves on the calling thread until
// Stop() (from any thread) or, with HandleTermination(), SIGTERM/SIGINT.
class NoopExtender {
 public:
  NoopExtender(uint16_t api_port, std::string authorization)
      : io_(1), acceptor_(io_), binder_(io_, api_port, std::move(authorization)) {}

  // Returns the port (0 on failure).
  uint16_t Listen() {
    using tcp = boost::asio::ip::tcp;
    boost::system::error_code ec;
    const tcp::endpoint endpoint(boost::asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
    if (ec) return 0;
    Accept();
    return acceptor_.local_endpoint().port();
  }
  void HandleTermination() {
    signals_.emplace(io_, SIGTERM, SIGINT);
    signals_->async_wait([this](boost::system::error_code, int) { io_.stop(); });
  }
  void Run() { io_.run(); }
  void Stop() { io_.stop(); }

 private:
  void Accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, noop::tcp::socket socket) {
      if (ec) return;
      socket.set_option(noop::tcp::no_delay(true));
      std::make_shared<noop::Session>(std::move(socket), &binder_)->Read();
      Accept();
    });
  }

  boost::asio::io_context io_;
  noop::tcp::acceptor acceptor_;
  noop::BindingClient binder_;
  std::optional<boost::asio::signal_set> signals_;
};

// The child process: serves until SIGTERM, its port written to `port_file`. Returns the exit code.
inline int RunNoopExtender(uint16_t api_port, const std::string& authorization,
                           const std::string& port_file) {
  NoopExtender server(api_port, authorization);
  const uint16_t port = server.Listen();
  if (port == 0) return 1;
  server.HandleTermination();
  std::ofstream(port_file + ".tmp") << port << "\n";
  std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  server.Run();
  return 0;
}

}  // namespace capext::bench
