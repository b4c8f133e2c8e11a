// TaskExitListener: the kernel's per-task exit statistics (taskstats over generic netlink,
// registered for every CPU), kept for the processes bench_podcost_bench measures. A thread that
// lives a millisecond (one per bind) is invisible to /proc sampling; its exit record is not, and it
// carries the thread's context switches, which /proc loses once the thread is gone. So "threads
// created" and "context switches" of a window are exact with this listener (ProcessWindow).
// Needs CAP_NET_ADMIN (root in the benchmark container); Start() reports why it cannot run, and
// the caller falls back to sampling (lower bounds). Lost messages (ENOBUFS) are counted.
// Thread-safety: Start/Stop from one thread; Watch/Take from any thread.
#pragma once

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"

namespace capext::bench {

// NLMSG_OK for a buffer of `left` bytes, without the macro's comparison of the header's unsigned
// length with a signed count (clang warns on it in our code, GCC does not).
inline bool NetlinkMessageFits(const nlmsghdr* h, int left) {
  return left >= static_cast<int>(sizeof(nlmsghdr)) && h->nlmsg_len >= sizeof(nlmsghdr) &&
         static_cast<int64_t>(h->nlmsg_len) <= left;
}

struct ExitedTask {
  int tid = 0;
  int tgid = 0;
  int64_t voluntary_switches = 0;
  int64_t involuntary_switches = 0;
};

class TaskExitListener {
 public:
  TaskExitListener() = default;
  TaskExitListener(const TaskExitListener&) = delete;
  TaskExitListener& operator=(const TaskExitListener&) = delete;
  ~TaskExitListener() { Stop(); }

  Status Start() {
    fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (fd_ < 0) return Fail("netlink socket");
    const int buffer = 32 << 20;
    if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof(buffer)) != 0)
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
    sockaddr_nl address{};
    address.nl_family = AF_NETLINK;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
      return Fail("netlink bind");
    family_ = ResolveFamily();
    if (family_ <= 0) return Fail("no TASKSTATS generic netlink family");
    cpus_ = "0-" + std::to_string(std::max(1u, std::thread::hardware_concurrency()) - 1);
    if (!SendCommand(TASKSTATS_CMD_ATTR_REGISTER_CPUMASK)) return Fail("register");
    timeval tv{0, 100'000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    thread_ = std::thread([this] { Receive(); });
    return {};
  }

  void Stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
      SendCommand(TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK);
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool running() const { return thread_.joinable(); }
  // Messages the kernel could not deliver (receive buffer full) since Start().
  int64_t lost() const { return lost_.load(); }
  // Exits of this process's tasks are kept from now on.
  void Watch(int tgid) {
    std::lock_guard lock(mutex_);
    watched_.insert(tgid);
  }
  // The kept exits of `tgid` received so far; they are forgotten.
  std::vector<ExitedTask> Take(int tgid) {
    std::lock_guard lock(mutex_);
    std::vector<ExitedTask> out, rest;
    for (auto& e : exits_)
      (e.tgid == tgid ? out : rest).push_back(e);
    exits_ = std::move(rest);
    return out;
  }

 private:
  struct Message {
    nlmsghdr header;
    genlmsghdr genl;
    char attributes[256];
  };

  static Status Fail(const char* what) {
    return Status::Unavailable(std::string(what) + ": " + std::strerror(errno));
  }

  static void AddAttribute(Message& m, uint16_t type, const void* data, std::size_t size) {
    auto* a =
        reinterpret_cast<nlattr*>(reinterpret_cast<char*>(&m) + NLMSG_ALIGN(m.header.nlmsg_len));
    a->nla_type = type;
    a->nla_len = static_cast<uint16_t>(NLA_HDRLEN + size);
    std::memcpy(reinterpret_cast<char*>(a) + NLA_HDRLEN, data, size);
    m.header.nlmsg_len = NLMSG_ALIGN(m.header.nlmsg_len) + NLA_ALIGN(a->nla_len);
  }

