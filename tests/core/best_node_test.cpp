// BestNode: the highest score wins, then the first name
// (docs/capacity-semantics.md#34-then-the-nodes), for names and for indexes in name order alike,
// whatever the order nodes are offered in.
#include "core/best_node.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

namespace capext {
namespace best_node_test {
namespace {

TEST_CASE("BestNode: the docs' example, ties to the first name, no node", "[best_node]") {
  BestNode<std::string> names;
  names.Offer(9, "n3");
  names.Offer(7, "n1");
  names.Offer(9, "n2");
  CHECK(names.found());
  CHECK(names.id() == "n2");
  CHECK(names.score() == 9);

  BestNode<int> none;
  CHECK(!none.found());
  CHECK(none.id() == -1);
  none.Offer(-1, 0);  // a negative score never wins
  CHECK(!none.found());
  none.Offer(0, 4);
  CHECK(none.id() == 4);
}

TEST_CASE("BestNode over names and over indexes picks the naive maximum", "[best_node]") {
  std::mt19937_64 rng(19);
  for (int round = 0; round < 200; ++round) {
    const int nodes = 1 + static_cast<int>(rng() % 40);
    std::vector<int> scores(nodes);
    for (int& s : scores)
      s = static_cast<int>(rng() % 6);  // few values: many ties
    std::vector<int> order(nodes);
    for (int i = 0; i < nodes; ++i)
      order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    BestNode<int> by_index;
    BestNode<std::string> by_name;
    for (int n : order) {
      by_index.Offer(scores[n], n);
      by_name.Offer(scores[n], fmt::format("node-{:03}", n));
    }
    // Naive: the highest score; among those the smallest index.
    int expected = 0;
    for (int n = 1; n < nodes; ++n) {
      if (scores[n] > scores[expected]) expected = n;
    }
    INFO("round " << round);
    CHECK(by_index.id() == expected);
    CHECK(by_name.id() == fmt::format("node-{:03}", expected));
    CHECK(by_index.score() == scores[expected]);
  }
}

}  // namespace
}  // namespace best_node_test
}  // namespace capext
