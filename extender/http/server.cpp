// The listener and the server's lifecycle: options check, bind, the accept loop with its
// connection limit, the IO threads, and the bounded drain on shutdown.
//
// Each IO thread runs an io_context of its own, and each connection lives on one of them (round
// robin at accept). With one io_context shared by N threads, Asio hands completions between its
// threads through a mutex and a condition variable: measured under kube-scheduler's traffic that
// was about 20 futex calls per scheduled pod, the largest part of the extender's CPU.
#include "extender/http/server.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>

#include "extender/http/connection.h"
#include "extender/http/connection_registry.h"
#include "extender/http/overload_rejection.h"
#include "extender/http/reply_channel.h"
#include "extender/http/thread_name.h"
#include "extender/http/tls_context.h"

namespace capext::http {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// After the drain deadline every connection is told to close; this bounds the wait for them to
// actually do it (only a handler blocking an IO thread can make it matter).
constexpr std::chrono::milliseconds kForceCloseGrace{1000};
constexpr std::chrono::milliseconds kAcceptRetryDelay{50};

// The server whose IO thread this is, if any.
thread_local const void* running_server = nullptr;

std::string CheckOptions(const ServerOptions& options) {
  if (options.io_threads < 1) return "io_threads must be at least 1";
  if (options.max_connections < 1) return "max_connections must be at least 1";
  if (options.read_timeout.count() <= 0 || options.idle_timeout.count() <= 0) {
    return "read_timeout and idle_timeout must be positive";
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return "tls_cert_file and tls_key_file must be set together";
  }
  if (!options.client_ca_file.empty() && options.tls_cert_file.empty()) {
    return "client_ca_file requires tls_cert_file and tls_key_file";
  }
  return "";
}

}  // namespace

