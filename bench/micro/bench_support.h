// Shared pieces of the extender micro-benchmarks (filter_bench, preempt_bench, bind_bench, ...),
// one include for all of them: the measuring harness (bench_harness.h: timing, flags, statistics,
// memory, the JSON report), synthetic clusters and real-sized request bodies (bench_cluster.h),
// and the loopback HTTP server, client and load (bench_http_load.h). Each benchmark is one
// executable. Nothing here is used by the product.
#pragma once

#include "bench/micro/bench_cluster.h"
#include "bench/micro/bench_harness.h"
#include "bench/micro/bench_http_load.h"
