// Tests of the HTTP(S) transport (extender/http/server.h) through real loopback connections.
#include "extender/http/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/http_client.h"

namespace http_server_test {
namespace {

using capext::http::Handler;
using capext::http::Request;
using capext::http::Responder;
using capext::http::Response;
using capext::http::Server;
using capext::http::ServerOptions;
using capext::test::ClientOptions;
using capext::test::Fetch;
using capext::test::HttpConnection;
using capext::test::RawConnection;
using capext::test::SendRawBytes;
using namespace std::chrono_literals;

const std::string kHost = "127.0.0.1";

// "<method> <target> tls=<0|1> verified=<0|1> peer=<ip:port> x-test=<value>\n<body>"
std::string Describe(const Request& request) {
  return request.method + " " + request.target + " tls=" + (request.tls ? "1" : "0") +
         " verified=" + (request.client_verified ? "1" : "0") + " peer=" + request.peer +
         " x-test=" + std::string(request.Header("x-test")) + "\n" + request.body;
}

void Echo(Request&& request, Responder respond) {
  Response response;
  response.content_type = "text/plain";
  response.body = Describe(request);
  respond(std::move(response));
}

std::unique_ptr<Server> StartServer(ServerOptions options, Handler handler) {
  options.address = kHost;
  options.port = 0;
  std::string error;
  auto server = Server::Start(std::move(options), std::move(handler), &error);
  INFO(error);
  REQUIRE(server != nullptr);
  REQUIRE(server->port() != 0);
  return server;
}

// Answers requests from its own thread after a delay: what a bind waiting on the API server does.
class DelayedResponder {
 public:
  DelayedResponder() : thread_([this] { Run(); }) {}
  ~DelayedResponder() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void Later(std::chrono::milliseconds delay, Responder respond, Response response) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(
          {std::chrono::steady_clock::now() + delay, std::move(respond), std::move(response)});
    }
    wake_.notify_all();
  }

 private:
  struct Job {
    std::chrono::steady_clock::time_point due;
    Responder respond;
    Response response;
  };
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      std::this_thread::sleep_until(job.due);
      job.respond(std::move(job.response));
      job = {};
      lock.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

// Certificates made once per test run with the openssl CLI, in a temporary directory.
struct Certificates {
  std::string dir, server_cert, server_key, client_ca, client_cert, client_key, rogue_cert,
      rogue_key;
  bool ok = false;

