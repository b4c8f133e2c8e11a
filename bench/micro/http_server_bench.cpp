// Keep-alive load against capext::http::Server with an echo-sized JSON handler: N client threads,
// each with one connection sending small POSTs back to back (kube-scheduler's filter pattern),
// for a fixed time. Prints requests/s and latency percentiles. The client is plain blocking POSIX
// I/O so that it costs as little as possible next to the server on the same machine.
//
// Usage: bench_http_server_bench [--connections N] [--seconds S] [--io-threads T]
//                                [--body-bytes B] [--async] [--quick] [--json FILE]
//   --async: the handler answers from a separate thread (the bind path) instead of inline.
//   --quick: one second instead of three. Writes out/bench/http_server_bench.json (or --json).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/micro/bench_support.h"
#include "extender/http/server.h"

namespace {

using capext::bench::ConnectLoopback;

using Clock = std::chrono::steady_clock;

struct BenchOptions {
  int connections = 4;
  int seconds = 3;
  int io_threads = 2;
  int body_bytes = 200;
  bool async = false;
  std::string json;  // empty: out/bench/http_server_bench.json
};

// The bind path: a thread that answers requests handed to it.
class ResponderThread {
 public:
  ResponderThread() : thread_([this] { Run(); }) {}
  ~ResponderThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  void Answer(capext::http::Responder respond, capext::http::Response response) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.emplace_back(std::move(respond), std::move(response));
    }
    wake_.notify_one();
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job.first(std::move(job.second));
      job = {};
      lock.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<capext::http::Responder, capext::http::Response>> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

// Sends `request` and reads one Content-Length-framed response into `buffer`. False on error.
bool RoundTrip(int fd, const std::string& request, std::string& buffer) {
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  buffer.clear();
  std::size_t header_end = std::string::npos;
  std::size_t total = 0;
  char chunk[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    if (header_end == std::string::npos) {
      header_end = buffer.find("\r\n\r\n");
      if (header_end == std::string::npos) continue;
      const std::size_t length_at = buffer.find("Content-Length: ");
      if (length_at == std::string::npos || length_at > header_end) return false;
      total = header_end + 4 + std::strtoul(buffer.c_str() + length_at + 16, nullptr, 10);
    }
    if (buffer.size() >= total) return buffer.size() == total;
  }
}

BenchOptions ParseArgs(int argc, char** argv) {
  BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (flag == "--connections")
      options.connections = std::max(1, next());
    else if (flag == "--seconds")
      options.seconds = std::max(1, next());
    else if (flag == "--io-threads")
      options.io_threads = std::max(1, next());
    else if (flag == "--body-bytes")
      options.body_bytes = std::max(0, next());
    else if (flag == "--async")
      options.async = true;
    else if (flag == "--quick")
      options.seconds = 1;
    else if (flag == "--json" && i + 1 < argc)
      options.json = argv[++i];
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions bench = ParseArgs(argc, argv);
  ResponderThread responder_thread;
  capext::http::ServerOptions server_options;
  server_options.port = 0;
  server_options.io_threads = bench.io_threads;
  const std::string answer =
      R"({"NodeNames":["node-1","node-2","node-3"],"FailedNodes":{},"Error":""})";
  std::string error;
  auto server = capext::http::Server::Start(
      server_options,
      [&](capext::http::Request&&, capext::http::Responder respond) {
        capext::http::Response response;
        response.body = answer;
        if (bench.async) {
          responder_thread.Answer(std::move(respond), std::move(response));
        } else {
          respond(std::move(response));
        }
      },
      &error);
  if (!server) {
    std::fprintf(stderr, "start: %s\n", error.c_str());
    return 1;
  }

  const std::string body(static_cast<std::size_t>(bench.body_bytes), 'x');
  const std::string request =
      "POST /filter HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nAccept-Encoding: gzip\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::vector<uint32_t>> latencies_us(static_cast<std::size_t>(bench.connections));
  std::vector<std::thread> clients;
  for (int c = 0; c < bench.connections; ++c) {
    clients.emplace_back([&, c] {
      const int fd = ConnectLoopback(server->port());
      if (fd < 0) {
        ++failures;
        return;
      }
      auto& samples = latencies_us[static_cast<std::size_t>(c)];
      samples.reserve(1 << 20);
      std::string buffer;
      while (!stop.load(std::memory_order_relaxed)) {
        const auto started = Clock::now();
        if (!RoundTrip(fd, request, buffer)) {
          ++failures;
          break;
        }
        const auto took =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
        samples.push_back(static_cast<uint32_t>(took.count()));
      }
      ::close(fd);
    });
  }
  const auto started = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(bench.seconds));
  stop = true;
  for (auto& client : clients)
    client.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  server->Shutdown(std::chrono::milliseconds(1000));

  std::vector<uint32_t> all;
  for (const auto& samples : latencies_us)
    all.insert(all.end(), samples.begin(), samples.end());
  std::sort(all.begin(), all.end());
  auto percentile = [&](double p) {
    return all.empty() ? 0u
                       : all[std::min(all.size() - 1, static_cast<std::size_t>(p * all.size()))];
  };
  std::printf("connections=%d io_threads=%d body=%dB handler=%s\n", bench.connections,
              bench.io_threads, bench.body_bytes, bench.async ? "async" : "inline");
  std::printf("requests=%zu failures=%d req/s=%.0f p50=%uus p99=%uus max=%uus\n", all.size(),
              failures.load(), static_cast<double>(all.size()) / elapsed, percentile(0.50),
              percentile(0.99), all.empty() ? 0u : all.back());
  capext::bench::Report report("http_server_bench");
  report.Number("connections", bench.connections);
  report.Number("io_threads", bench.io_threads);
  report.Number("body_bytes", bench.body_bytes);
  report.Number("requests", static_cast<double>(all.size()));
  report.Number("failures", failures.load());
  report.Number("requests_per_second", static_cast<double>(all.size()) / elapsed);
  report.Number("p50_us", percentile(0.50));
  report.Number("p99_us", percentile(0.99));
  report.Note("handler", bench.async ? "async" : "inline");
  report.Write(bench.json);
  return failures.load() == 0 ? 0 : 1;
}