  // Calls fn(type, payload, size) for each attribute in [data, data + size).
  template <typename Fn>
  static void ForEachAttribute(const char* data, int size, Fn fn) {
    while (size >= static_cast<int>(NLA_HDRLEN)) {
      const auto* a = reinterpret_cast<const nlattr*>(data);
      if (a->nla_len < NLA_HDRLEN || a->nla_len > size) return;
      fn(a->nla_type & NLA_TYPE_MASK, data + NLA_HDRLEN, static_cast<int>(a->nla_len - NLA_HDRLEN));
      size -= static_cast<int>(NLA_ALIGN(a->nla_len));
      data += NLA_ALIGN(a->nla_len);
    }
  }

  int ResolveFamily() {
    Message m{};
    m.header.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
    m.header.nlmsg_type = GENL_ID_CTRL;
    m.header.nlmsg_flags = NLM_F_REQUEST;
    m.genl.cmd = CTRL_CMD_GETFAMILY;
    m.genl.version = 1;
    AddAttribute(m, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME));
    if (::send(fd_, &m, m.header.nlmsg_len, 0) < 0) return -1;
    alignas(nlmsghdr) char buffer[8192];
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
    const auto* h = reinterpret_cast<const nlmsghdr*>(buffer);
    if (n <= 0 || !NLMSG_OK(h, n) || h->nlmsg_type == NLMSG_ERROR) return -1;
    int family = -1;
    ForEachAttribute(static_cast<const char*>(NLMSG_DATA(h)) + GENL_HDRLEN,
                     static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN)),
                     [&](int type, const char* payload, int) {
                       if (type == CTRL_ATTR_FAMILY_ID)
                         family = *reinterpret_cast<const uint16_t*>(payload);
                     });
    return family;
  }

  bool SendCommand(uint16_t attribute) {
    Message m{};
    m.header.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
    m.header.nlmsg_type = static_cast<uint16_t>(family_);
    m.header.nlmsg_flags = NLM_F_REQUEST;
    m.genl.cmd = TASKSTATS_CMD_GET;
    m.genl.version = 1;
    AddAttribute(m, attribute, cpus_.c_str(), cpus_.size() + 1);
    return ::send(fd_, &m, m.header.nlmsg_len, 0) >= 0;
  }

  void Receive() {
    alignas(nlmsghdr) char buffer[1 << 16];
    while (!stop_) {
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n < 0) {
        if (errno == ENOBUFS) ++lost_;
        continue;
      }
      int left = static_cast<int>(n);
      for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NetlinkMessageFits(h, left);
           h = NLMSG_NEXT(h, left)) {
        if (h->nlmsg_type != family_) continue;
        ForEachAttribute(static_cast<const char*>(NLMSG_DATA(h)) + GENL_HDRLEN,
                         static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN)),
                         [&](int type, const char* payload, int size) {
                           if (type == TASKSTATS_TYPE_AGGR_PID) Keep(payload, size);
                         });
      }
    }
  }

  // One TASKSTATS_TYPE_AGGR_PID: the task's pid and its struct taskstats.
  void Keep(const char* data, int size) {
    ExitedTask task;
    taskstats stats{};
    bool have_stats = false;
    ForEachAttribute(data, size, [&](int type, const char* payload, int length) {
      if (type == TASKSTATS_TYPE_PID) task.tid = *reinterpret_cast<const uint32_t*>(payload);
      if (type == TASKSTATS_TYPE_STATS) {
        std::memcpy(&stats, payload,
                    std::min<std::size_t>(sizeof(stats), static_cast<std::size_t>(length)));
        have_stats = true;
      }
    });
    if (!have_stats) return;
    task.tgid = static_cast<int>(stats.ac_tgid);
    task.voluntary_switches = static_cast<int64_t>(stats.nvcsw);
    task.involuntary_switches = static_cast<int64_t>(stats.nivcsw);
    std::lock_guard lock(mutex_);
    if (watched_.count(task.tgid)) exits_.push_back(task);
  }

  int fd_ = -1;
  int family_ = -1;
  std::string cpus_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> lost_{0};
  std::thread thread_;
  std::mutex mutex_;
  std::set<int> watched_;
  std::vector<ExitedTask> exits_;
};

}  // namespace capext::bench
