// SwitchableLeadership: a Leadership a test turns on and off
// (docs/architecture.md#two-replicas-one-actor), for the actors that write only while their replica
// acts (the reclaim controller, gate mode's admission loop). Acting means a tenure without end; not
// acting, one that ended long ago. Thread-safety: Set from the test's thread, read from any (an
// atomic).
#pragma once

#include <atomic>

#include "extender/leadership/leadership.h"

namespace capext::testing {

class SwitchableLeadership final : public Leadership {
 public:
  explicit SwitchableLeadership(bool leads) : leads_(leads) {}
  Clock::time_point ActsUntil() const override {
    return leads_ ? Clock::time_point::max() : Clock::time_point::min();
  }
  LeadershipReport Report() const override {
    LeadershipReport r;
    r.mode = "test";
    r.leads = leads_;
    return r;
  }
  void Set(bool leads) { leads_ = leads; }

 private:
  std::atomic<bool> leads_;
};

}  // namespace capext::testing
