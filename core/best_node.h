// BestNode: which of the nodes offered wins, written once for every path that picks a node
// itself (PickNode, the placement searches, the simulator's re-scan of a wake list): the highest
// score, then the first in name order (docs/capacity-semantics.md#34-then-the-nodes: where
// kube-scheduler picks at random among equals, a name keeps every path deterministic and equal
// to the others). A negative score never wins.
//
// `Id` orders nodes by name: a node's name, or its index in a name-ordered table (NodeTable,
// DenseNodes). For an index the choice is one comparison of a packed key, (score + 1) << 32 |
// ~index, so that a scan over hundreds of nodes per decision does not branch on ties.
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <type_traits>

namespace capext {

template <typename Id>
class BestNode {
 public:
  // `id` with `score`; it wins over the node held if its score is higher, or equal with an id
  // before it.
  void Offer(int score, const Id& id) {
    if constexpr (std::is_integral_v<Id>) {
      const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(score) + 1) << 32) |
                           static_cast<uint32_t>(~static_cast<uint32_t>(id));
      if (score >= 0 && key > key_) {
        key_ = key;
        id_ = id;
        score_ = score;
      }
    } else {
      if (score >= 0 && (score_ < 0 || score > score_ || (score == score_ && id < id_))) {
        id_ = id;
        score_ = score;
      }
    }
  }

  bool found() const { return score_ >= 0; }
  // The winner; Id{} (for an index: -1) while none was offered.
  const Id& id() const { return id_; }
  int score() const { return score_; }

 private:
  Id id_ = NoId();
  int score_ = -1;
  uint64_t key_ = 0;  // indexes only; 0 = none

  static Id NoId() {
    if constexpr (std::is_integral_v<Id>) {
      return Id(-1);
    } else {
      return Id{};
    }
  }
};

}  // namespace capext