  Certificates() {
    char pattern[] = "/tmp/capext-http-test-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return;
    dir = pattern;
    auto path = [&](const char* name) { return dir + "/" + name; };
    server_cert = path("server.crt");
    server_key = path("server.key");
    client_ca = path("client-ca.crt");
    client_cert = path("client.crt");
    client_key = path("client.key");
    rogue_cert = path("rogue.crt");
    rogue_key = path("rogue.key");
    const std::string quiet = " >/dev/null 2>&1";
    const std::string self_signed = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 ";
    const std::string commands[] = {
        self_signed + "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
            server_key + " -out " + server_cert,
        self_signed + "-subj /CN=test-client-ca -keyout " + path("client-ca.key") + " -out " +
            client_ca,
        "openssl req -newkey rsa:2048 -nodes -subj /CN=kube-scheduler -keyout " + client_key +
            " -out " + path("client.csr"),
        "openssl x509 -req -days 2 -in " + path("client.csr") + " -CA " + client_ca + " -CAkey " +
            path("client-ca.key") + " -CAcreateserial -out " + client_cert,
        self_signed + "-subj /CN=rogue -keyout " + rogue_key + " -out " + rogue_cert,
    };
    for (const auto& command : commands) {
      if (std::system((command + quiet).c_str()) != 0) return;
    }
    ok = true;
  }
  ~Certificates() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

const Certificates& TestCertificates() {
  static const Certificates certificates;
  REQUIRE(certificates.ok);
  return certificates;
}

bool StartsWith(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

TEST_CASE("several requests share one keep-alive connection", "[http]") {
  auto server = StartServer({}, Echo);
  HttpConnection connection;
  REQUIRE(connection.Connect(kHost, server->port()));
  const std::string peer = kHost + ":" + std::to_string(connection.local_port());
  for (int i = 0; i < 3; ++i) {
    const std::string body = "{\"n\":" + std::to_string(i) + "}";
    auto response = connection.Send("POST", "/filter?i=" + std::to_string(i), body,
                                    {{"X-Test", "v" + std::to_string(i)}});
    INFO(response.error);
    REQUIRE(response.ok());
    CHECK(response.status == 200);
    CHECK(response.body == "POST /filter?i=" + std::to_string(i) + " tls=0 verified=0 peer=" +
                               peer + " x-test=v" + std::to_string(i) + "\n" + body);
    CHECK(response.Header("content-length") == std::to_string(response.body.size()));
    CHECK(response.Header("content-type") == "text/plain");
    CHECK(response.keep_alive);
  }
  CHECK(connection.is_open());
}

TEST_CASE("HTTP/1.0 and Connection: close end the connection after the response", "[http]") {
  auto server = StartServer({}, Echo);
  const std::string reply = SendRawBytes(kHost, server->port(), "GET /old HTTP/1.0\r\n\r\n");
  CHECK(StartsWith(reply, "HTTP/1.0 200 OK\r\n"));
  CHECK(reply.find("Content-Length: ") != std::string::npos);
  CHECK(reply.find("GET /old") != std::string::npos);

  HttpConnection connection;
  REQUIRE(connection.Connect(kHost, server->port()));
  auto response = connection.Send("GET", "/last", "", {{"Connection", "close"}});
  REQUIRE(response.ok());
  CHECK(response.status == 200);
  CHECK_FALSE(response.keep_alive);
  CHECK_FALSE(connection.is_open());
}

TEST_CASE("a handler may answer later from another thread", "[http]") {
  DelayedResponder later;
  auto server = StartServer({}, [&](Request&& request, Responder respond) {
    Response response;
    response.body = request.body;
    later.Later(5ms, std::move(respond), std::move(response));
  });
  std::vector<std::thread> clients;
  std::atomic<int> good{0};
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      HttpConnection connection;
      if (!connection.Connect(kHost, server->port())) return;
      for (int i = 0; i < 10; ++i) {
        const std::string body = std::to_string(c) + "/" + std::to_string(i);
        auto response = connection.Post("/bind", body);
        if (response.ok() && response.status == 200 && response.body == body) ++good;
      }
    });
  }
  for (auto& client : clients)
    client.join();
  CHECK(good == 40);
}

// A loopback client made of bare sockets, to half-close exactly when a test says.
int ConnectRaw(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  ::inet_pton(AF_INET, kHost.c_str(), &address.sin_addr);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  return fd;
}

void WriteRaw(int fd, const std::string& bytes) {
  REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(bytes.size()));
}

TEST_CASE("a request whose client closed before it was read says so; one still open does not",
          "[http]") {
  // Asked on /bind only, as serve does; a request on another path is never said to be gone.
  // One IO thread, held by the first request's handler, so that the others are read only after
  // their clients wrote them (and, for one, closed): what a busy server meets.
  std::promise<void> release, entered;
  std::shared_future<void> released = release.get_future().share();
  std::mutex mutex;
  std::vector<std::pair<std::string, bool>> seen;  // body, client_gone
  ServerOptions options;
  options.io_threads = 1;
  options.client_gone_paths = {"/bind"};
  auto server = StartServer(options, [&](Request&& request, Responder respond) {
    if (request.body == "first") {
      entered.set_value();
      released.wait();
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      seen.emplace_back(request.body, request.client_gone);
    }
    Response response;
    response.body = request.body;
    respond(std::move(response));
  });
  const auto post = [](const std::string& body, const std::string& path = "/bind?x=1") {
    return "POST " + path +
           " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
           body;
  };
  const int first = ConnectRaw(server->port());
  WriteRaw(first, post("first"));
  entered.get_future().wait();  // the IO thread is now in the first handler
  const int gone = ConnectRaw(server->port());
  WriteRaw(gone, post("gone"));
  ::shutdown(gone, SHUT_WR);  // the client gives up: its FIN follows the request
  const int gone_unasked = ConnectRaw(server->port());
  WriteRaw(gone_unasked, post("gone-unasked", "/filter"));
  ::shutdown(gone_unasked, SHUT_WR);
  const int open = ConnectRaw(server->port());
  WriteRaw(open, post("open"));
  std::this_thread::sleep_for(50ms);  // loopback delivers at once; a margin all the same
  release.set_value();
  char buffer[4096];
  CHECK(::recv(open, buffer, sizeof(buffer), 0) > 0);  // the open client is answered
  ::close(first);
  ::close(gone);
  ::close(gone_unasked);
  ::close(open);
  server->Shutdown(1s);
  std::lock_guard<std::mutex> lock(mutex);
  std::map<std::string, bool> by_body(seen.begin(), seen.end());
  REQUIRE(by_body.count("first") == 1);
  CHECK_FALSE(by_body["first"]);
  REQUIRE(by_body.count("open") == 1);
  CHECK_FALSE(by_body["open"]);
  REQUIRE(by_body.count("gone") == 1);
  CHECK(by_body["gone"]);
  REQUIRE(by_body.count("gone-unasked") == 1);
  CHECK_FALSE(by_body["gone-unasked"]);
}

