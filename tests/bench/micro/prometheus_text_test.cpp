// MetricSamples reads the text format kube-apiserver and etcd serve (labels with escapes,
// histograms, comments), subtracts two scrapes, sums and groups by labels; HistogramQuantile
// interpolates inside buckets as Prometheus's histogram_quantile() does.
#include "bench/micro/prometheus_text.h"

#include <catch2/catch.hpp>
#include <cmath>

namespace capext::bench {
namespace prometheus_text_test {
namespace {

constexpr const char* kBefore = R"(# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",group="",resource="pods",subresource="binding",verb="POST",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",group="",resource="pods",subresource="",verb="LIST",version="v1"} 4
etcd_mvcc_put_total 100
req_seconds_bucket{verb="bind",le="0.1"} 1
req_seconds_bucket{verb="bind",le="1"} 2
req_seconds_bucket{verb="bind",le="+Inf"} 2
req_seconds_bucket{verb="filter",le="0.1"} 7
req_seconds_bucket{verb="filter",le="1"} 7
req_seconds_bucket{verb="filter",le="+Inf"} 7
)";

constexpr const char* kAfter =
    R"(apiserver_request_total{code="201",component="apiserver",group="",resource="pods",subresource="binding",verb="POST",version="v1"} 3010
apiserver_request_total{code="200",component="apiserver",group="",resource="pods",subresource="",verb="LIST",version="v1"} 4
apiserver_request_total{code="201",component="apiserver",group="events.k8s.io",resource="events",subresource="",verb="POST",version="v1"} 3000
etcd_mvcc_put_total 6100 1700000000000
weird{msg="a \"quoted\", comma\\ and \n newline"} 1.5e3
req_seconds_bucket{verb="bind",le="0.1"} 51
req_seconds_bucket{verb="bind",le="1"} 92
req_seconds_bucket{verb="bind",le="+Inf"} 102
req_seconds_bucket{verb="filter",le="0.1"} 7
req_seconds_bucket{verb="filter",le="1"} 7
req_seconds_bucket{verb="filter",le="+Inf"} 7
not a sample line
)";

TEST_CASE("metric samples: parse, subtract, sum and group", "[prometheus]") {
  const MetricSamples before = MetricSamples::Parse(kBefore);
  const MetricSamples after = MetricSamples::Parse(kAfter);
  const MetricSamples delta = after.Minus(before);
  CHECK(delta.Sum("etcd_mvcc_put_total") == 6000);  // a timestamp after the value is ignored
  CHECK(delta.Sum("apiserver_request_total") == 6000);
  CHECK(delta.Sum("apiserver_request_total", [](const MetricLabels& l) {
    return l.at("verb") == "POST" && l.at("subresource") == "binding";
  }) == 3000);
  const auto by_group =
      delta.SumBy("apiserver_request_total", [](const MetricLabels& l) { return l.at("group"); });
  REQUIRE(by_group.size() == 2);
  CHECK(by_group.at("") == 3000);  // the LIST grew by 0
  CHECK(by_group.at("events.k8s.io") == 3000);
  CHECK(after.SumBy("weird", [](const MetricLabels& l) { return l.at("msg"); })
            .at("a \"quoted\", comma\\ and \n newline") == 1500);
  CHECK(MetricSamples::Parse("").empty());
}

TEST_CASE("histogram quantiles interpolate inside the bucket, as histogram_quantile()",
          "[prometheus]") {
  const MetricSamples delta = MetricSamples::Parse(kAfter).Minus(MetricSamples::Parse(kBefore));
  const auto bind =
      delta.Buckets("req_seconds", [](const MetricLabels& l) { return l.at("verb") == "bind"; });
  REQUIRE(bind.size() == 3);
  CHECK(bind.begin()->second == 50);  // 51 - 1
  CHECK(bind.rbegin()->second == 100);
  // 100 observations: 50 <= 0.1 s, 40 in (0.1, 1], 10 above 1 s.
  CHECK(HistogramQuantile(bind, 0.25) == Approx(0.05));  // the first bucket starts at 0
  CHECK(HistogramQuantile(bind, 0.5) == Approx(0.1));
  CHECK(HistogramQuantile(bind, 0.7) == Approx(0.1 + 0.9 * 20 / 40));
  CHECK(HistogramQuantile(bind, 0.99) == Approx(1.0));  // in +Inf: the largest finite bound
  const auto none =
      delta.Buckets("req_seconds", [](const MetricLabels& l) { return l.at("verb") == "filter"; });
  CHECK(std::isnan(HistogramQuantile(none, 0.5)));  // 7 before and after: nothing observed
  CHECK(std::isnan(HistogramQuantile({}, 0.5)));
}

}  // namespace
}  // namespace prometheus_text_test
}  // namespace capext::bench
