// Tests of TokenBucket (extender/reclaim/token_bucket.h).
#include "extender/reclaim/token_bucket.h"

#include <catch2/catch.hpp>

namespace capext {
namespace token_bucket_test {
namespace {

TEST_CASE("token bucket: a burst, then the refill rate", "[events]") {
  TokenBucket bucket(2, 3);  // 2 per second, 3 at once
  const int64_t t0 = 1'000'000;
  CHECK(bucket.TryTake(t0));
  CHECK(bucket.TryTake(t0));
  CHECK(bucket.TryTake(t0));
  CHECK_FALSE(bucket.TryTake(t0));
  CHECK_FALSE(bucket.TryTake(t0 + 499));
  CHECK(bucket.TryTake(t0 + 500));
  CHECK_FALSE(bucket.TryTake(t0 + 500));
  // Idle for long: never more than the burst.
  CHECK(bucket.Full(t0 + 60'000));
  CHECK(bucket.TryTake(t0 + 60'000));
  CHECK(bucket.TryTake(t0 + 60'000));
  CHECK(bucket.TryTake(t0 + 60'000));
  CHECK_FALSE(bucket.TryTake(t0 + 60'000));
  CHECK_FALSE(bucket.Full(t0 + 60'000));
  // A token given back can be taken again; time going backwards refills nothing.
  bucket.GiveBack();
  CHECK(bucket.TryTake(t0 + 59'000));
  CHECK_FALSE(bucket.TryTake(t0 + 59'000));
}

}  // namespace
}  // namespace token_bucket_test
}  // namespace capext
