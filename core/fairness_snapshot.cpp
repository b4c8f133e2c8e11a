#include "core/fairness_snapshot.h"

namespace capext {

std::shared_ptr<const FairnessSnapshot> FairnessCache::Get(const ClusterState& state) {
  if (snapshot_ == nullptr || state_ != &state || version_ != state.version()) {
    snapshot_ = std::make_shared<const FairnessSnapshot>(state);
    state_ = &state;
    version_ = state.version();
    ++computed_;
  }
  return snapshot_;
}

void FairnessCache::Reset() {
  snapshot_.reset();
  state_ = nullptr;
  version_ = 0;
}

}  // namespace capext
