// Labels (core/label_selector.h): the packed map behaves as std::map<std::string, std::string>
// does for every operation the code uses; LabelSelector matching on top of it.
#include "core/label_selector.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace capext {
namespace label_selector_test {
namespace {

std::vector<std::pair<std::string, std::string>> Entries(const Labels& labels) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : labels)
    out.emplace_back(std::string(key), std::string(value));
  return out;
}

TEST_CASE("Labels behaves as a sorted std::map", "[labels]") {
  std::mt19937 random(11);
  const std::vector<std::string> keys = {
      "app", "kubernetes.io/hostname",   "topology.kubernetes.io/zone", "", "a",
      "B",   std::string("nul\0key", 7), std::string(300, 'k')};
  const std::vector<std::string> values = {"", "v", "batch-job-000001", std::string(70, 'x'),
                                           std::string("\0", 1)};
  Labels labels;
  std::map<std::string, std::string> expected;
  for (int step = 0; step < 2000; ++step) {
    const std::string& key = keys[random() % keys.size()];
    const std::string& value = values[random() % values.size()];
    switch (random() % 4) {
      case 0:
        labels[key] = value;
        expected[key] = value;
        break;
      case 1:
        CHECK(labels.emplace(key, value) == expected.emplace(key, value).second);
        break;
      case 2:
        CHECK(labels.erase(key) == expected.erase(key));
        break;
      default:
        CHECK(labels.insert_or_assign(key, value) == expected.insert_or_assign(key, value).second);
    }
    REQUIRE(Entries(labels) ==
            std::vector<std::pair<std::string, std::string>>(expected.begin(), expected.end()));
    CHECK(labels.size() == expected.size());
    CHECK(labels.empty() == expected.empty());
    for (const auto& k : keys) {
      CHECK(labels.count(k) == expected.count(k));
      auto it = labels.find(k);
      if (expected.count(k)) {
        REQUIRE(it != labels.end());
        CHECK(it->first == k);
        CHECK(it->second == expected[k]);
        CHECK(labels.at(k) == expected[k]);
      } else {
        CHECK(it == labels.end());
        CHECK_THROWS_AS(labels.at(k), std::out_of_range);
      }
    }
  }
}

TEST_CASE("Labels: construction, equality, clear", "[labels]") {
  const Labels a{{"zone", "a"}, {"app", "web"}};
  Labels b;
  b["app"] = "web";
  b["zone"] = "b";
  CHECK(a != b);
  b["zone"] = std::string("a");
  CHECK(a == b);
  CHECK(std::string_view(b["app"]) == "web");
  Labels c = a;
  c.clear();
  CHECK(c.empty());
  CHECK(c == Labels{});
  CHECK(a.size() == 2);
}

TEST_CASE("LabelSelector matches labels and expressions", "[labels]") {
  const Labels labels{{"app", "db"}, {"tier", "backend"}};
  LabelSelector s;
  s.match_labels = Labels{{"app", "db"}};
  CHECK(s.Matches(labels));
  s.match_expressions.push_back({"tier", "In", {"frontend", "backend"}});
  CHECK(s.Matches(labels));
  s.match_expressions.push_back({"canary", "DoesNotExist", {}});
  CHECK(s.Matches(labels));
  s.match_expressions.push_back({"tier", "NotIn", {"backend"}});
  CHECK_FALSE(s.Matches(labels));
}

}  // namespace
}  // namespace label_selector_test
}  // namespace capext