TEST_CASE("pipelined requests are answered in order", "[http]") {
  DelayedResponder later;
  auto server = StartServer({}, [&](Request&& request, Responder respond) {
    Response response;
    response.body = request.target;
    if (request.target == "/slow") {
      later.Later(100ms, std::move(respond), std::move(response));
    } else {
      respond(std::move(response));
    }
  });
  const std::string reply =
      SendRawBytes(kHost, server->port(),
                   "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
                   "GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const auto slow = reply.find("/slow");
  const auto fast = reply.find("/fast");
  REQUIRE(slow != std::string::npos);
  REQUIRE(fast != std::string::npos);
  CHECK(slow < fast);
}

TEST_CASE("a body over the limit gets 413 and the server keeps serving", "[http]") {
  ServerOptions options;
  options.body_limit = 1024;
  auto server = StartServer(options, Echo);

  auto rejected = Fetch(kHost, server->port(), "POST", "/filter", std::string(4096, 'x'));
  INFO(rejected.error);
  REQUIRE(rejected.ok());
  CHECK(rejected.status == 413);
  CHECK(rejected.body == R"({"error":"request body exceeds limit of 1024 bytes"})");
  CHECK(rejected.Header("content-type") == "application/json");
  CHECK_FALSE(rejected.keep_alive);

  auto at_limit = Fetch(kHost, server->port(), "POST", "/filter", std::string(1024, 'y'));
  REQUIRE(at_limit.ok());
  CHECK(at_limit.status == 200);
}

TEST_CASE("bodies above Beast's 1 MB default pass under the default limit", "[http]") {
  auto server = StartServer({}, Echo);
  const std::string body(3 * 1024 * 1024, 'n');
  auto response = Fetch(kHost, server->port(), "POST", "/filter", body);
  REQUIRE(response.ok());
  CHECK(response.status == 200);
  CHECK(response.body.size() > body.size());
}

TEST_CASE("malformed requests get 400 or 431 and the connection closes", "[http]") {
  auto server = StartServer({}, Echo);
  const std::string garbage = SendRawBytes(kHost, server->port(), "GARBAGE\x01\x02 \r\n\r\n");
  CHECK(StartsWith(garbage, "HTTP/1.1 400 Bad Request\r\n"));
  CHECK(garbage.find(R"({"error":"malformed HTTP request)") != std::string::npos);

  const std::string huge_header =
      "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70 * 1024, 'h') + "\r\n\r\n";
  const std::string too_big = SendRawBytes(kHost, server->port(), huge_header);
  CHECK(StartsWith(too_big, "HTTP/1.1 431 "));

  auto after = Fetch(kHost, server->port(), "GET", "/still-up");
  REQUIRE(after.ok());
  CHECK(after.status == 200);
}

TEST_CASE("handler failures become 500 and a second answer is ignored", "[http]") {
  auto server = StartServer({}, [&](Request&& request, Responder respond) {
    if (request.target == "/throw") throw std::runtime_error("boom");
    if (request.target == "/drop") return;
    respond(Response{200, "text/plain", "first", {}});
    respond(Response{201, "text/plain", "second", {}});
  });
  HttpConnection connection;
  REQUIRE(connection.Connect(kHost, server->port()));
  auto thrown = connection.Get("/throw");
  REQUIRE(thrown.ok());
  CHECK(thrown.status == 500);
  CHECK(thrown.body == R"({"error":"handler failed: boom"})");
  auto dropped = connection.Get("/drop");
  REQUIRE(dropped.ok());
  CHECK(dropped.status == 500);
  auto twice = connection.Get("/twice");
  REQUIRE(twice.ok());
  CHECK(twice.status == 200);
  CHECK(twice.body == "first");
  CHECK(connection.Get("/again").status == 200);
}

TEST_CASE("connections beyond max_connections get 503", "[http]") {
  ServerOptions options;
  options.max_connections = 1;
  auto server = StartServer(options, Echo);
  auto first = std::make_unique<HttpConnection>();
  REQUIRE(first->Connect(kHost, server->port()));
  REQUIRE(first->Get("/").status == 200);  // registered by now

  const std::string refused =
      SendRawBytes(kHost, server->port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(StartsWith(refused, "HTTP/1.1 503 Service Unavailable\r\n"));

  first.reset();  // frees the slot once the server notices the close
  int status = 0;
  for (int attempt = 0; attempt < 50 && status != 200; ++attempt) {
    status = Fetch(kHost, server->port(), "GET", "/").status;
    if (status != 200) std::this_thread::sleep_for(20ms);
  }
  CHECK(status == 200);
}

TEST_CASE("idle connections and slow requests time out", "[http]") {
  ServerOptions options;
  options.idle_timeout = 200ms;
  options.read_timeout = 300ms;
  auto server = StartServer(options, Echo);

  RawConnection idle;
  REQUIRE(idle.Connect(kHost, server->port()));
  const auto started = std::chrono::steady_clock::now();
  REQUIRE(idle.Write("GET /once HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto idle_result = idle.ReadUntilClosed(3s);
  CHECK(idle_result.closed_by_peer);
  CHECK(StartsWith(idle_result.data, "HTTP/1.1 200 OK\r\n"));
  CHECK(std::chrono::steady_clock::now() - started < 2s);

  RawConnection slow;
  REQUIRE(slow.Connect(kHost, server->port()));
  REQUIRE(slow.Write("POST /partial HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345"));
  auto slow_result = slow.ReadUntilClosed(3s);
  CHECK(slow_result.closed_by_peer);
  CHECK(slow_result.data.empty());
}

TEST_CASE("HTTPS with a self-signed certificate", "[http]") {
  const auto& certs = TestCertificates();
  ServerOptions options;
  options.tls_cert_file = certs.server_cert;
  options.tls_key_file = certs.server_key;
  auto server = StartServer(options, Echo);

  ClientOptions tls;
  tls.tls = true;
  tls.ca_file = certs.server_cert;
  HttpConnection connection(tls);
  REQUIRE(connection.Connect(kHost, server->port()));
  for (int i = 0; i < 3; ++i) {
    auto response = connection.Post("/filter", "{}");
    INFO(response.error);
    REQUIRE(response.ok());
    CHECK(response.status == 200);
    CHECK(response.body.find(" tls=1 verified=0 ") != std::string::npos);
  }
  auto plain = Fetch(kHost, server->port(), "GET", "/");
  CHECK_FALSE(plain.ok());
}

TEST_CASE("mTLS accepts only client certificates signed by the client CA", "[http]") {
  const auto& certs = TestCertificates();
  ServerOptions options;
  options.tls_cert_file = certs.server_cert;
  options.tls_key_file = certs.server_key;
  options.client_ca_file = certs.client_ca;
  auto server = StartServer(options, Echo);

  ClientOptions tls;
  tls.tls = true;
  tls.ca_file = certs.server_cert;
  tls.cert_file = certs.client_cert;
  tls.key_file = certs.client_key;
  auto verified = Fetch(kHost, server->port(), "POST", "/bind", "{}", tls);
  INFO(verified.error);
  REQUIRE(verified.ok());
  CHECK(verified.status == 200);
  CHECK(verified.body.find(" tls=1 verified=1 ") != std::string::npos);

  ClientOptions anonymous = tls;
  anonymous.cert_file.clear();
  anonymous.key_file.clear();
  CHECK_FALSE(Fetch(kHost, server->port(), "POST", "/bind", "{}", anonymous).ok());

  ClientOptions rogue = tls;
  rogue.cert_file = certs.rogue_cert;
  rogue.key_file = certs.rogue_key;
  CHECK_FALSE(Fetch(kHost, server->port(), "POST", "/bind", "{}", rogue).ok());
}

TEST_CASE("Start reports bad options, addresses, ports and certificates", "[http]") {
  std::string error;
  ServerOptions bad_address;
  bad_address.address = "not-an-ip";
  bad_address.port = 0;
  CHECK(Server::Start(bad_address, Echo, &error) == nullptr);
  CHECK(error.find("not-an-ip") != std::string::npos);

  auto first = StartServer({}, Echo);
  ServerOptions taken;
  taken.port = first->port();
  error.clear();
  CHECK(Server::Start(taken, Echo, &error) == nullptr);
  CHECK(error.find("bind") != std::string::npos);

  ServerOptions missing_cert;
  missing_cert.port = 0;
  missing_cert.tls_cert_file = "/nonexistent/server.crt";
  missing_cert.tls_key_file = "/nonexistent/server.key";
  error.clear();
  CHECK(Server::Start(missing_cert, Echo, &error) == nullptr);
  CHECK(error.find("/nonexistent/server.crt") != std::string::npos);

  ServerOptions half_tls;
  half_tls.port = 0;
  half_tls.tls_cert_file = "/nonexistent/server.crt";
  error.clear();
  CHECK(Server::Start(half_tls, Echo, &error) == nullptr);
  CHECK_FALSE(error.empty());
}

TEST_CASE("Shutdown completes a request in flight and closes idle connections", "[http]") {
  DelayedResponder later;
  std::promise<void> received;
  auto server = StartServer({}, [&](Request&& request, Responder respond) {
    if (request.target == "/slow") {
      received.set_value();
      later.Later(300ms, std::move(respond), Response{200, "text/plain", "done", {}});
      return;
    }
    Echo(std::move(request), std::move(respond));
  });
  const uint16_t port = server->port();

  HttpConnection idle;
  REQUIRE(idle.Connect(kHost, port));
  REQUIRE(idle.Get("/warm").status == 200);

  auto in_flight =
      std::async(std::launch::async, [port] { return Fetch(kHost, port, "GET", "/slow"); });
  received.get_future().wait();
  const auto started = std::chrono::steady_clock::now();
  server->Shutdown(5s);
  const auto took = std::chrono::steady_clock::now() - started;
  server->Wait();

  auto response = in_flight.get();
  INFO(response.error);
  REQUIRE(response.ok());
  CHECK(response.status == 200);
  CHECK(response.body == "done");
  CHECK_FALSE(response.keep_alive);
  CHECK(took >= 200ms);
  CHECK(took < 3s);
  CHECK_FALSE(idle.Get("/after").ok());
  CHECK_FALSE(Fetch(kHost, port, "GET", "/after").ok());
}

TEST_CASE("Shutdown abandons a request past the drain deadline", "[http]") {
  std::promise<void> received;
  Responder kept;
  std::mutex kept_mutex;
  auto server = StartServer({}, [&](Request&&, Responder respond) {
    std::lock_guard<std::mutex> lock(kept_mutex);
    kept = std::move(respond);  // never answered while the server runs
    received.set_value();
  });
  const uint16_t port = server->port();
  auto in_flight =
      std::async(std::launch::async, [port] { return Fetch(kHost, port, "GET", "/"); });
  received.get_future().wait();
  const auto started = std::chrono::steady_clock::now();
  server->Shutdown(100ms);
  CHECK(std::chrono::steady_clock::now() - started < 2s);
  CHECK_FALSE(in_flight.get().ok());
  server.reset();
  std::lock_guard<std::mutex> lock(kept_mutex);
  kept(Response{});  // after the server is gone: dropped, harmlessly
  kept = nullptr;
}

TEST_CASE("Shutdown may be called from a handler", "[http]") {
  std::atomic<Server*> self{nullptr};
  auto server = StartServer({}, [&](Request&& request, Responder respond) {
    Echo(std::move(request), std::move(respond));
    self.load()->Shutdown(2s);
  });
  self = server.get();
  auto response = Fetch(kHost, server->port(), "GET", "/stop");
  CHECK(response.status == 200);
  server->Wait();
  CHECK_FALSE(Fetch(kHost, server->port(), "GET", "/").ok());
}
}  // namespace http_server_test
