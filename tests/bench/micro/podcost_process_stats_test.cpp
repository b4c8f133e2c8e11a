// ProcessWindow counts what a process did inside a window: a child that starts 25 short-lived
// threads (each sleeping 1 ms, so each switches out at least once) inside the window and none
// outside must show 25 threads created and, with taskstats exit records, at least 25 voluntary
// context switches that /proc alone can no longer see once the threads are gone. Without the
// exit records (no CAP_NET_ADMIN) the counts are lower bounds and say so.
#include "bench/micro/podcost_process_stats.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

namespace capext::bench {
namespace podcost_process_stats_test {
namespace {

constexpr int kThreads = 25;

// A child that waits for a byte on go[0], starts and joins kThreads threads one by one, writes a
// byte to done[1], then waits for EOF on go[0] and exits.
pid_t StartThreadingChild(const int go[2], const int done[2]) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  close(go[1]);
  close(done[0]);
  char byte;
  if (read(go[0], &byte, 1) != 1) _exit(1);
  for (int i = 0; i < kThreads; ++i)
    std::thread([] { usleep(1000); }).join();
  if (write(done[1], "x", 1) != 1) _exit(1);
  while (read(go[0], &byte, 1) > 0) {
  }
  _exit(0);
}

TEST_CASE("a window counts the threads a process created in it and their switches", "[podcost]") {
  int go[2], done[2];
  REQUIRE(pipe(go) == 0);
  REQUIRE(pipe(done) == 0);
  const pid_t child = StartThreadingChild(go, done);
  REQUIRE(child > 0);
  close(go[0]);
  close(done[1]);
  TaskExitListener exits;
  const Status started = exits.Start();
  const bool exact = started.ok();
  ProcessWindow window(child, &exits);
  window.Begin();
  REQUIRE(write(go[1], "x", 1) == 1);
  char byte;
  REQUIRE(read(done[0], &byte, 1) == 1);
  const WindowStats stats = window.End();
  close(go[1]);
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(stats.threads_before == 1);
  CHECK(stats.threads_after == 1);
  if (exact) {
    CHECK(stats.exact);
    CHECK(stats.threads_created == kThreads);
    CHECK(stats.voluntary_switches >= kThreads);
  } else {
    WARN("taskstats unavailable (" << started.message() << "): lower bounds only");
    CHECK_FALSE(stats.exact);
    CHECK(stats.threads_created <= kThreads);
  }
  CHECK(stats.thread_ids_sampled <= kThreads);
  CHECK(stats.rss_after_kb > 0);
}

TEST_CASE("a window over a process at rest counts nothing created", "[podcost]") {
  int go[2], done[2];
  REQUIRE(pipe(go) == 0);
  REQUIRE(pipe(done) == 0);
  const pid_t child = StartThreadingChild(go, done);
  REQUIRE(child > 0);
  TaskExitListener exits;
  (void)exits.Start();  // without taskstats the window counts lower bounds; none here either way
  ProcessWindow window(child, &exits);
  window.Begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const WindowStats stats = window.End();
  CHECK(stats.threads_created == 0);
  CHECK(stats.threads_max == 1);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  for (int fd : {go[0], go[1], done[0], done[1]})
    close(fd);
}

TEST_CASE("status fields are read as numbers", "[podcost]") {
  const auto fields = ReadStatusFields("/proc/self/status");
  CHECK(fields.at("Threads") >= 1);
  CHECK(fields.at("VmRSS") > 0);
  CHECK(fields.count("voluntary_ctxt_switches") == 1);
  CHECK(fields.count("Name") == 0);  // not a number
  CHECK(ProcessCpuMs(getpid()) >= 0);
  CHECK(ProcessCpuMs(-5) == -1);
}

}  // namespace
}  // namespace podcost_process_stats_test
}  // namespace capext::bench
