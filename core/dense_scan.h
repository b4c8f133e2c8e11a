// The body of DenseNodes::ScanBest, a template so that the caller's fit and score functions
// inline into the scan (a scan calls them for hundreds of nodes per decision). Included by
// dense_nodes.h only.
#pragma once

#include <algorithm>
#include <bit>

#include "core/best_node.h"

namespace capext {
namespace dense_scan_detail {

// Bit i set when node n0 + i has a free pod slot, is not masked out and has free >= amount in
// each of the request's kDims columns; no branches, so the compiler may vectorise. kDims == 0:
// `count` columns, known at run time.
template <std::size_t kDims>
uint64_t FitBits(int n0, int n1, const int64_t* const* columns, const int64_t* amounts,
                 std::size_t count, const int64_t* slots, const uint8_t* mask) {
  const std::size_t dims = kDims > 0 ? kDims : count;
  uint64_t bits = 0;
  for (int n = n0; n < n1; ++n) {
    bool ok = slots[n] >= 1;
    if (mask != nullptr) ok &= mask[n] != 0;
    for (std::size_t k = 0; k < dims; ++k)
      ok &= amounts[k] <= columns[k][n];
    bits |= static_cast<uint64_t>(ok) << (n - n0);
  }
  return bits;
}

}  // namespace dense_scan_detail

template <typename Exact, typename ScoreFn>
int DenseNodes::ScanBest(const DenseRequest& r, const uint8_t* mask, int start, std::size_t limit,
                         std::vector<int>* out, Exact&& exact, ScoreFn&& score, int* best) const {
  const int total = size();
  *best = -1;
  if (total == 0 || out->size() >= limit) return 0;
  // The request's columns of free_ and amounts.
  thread_local std::vector<const int64_t*> columns;
  thread_local std::vector<int64_t> amounts;
  columns.clear();
  amounts.clear();
  for (const auto& [d, amount] : r.dims) {
    columns.push_back(&free_[Cell(0, d)]);
    amounts.push_back(amount);
  }
  const std::size_t count = columns.size();
  const int64_t* slots = pod_slots_.data();
  auto fit_bits = [&](int n0, int n1) {
    switch (count) {
      case 0:
        return dense_scan_detail::FitBits<0>(n0, n1, columns.data(), amounts.data(), 0, slots,
                                             mask);
      case 1:
        return dense_scan_detail::FitBits<1>(n0, n1, columns.data(), amounts.data(), 1, slots,
                                             mask);
      case 2:
        return dense_scan_detail::FitBits<2>(n0, n1, columns.data(), amounts.data(), 2, slots,
                                             mask);
      case 3:
        return dense_scan_detail::FitBits<3>(n0, n1, columns.data(), amounts.data(), 3, slots,
                                             mask);
      default:
        return dense_scan_detail::FitBits<0>(n0, n1, columns.data(), amounts.data(), count, slots,
                                             mask);
    }
  };
  BestNode<int> chosen;  // the one routine every path picks a node with
  constexpr int kBlock = 64;
  int examined = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const int begin = pass == 0 ? start : 0;
    const int end = pass == 0 ? total : start;
    for (int n0 = begin; n0 < end; n0 += kBlock) {
      const int n1 = std::min(end, n0 + kBlock);
      uint64_t bits = fit_bits(n0, n1);
      const bool nominated =
          nominated_nodes_ > 0 && std::any_of(nominations_.begin() + n0, nominations_.begin() + n1,
                                              [](int32_t c) { return c != 0; });
      if (!r.complete || nominated) {
        // What the columns do not show (nominations, untracked resources): decided exactly.
        for (int n = n0; n < n1; ++n) {
          if ((r.complete && nominations_[n] == 0) || (mask != nullptr && mask[n] == 0)) continue;
          const uint64_t bit = uint64_t{1} << (n - n0);
          bits = exact(n) ? bits | bit : bits & ~bit;
        }
      }
      // The feasible nodes in scan order; only the first `limit` count, and the scan stops at
      // the last of them.
      const std::size_t room = limit - out->size();
      int found[kBlock];
      std::size_t count_found = 0;
      for (; bits != 0 && count_found < room; bits &= bits - 1)
        found[count_found++] = n0 + std::countr_zero(bits);
      for (std::size_t i = 0; i < count_found; ++i)
        chosen.Offer(score(found[i]), found[i]);
      out->insert(out->end(), found, found + count_found);
      if (count_found == room) {
        examined += found[count_found - 1] - n0 + 1;
        break;
      }
      examined += n1 - n0;
    }
    if (out->size() >= limit) break;
  }
  *best = chosen.id();
  return out->size() >= limit ? examined : total;
}

}  // namespace capext
