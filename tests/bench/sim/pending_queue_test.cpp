// The simulator's queue: activeQ order across buckets, parking, and the wake rules.
#include "bench/sim/pending_queue.h"

#include <catch2/catch.hpp>

namespace capext {
namespace pending_queue_test {
namespace {

std::vector<uint32_t> Drain(PendingQueue* q) {
  std::vector<uint32_t> order;
  int b = 0;
  while (q->Top(&b)) {
    order.push_back(q->First(b));
    q->PopFirst(b);
  }
  return order;
}

TEST_CASE("buckets are served in priority, creation, id order", "[sim][queue]") {
  PendingQueue q;
  const int low = q.AddBucket(0, 0);
  const int high = q.AddBucket(0, 10);
  const int other = q.AddBucket(1, 0);
  q.Add(low, 100, 1);
  q.Add(low, 300, 4);
  q.Add(other, 200, 3);
  q.Add(other, 100, 2);
  q.Add(high, 500, 5);
  CHECK(Drain(&q) == std::vector<uint32_t>{5, 1, 2, 3, 4});
}

TEST_CASE("a parked bucket keeps its pods until woken", "[sim][queue]") {
  PendingQueue q;
  const int a = q.AddBucket(0, 0);
  const int b = q.AddBucket(0, 0);
  q.Add(a, 1, 1);
  q.Add(a, 2, 2);
  q.Add(b, 3, 3);
  int top = -1;
  REQUIRE(q.Top(&top));
  CHECK(top == a);
  q.SetWakeList(a, true, {});
  q.ParkForNodes(a);
  CHECK(q.HasParked());
  q.Add(a, 4, 4);  // identical to the one that failed: stays parked
  REQUIRE(q.Top(&top));
  CHECK(top == b);
  q.PopFirst(b);
  CHECK_FALSE(q.Top(&top));

  // A freeing where the bucket does not fit leaves it parked; one where it fits wakes it and
  // records the node.
  q.OnNodeFreed(7, [](int) { return false; });
  CHECK_FALSE(q.Top(&top));
  q.OnNodeFreed(9, [&](int bucket) { return bucket == a; });
  REQUIRE(q.Top(&top));
  CHECK(top == a);
  CHECK(q.bucket(a).wake_nodes == std::vector<int>{9});
  CHECK(Drain(&q) == std::vector<uint32_t>{1, 2, 4});
  CHECK_FALSE(q.HasParked());
  CHECK_FALSE(q.bucket(a).wake_list_valid);  // an emptied bucket forgets its list
}

TEST_CASE("quota-parked buckets wake when usage falls to their threshold", "[sim][queue]") {
  PendingQueue q;
  const int max_bound = q.AddBucket(0, 0);
  const int agg_bound = q.AddBucket(1, 0);
  q.Add(max_bound, 1, 1);
  q.Add(agg_bound, 2, 2);
  q.ParkForQuota(max_bound, true, "cpu", 4000);   // tenant 0: used cpu must fall to 4000
  q.ParkForQuota(agg_bound, false, "cpu", 9000);  // cluster-wide: total cpu must fall to 9000
  int top = -1;
  CHECK_FALSE(q.Top(&top));
  auto used = [](int64_t v) { return [v](const std::string&) { return v; }; };
  q.OnUsageDropped(0, used(4500), used(9500));
  CHECK_FALSE(q.Top(&top));
  q.OnUsageDropped(1, used(1000), used(9000));  // tenant 1's drop: only the aggregate matters
  REQUIRE(q.Top(&top));
  CHECK(top == agg_bound);
  q.PopFirst(agg_bound);
  CHECK_FALSE(q.Top(&top));
  q.OnUsageDropped(0, used(4000), used(20000));
  REQUIRE(q.Top(&top));
  CHECK(top == max_bound);
}

TEST_CASE("a nomination release wakes every quota-parked bucket", "[sim][queue]") {
  PendingQueue q;
  const int a = q.AddBucket(0, 0);
  const int b = q.AddBucket(1, 5);
  q.Add(a, 1, 1);
  q.Add(b, 1, 2);
  q.ParkForQuota(a, true, "cpu", 0);
  q.ParkForQuota(b, false, "memory", 0);
  q.WakeAllQuotaParked();
  CHECK(Drain(&q) == std::vector<uint32_t>{2, 1});
}

TEST_CASE("waking a quota-parked bucket directly removes its waiter", "[sim][queue]") {
  PendingQueue q;
  const int a = q.AddBucket(0, 0);
  q.Add(a, 1, 1);
  q.Add(a, 2, 2);
  q.ParkForQuota(a, true, "cpu", 100);
  q.Wake(a);
  int top = -1;
  REQUIRE(q.Top(&top));
  q.PopFirst(a);
  q.ParkForNodes(a);
  // The old waiter must not wake the bucket now parked for nodes.
  q.OnUsageDropped(
      0, [](const std::string&) { return 0; }, [](const std::string&) { return 0; });
  CHECK_FALSE(q.Top(&top));
  CHECK(q.ParkedInOrder() == std::vector<int>{a});
}

}  // namespace
}  // namespace pending_queue_test
}  // namespace capext
