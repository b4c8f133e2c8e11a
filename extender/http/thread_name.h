// NameThisThread: gives the calling thread the name `top -H`, `ps -L`, perf and gdb show, so an
// operator (or a profile) can tell the extender's threads apart: ce-http-N, ce-api, ce-bind,
// ce-reclaim, ce-events, ce-live, ce-lease, ce-admission, ce-lift, ce-timers.
// In extender/http/ because the transport is the lowest layer of extender/: every other part may
// include it, and the transport itself names its IO threads.
// Linux keeps 15 characters; longer names are cut there. Thread-safety: names only the caller.
#pragma once

#include <pthread.h>

#include <string>

namespace capext::http {

inline void NameThisThread(const std::string& name) {
  const std::string kept = name.substr(0, 15);
  pthread_setname_np(pthread_self(), kept.c_str());
}

}  // namespace capext::http
