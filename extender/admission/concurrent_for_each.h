// ForEachConcurrently: runs `work(i)` for every i in [0, count) on up to `width` threads at once,
// taking the indices in increasing order (work starts in order; it may finish in any order), and
// returns when every call has returned. With width <= 1 or count <= 1 everything runs on the
// calling thread, in order, and no thread is created. The admission loop sends its gate removals
// this way (docs/workloads-live.md#the-admission-loop): blocking API calls, a few at once.
// Thread-safety: `work` is called concurrently from up to `width` threads; it must not throw.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "extender/http/thread_name.h"

namespace capext {

template <typename Work>
void ForEachConcurrently(std::size_t count, std::size_t width, Work&& work) {
  if (width <= 1 || count <= 1) {
    for (std::size_t i = 0; i < count; ++i)
      work(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto drain = [&] {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1))
      work(i);
  };
  std::vector<std::jthread> helpers;
  const std::size_t threads = std::min(width, count);
  helpers.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t)
    helpers.emplace_back([&] {
      http::NameThisThread("ce-lift");
      drain();
    });
  drain();  // the calling thread is one of the `width`
}  // the helpers join here

}  // namespace capext
