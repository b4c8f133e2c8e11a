// NameIndex: the flat name -> id index behind ClusterState's node records (inserts, lookups,
// erases with backward shifting, growth).
#include "core/name_index.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace capext {
namespace name_index_test {
namespace {

TEST_CASE("NameIndex finds what was inserted, and nothing after it is erased", "[name_index]") {
  // Many erases and re-inserts: the packed names are compacted along the way.
  std::vector<std::string> names;  // by id
  NameIndex index;
  CHECK(index.Find("absent") == -1);

  std::map<std::string, uint32_t> expected;
  std::mt19937 random(7);
  for (int step = 0; step < 20000; ++step) {
    const std::string name =
        "node-" + std::to_string(random() % 3000) + std::string(random() % 40, 'x');
    auto it = expected.find(name);
    if (it == expected.end()) {
      const auto id = static_cast<uint32_t>(names.size());
      names.push_back(name);
      index.Insert(names.back(), id);
      expected.emplace(name, id);
    } else if (random() % 2 == 0) {
      index.Erase(name);
      expected.erase(it);
    }
    if (step % 997 == 0) {
      for (std::size_t id = 0; id < names.size(); ++id) {
        auto e = expected.find(names[id]);
        const int64_t want = e == expected.end() ? -1 : static_cast<int64_t>(e->second);
        CHECK(index.Find(names[id]) == want);
      }
      CHECK(index.size() == expected.size());
    }
  }
  for (const auto& [name, id] : expected)
    CHECK(index.Find(name) == id);
  CHECK(index.Find("node-x") == -1);
  index.Erase("node-x");  // absent: nothing happens
  CHECK(index.size() == expected.size());
}

TEST_CASE("HashName depends on every byte and the length", "[name_index]") {
  CHECK(HashName("worker-pool-a-00001") != HashName("worker-pool-a-00002"));
  CHECK(HashName("a") != HashName(std::string_view("a\0", 2)));
  CHECK(HashName("") != HashName(std::string_view("\0", 1)));
  CHECK(HashName("abcdefgh") != HashName("abcdefgi"));
}

}  // namespace
}  // namespace name_index_test
}  // namespace capext
