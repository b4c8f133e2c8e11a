// What the real-cluster tests share to wait on a cluster and to show what happened: polling at a
// pace a real API server does not feel, and the end of a log for a failure's message.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace capext::test {

// Polls `condition` every `interval` until it holds or `timeout` has passed; returns its last
// value. The default interval asks a real API server five times a second, not in a spin.
inline bool Eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds interval = std::chrono::milliseconds(200)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(interval);
  }
  return condition();
}

// The last `lines` lines of `text`.
inline std::string Tail(const std::string& text, int lines = 40) {
  std::size_t pos = text.size();
  for (int i = 0; i <= lines && pos != std::string::npos && pos > 0; ++i)
    pos = text.rfind('\n', pos - 1);
  return pos == std::string::npos ? text : text.substr(pos + 1);
}

}  // namespace capext::test
