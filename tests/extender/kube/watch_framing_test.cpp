// RestClient's watch framing against a scripted HTTP server on loopback: the Accept header a watch
// asks with, and how the body is cut into events by the response's Content-Type (a protobuf
// stream's length-prefixed frames, split anywhere across chunks, against JSON lines). The
// API-server double speaks JSON only; the real kube-apiserver's protobuf watch is covered by
// tests/real_cluster.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "extender/kube/rest_client.h"

namespace capext::kube {
namespace watch_framing_test {
namespace {

// Serves one connection: reads the request header, then writes `header` and each of `chunks`
// as one HTTP chunk, flushed apart, then the terminating chunk.
class ScriptedServer {
 public:
  ScriptedServer(std::string header, std::vector<std::string> chunks)
      : header_(std::move(header)), chunks_(std::move(chunks)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(listener_, 1) == 0);
    socklen_t length = sizeof address;
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The request as read (valid once the watch ended).
  const std::string& request() const { return request_; }

 private:
  void Serve() {
    const int connection = ::accept(listener_, nullptr, nullptr);
    if (connection < 0) return;
    char buffer[4096];
    while (request_.find("\r\n\r\n") == std::string::npos) {
      const ssize_t got = ::read(connection, buffer, sizeof buffer);
      if (got <= 0) break;
      request_.append(buffer, static_cast<size_t>(got));
    }
    Write(connection, header_);
    for (const std::string& chunk : chunks_) {
      char size[32];
      std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
      Write(connection, size + chunk + "\r\n");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // separate reads
    }
    Write(connection, "0\r\n\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::close(connection);
  }
  static void Write(int fd, const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      const ssize_t n = ::write(fd, data.data() + sent, data.size() - sent);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  std::string header_;
  std::vector<std::string> chunks_;
  int listener_ = -1;
  int port_ = 0;
  std::string request_;
  std::thread thread_;
};

std::string Frame(const std::string& payload) {
  const size_t n = payload.size();
  std::string out{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                  static_cast<char>(n)};
  return out + payload;
}

std::string Header(const std::string& content_type) {
  return "HTTP/1.1 200 OK\r\nContent-Type: " + content_type +
         "\r\nTransfer-Encoding: chunked\r\n\r\n";
}

struct Watched {
  WatchResult result;
  std::vector<std::string> events;
  std::vector<WatchFraming> starts;
};

Watched WatchOnce(const ScriptedServer& server, const std::string& accept) {
  KubeConfig config;
  config.server = server.url();
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(config, {}, &client).ok());
  Watched out;
  std::promise<WatchResult> done;
  client->WatchAsync(
      "/api/v1/pods?watch=1", std::chrono::seconds(10),
      [&](std::string_view event) {
        out.events.emplace_back(event);
        return true;
      },
      [&](WatchResult result) { done.set_value(std::move(result)); },
      [&](int status, WatchFraming framing) {
        CHECK(status == 200);
        CHECK(out.events.empty());  // the start comes before any event
        out.starts.push_back(framing);
      },
      accept);
  out.result = done.get_future().get();
  return out;
}

TEST_CASE("Watch: a protobuf stream is cut into its length-prefixed frames wherever chunks split",
          "[kube]") {
  const std::string one = "first event";
  const std::string two(70000, 'x');  // longer than one read: 0x00 0x01 0x11 0x70 as length
  const std::string three = std::string("a\nb\0c", 5);  // a newline and a NUL inside: bytes
  const std::string stream = Frame(one) + Frame(two) + Frame(three) + Frame("");
  // Chunks cut inside a length prefix (after 2 bytes), inside a payload, and at a boundary; the
  // stream's end holds 3 bytes of a further length prefix that never completes.
  std::vector<std::string> chunks = {stream.substr(0, 2), stream.substr(2, 9),
                                     stream.substr(11, 40000), stream.substr(40011),
                                     std::string("\0\0\0", 3)};
  ScriptedServer server(Header("application/vnd.kubernetes.protobuf;stream=watch"), chunks);
  const Watched watched =
      WatchOnce(server, "application/vnd.kubernetes.protobuf, application/json");

  CHECK(server.request().find("\r\nAccept: application/vnd.kubernetes.protobuf, "
                              "application/json\r\n") != std::string::npos);
  CHECK(watched.starts == std::vector<WatchFraming>{WatchFraming::kLengthPrefixed});
  CHECK(watched.result.framing == WatchFraming::kLengthPrefixed);
  REQUIRE(watched.events.size() == 4);
  CHECK(watched.events[0] == one);
  CHECK(watched.events[1] == two);
  CHECK(watched.events[2] == three);
  CHECK(watched.events[3].empty());
  CHECK(watched.result.lines == 4);
  CHECK(watched.result.completed);
  CHECK(watched.result.error.empty());
}

TEST_CASE("Watch: a JSON answer to a protobuf request is cut into lines", "[kube]") {
  // The server chose JSON (an API server or proxy without protobuf): the Content-Type decides.
  std::vector<std::string> chunks = {"{\"type\":\"ADDED\"}\n{\"ty", "pe\":\"DELETED\"}\n"};
  ScriptedServer server(Header("application/json"), chunks);
  const Watched watched =
      WatchOnce(server, "application/vnd.kubernetes.protobuf, application/json");
  CHECK(watched.starts == std::vector<WatchFraming>{WatchFraming::kLines});
  CHECK(watched.events ==
        std::vector<std::string>{"{\"type\":\"ADDED\"}", "{\"type\":\"DELETED\"}"});
  CHECK(watched.result.completed);
}

TEST_CASE("Watch: a watch asks for JSON alone unless told otherwise", "[kube]") {
  ScriptedServer server(Header("application/json"), {"{}\n"});
  KubeConfig config;
  config.server = server.url();
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(config, {}, &client).ok());
  const WatchResult result = client->Watch("/api/v1/pods?watch=1", std::chrono::seconds(10),
                                           [](std::string_view) { return true; }, {});
  CHECK(result.lines == 1);
  CHECK(server.request().find("\r\nAccept: application/json\r\n") != std::string::npos);
}

TEST_CASE("Watch: a frame longer than the limit breaks the stream", "[kube]") {
  // A length of 0x7fffffff: far beyond any event, so the stream is taken as broken at once
  // rather than buffered.
  ScriptedServer server(Header("application/vnd.kubernetes.protobuf;stream=watch"),
                        {std::string("\x7f\xff\xff\xff", 4) + "abc"});
  const Watched watched = WatchOnce(server, "application/vnd.kubernetes.protobuf");
  CHECK(watched.events.empty());
  CHECK(watched.result.error.find("larger than") != std::string::npos);
  CHECK(!watched.result.completed);
}

}  // namespace
}  // namespace watch_framing_test
}  // namespace capext::kube
