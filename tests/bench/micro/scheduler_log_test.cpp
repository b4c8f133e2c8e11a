// SchedulerLogReader counts what kube-scheduler 1.26 logs at --v=2 about a run: distinct pods
// bound, errors, and among them the timeouts of extender calls by verb; a line still being
// written is read once it is whole. The lines are kube-scheduler's own, copied from its log.
#include "bench/micro/scheduler_log.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace capext::bench {
namespace scheduler_log_test {
namespace {

const std::string kBound1 =
    R"log(I1126 19:41:41.290245   16301 schedule_one.go:252] "Successfully bound pod to node" pod="tp-1/p-00001" node="worker-pool-a-00042" evaluatedNodes=100 feasibleNodes=100)log";
const std::string kBound2 =
    R"log(I1126 19:41:41.290901   16301 schedule_one.go:252] "Successfully bound pod to node" pod="tp-2/p-00002" node="worker-pool-a-00007" evaluatedNodes=100 feasibleNodes=100)log";
const std::string kBindTimeout =
    R"log(E1126 19:42:04.146499   16672 schedule_one.go:884] "Error scheduling pod; retrying" err="Post \"http://127.0.0.1:41519/bind\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)" pod="tp-3/p-00003")log";
const std::string kFilterTimeout =
    R"log(E1126 19:42:04.146600   16672 schedule_one.go:884] "Error scheduling pod; retrying" err="Post \"http://127.0.0.1:41519/filter\": net/http: request canceled (Client.Timeout exceeded while awaiting headers)" pod="tp-4/p-00004")log";
const std::string kTooMany =
    R"log(E1126 19:42:04.147496   16672 schedule_one.go:884] "Error scheduling pod; retrying" err="binding tp-8/p-00418 to worker-pool-a-00093: 429 Too many requests, please try again later." pod="tp-8/p-00418")log";
const std::string kNoFit =
    R"log(I1126 19:42:05.000000   16672 schedule_one.go:842] "Unable to schedule pod; no fit; waiting" pod="tp-5/p-00005" err="0/100 nodes are available: 100 Insufficient cpu.")log";

TEST_CASE("kube-scheduler's log: bound pods, errors, extender timeouts by verb", "[schedlog]") {
  SchedulerLogCounts counts;
  for (const std::string& line :
       {kBound1, kBound2, kBound1, kBindTimeout, kFilterTimeout, kTooMany, kNoFit}) {
    CountSchedulerLogLine(line, &counts);
  }
  CHECK(counts.bound == std::set<std::string>{"tp-1/p-00001", "tp-2/p-00002"});  // distinct
  CHECK(counts.errors == 3);
  CHECK(counts.timeouts == 2);
  CHECK(counts.timeouts_by_verb == std::map<std::string, int>{{"bind", 1}, {"filter", 1}});
  CHECK(counts.unschedulable == 1);
  CHECK(counts.first_errors.size() == 3);
  CHECK(KlogValue(kBindTimeout, "err") ==
        "Post \"http://127.0.0.1:41519/bind\": context deadline exceeded (Client.Timeout exceeded "
        "while awaiting headers)");
  CHECK(KlogValue(kBound1, "pod") == "tp-1/p-00001");
  CHECK(KlogValue(kBound1, "absent").empty());
}

TEST_CASE("kube-scheduler's log followed as it grows: half a line waits for the rest",
          "[schedlog]") {
  testing::TempDir dir;
  const std::string path = dir.Write("kube-scheduler.log", "");
  SchedulerLogReader reader(path);
  CHECK(reader.ReadNew().bound.empty());
  {
    std::ofstream out(path, std::ios::app);
    out << kBound1 << "\n" << kBound2.substr(0, 60);
  }
  CHECK(reader.ReadNew().bound.size() == 1);
  {
    std::ofstream out(path, std::ios::app);
    out << kBound2.substr(60) << "\n" << kBindTimeout << "\n";
  }
  const SchedulerLogCounts& counts = reader.ReadNew();
  CHECK(counts.bound.size() == 2);
  CHECK(counts.timeouts == 1);
  CHECK(reader.ReadNew().bound.size() == 2);  // nothing new: nothing counted twice
  SchedulerLogReader missing(dir.path() + "/absent.log");
  CHECK(missing.ReadNew().bound.empty());
}

}  // namespace
}  // namespace scheduler_log_test
}  // namespace capext::bench