class Server::Impl {
 public:
  Impl(ServerOptions options, Handler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        registry_(options_.max_connections),
        contexts_(MakeContexts(options_.io_threads)),
        acceptor_(net::make_strand(*contexts_.front())),
        accept_retry_(acceptor_.get_executor()) {}

  ~Impl() {
    Shutdown(std::chrono::milliseconds(0));
    Wait();
    if (background_shutdown_.joinable()) background_shutdown_.join();
    CloseGate();
  }

  // Binds, listens and starts the IO threads. False with *error on failure.
  bool Open(std::string* error) {
    if (!options_.tls_cert_file.empty()) {
      tls_ = MakeServerTlsContext(options_, error);
      if (!tls_) return false;
    }
    boost::system::error_code ec;
    const net::ip::address address = net::ip::make_address(options_.address, ec);
    if (ec) {
      *error = "invalid listen address '" + options_.address + "': " + ec.message();
      return false;
    }
    const tcp::endpoint endpoint(address, options_.port);
    const std::string where = options_.address + ":" + std::to_string(options_.port);
    if (acceptor_.open(endpoint.protocol(), ec); ec) {
      *error = "open socket for " + where + ": " + ec.message();
      return false;
    }
    acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (acceptor_.bind(endpoint, ec); ec) {
      *error = "bind " + where + ": " + ec.message();
      return false;
    }
    if (acceptor_.listen(net::socket_base::max_listen_connections, ec); ec) {
      *error = "listen on " + where + ": " + ec.message();
      return false;
    }
    port_ = acceptor_.local_endpoint(ec).port();
    context_ = ConnectionContext{&options_, &handler_, &registry_, gate_};
    Accept();  // no IO thread runs yet: safe outside the acceptor's strand
    try {
      for (auto& context : contexts_) {
        io_threads_.emplace_back([this, io = context.get(), n = io_threads_.size()] {
          NameThisThread("ce-http-" + std::to_string(n));
          RunIoThread(io);
        });
      }
    } catch (const std::system_error& e) {
      *error = std::string("start IO threads: ") + e.what();
      StopContexts();
      return false;
    }
    std::lock_guard<std::mutex> lock(state_mutex_);
    state_ = State::kRunning;
    return true;
  }

  uint16_t port() const { return port_; }

  void Shutdown(std::chrono::milliseconds drain) {
    std::unique_lock<std::mutex> lock(state_mutex_);
    const bool on_io_thread = running_server == this;
    if (state_ == State::kRunning) {
      state_ = State::kStopping;
      if (on_io_thread) {
        // Joining the IO threads from one of them cannot work: finish in the background.
        background_shutdown_ = std::thread([this, drain] { RunShutdown(drain); });
        return;
      }
      lock.unlock();
      RunShutdown(drain);
      return;
    }
    if (!on_io_thread) stopped_.wait(lock, [this] { return state_ == State::kStopped; });
  }

  void Wait() {
    std::unique_lock<std::mutex> lock(state_mutex_);
    stopped_.wait(lock, [this] { return state_ == State::kStopped; });
  }

 private:
  enum class State { kStopped, kRunning, kStopping };

  // One io_context per IO thread (see the file comment); each kept running by a work guard
  // until the drain ends.
  static std::vector<std::unique_ptr<net::io_context>> MakeContexts(int threads) {
    std::vector<std::unique_ptr<net::io_context>> contexts;
    for (int i = 0; i < std::max(threads, 1); ++i)
      contexts.push_back(std::make_unique<net::io_context>(1));
    return contexts;
  }

  static std::vector<net::executor_work_guard<net::io_context::executor_type>> MakeGuards(
      const std::vector<std::unique_ptr<net::io_context>>& contexts) {
    std::vector<net::executor_work_guard<net::io_context::executor_type>> guards;
    for (const auto& context : contexts)
      guards.push_back(net::make_work_guard(*context));
    return guards;
  }

  void StopContexts() {
    keep_running_.clear();
    for (auto& context : contexts_)
      context->stop();
    for (auto& thread : io_threads_)
      thread.join();
  }

  void RunIoThread(net::io_context* io) {
    running_server = this;
    for (;;) {
      try {
        io->run();
        return;
      } catch (...) {
        // Nothing of ours throws from a completion handler; keep serving if something did.
      }
    }
  }

  // On the acceptor's strand.
  void Accept() {
    net::io_context& next = *contexts_[next_context_++ % contexts_.size()];
    acceptor_.async_accept(
        net::make_strand(next),
        [this](beast::error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
  }

  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open() || ec == net::error::operation_aborted) return;
    if (ec) {
      // Typically out of file descriptors: back off instead of spinning.
      accept_retry_.expires_after(kAcceptRetryDelay);
      accept_retry_.async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && acceptor_.is_open()) Accept();
      });
      return;
    }
    socket.set_option(tcp::no_delay(true), ec);
    // Only this strand adds connections, so a room seen here cannot vanish before Add.
    if (registry_.Size() >= options_.max_connections) {
      if (tls_) {
        socket.close(ec);  // a plaintext 503 would mean nothing to a TLS client
      } else {
        RejectOverload(std::move(socket));
      }
    } else {
      auto connection = tls_ ? MakeTlsConnection(std::move(socket), *tls_, context_)
                             : MakePlainConnection(std::move(socket), context_);
      if (registry_.Add(connection) == ConnectionRegistry::AddResult::kAdded) connection->Start();
    }
    Accept();
  }

  void RunShutdown(std::chrono::milliseconds drain) {
    const auto deadline = std::chrono::steady_clock::now() + drain;
    registry_.Close();
    net::post(acceptor_.get_executor(), [this] {
      beast::error_code ec;
      acceptor_.close(ec);
      accept_retry_.cancel();
    });
    for (const auto& connection : registry_.List())
      connection->RequestDrain();
    if (!registry_.WaitUntilEmpty(deadline)) {
      for (const auto& connection : registry_.List())
        connection->RequestClose();
      registry_.WaitUntilEmpty(std::chrono::steady_clock::now() + kForceCloseGrace);
    }
    StopContexts();
    // No IO thread runs any more: what is left can be touched from here.
    beast::error_code ec;
    acceptor_.close(ec);
    registry_.Clear();
    CloseGate();
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      state_ = State::kStopped;
    }
    stopped_.notify_all();
  }

  void CloseGate() {
    std::lock_guard<std::mutex> lock(gate_->mutex);
    gate_->open = false;
  }

  // Declaration order is destruction order in reverse: everything a connection points to is
  // declared before contexts_, whose destruction destroys the last connections.
  const ServerOptions options_;
  const Handler handler_;
  std::unique_ptr<net::ssl::context> tls_;
  std::shared_ptr<ResponseGate> gate_ = std::make_shared<ResponseGate>();
  ConnectionRegistry registry_;
  ConnectionContext context_;
  std::vector<std::unique_ptr<net::io_context>> contexts_;
  // Keep run() from returning while connections wait for a Responder with no I/O pending (for
  // instance during the drain, once the acceptor is closed).
  std::vector<net::executor_work_guard<net::io_context::executor_type>> keep_running_ =
      MakeGuards(contexts_);
  std::size_t next_context_ = 0;  // on the acceptor's strand
  tcp::acceptor acceptor_;
  net::steady_timer accept_retry_;
  std::vector<std::thread> io_threads_;
  uint16_t port_ = 0;

  std::mutex state_mutex_;
  std::condition_variable stopped_;
  State state_ = State::kStopped;  // guarded by state_mutex_
  std::thread background_shutdown_;
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() = default;

std::unique_ptr<Server> Server::Start(ServerOptions options, Handler handler, std::string* error) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  try {
    if (std::string problem = CheckOptions(options); !problem.empty()) {
      *error = problem;
      return nullptr;
    }
    if (!handler) {
      *error = "no handler";
      return nullptr;
    }
    auto impl = std::make_unique<Impl>(std::move(options), std::move(handler));
    if (!impl->Open(error)) return nullptr;
    return std::unique_ptr<Server>(new Server(std::move(impl)));
  } catch (const std::exception& e) {
    *error = std::string("start HTTP server: ") + e.what();
    return nullptr;
  }
}

uint16_t Server::port() const {
  return impl_->port();
}

void Server::Shutdown(std::chrono::milliseconds drain) {
  impl_->Shutdown(drain);
}

void Server::Wait() {
  impl_->Wait();
}

}  // namespace capext::http
