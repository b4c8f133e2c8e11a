// GET /pending's JSON (extender/verbs/pending_view.cpp): every member for each reclaim state,
// waiting times against the clock, the counts by reason, the reclaim history.
#include "extender/verbs/pending_view.h"

#include <rapidjson/document.h>

#include <string>

#include <catch2/catch.hpp>

namespace capext {
namespace pending_view_test {
namespace {

constexpr int64_t kNow = 1'767'225'600'000;  // 2026-01-01T00:00:00.000Z

PendingPodRecord Record(const std::string& name, VerdictCode code, int64_t created_ms) {
  PendingPodRecord r;
  r.uid = "u-" + name;
  r.ns = "eq2";
  r.name = name;
  r.quota = "eq2/eq2";
  r.priority = 7;
  r.creation_ms = created_ms;
  r.verdict_ms = kNow - 500;
  r.verdict.code = code;
  r.verdict.message = "message of " + name + " \"quoted\"";
  return r;
}

rapidjson::Document Render(const PendingBoard& board, bool ready = true) {
  http::Response r = PendingView(board, ready, kNow);
  REQUIRE(r.status == 200);
  REQUIRE(r.content_type == "application/json");
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

std::string Str(const rapidjson::Value& v) {
  return v.IsString() ? std::string(v.GetString(), v.GetStringLength()) : "<not a string>";
}

TEST_CASE("/pending: an empty board", "[pending]") {
  PendingBoard board;
  auto doc = Render(board, false);
  CHECK_FALSE(doc["ready"].GetBool());
  CHECK(Str(doc["now"]) == "2026-01-01T00:00:00.000Z");
  CHECK(doc["count"].GetUint64() == 0);
  CHECK(doc["byReason"].ObjectEmpty());
  CHECK(doc["pending"].Empty());
  CHECK(doc["recentReclaims"].Empty());
}

TEST_CASE("/pending: each pod with its verdict and reclaim state, oldest first", "[pending]") {
  PendingBoard board;
  board.Set(Record("quota", VerdictCode::kQuotaExceeded, kNow - 90'000));
  PendingPodRecord flight = Record("flight", VerdictCode::kWaitingForReclaim, kNow - 3'600'000);
  flight.verdict.reclaim = ReclaimState::kInFlight;
  flight.verdict.node = "n2";
  flight.verdict.victims = {"eq1/job-b", "eq1/job-c"};
  flight.verdict.reclaim_started_ms = kNow - 2'000;
  board.Set(flight);
  PendingPodRecord backoff = Record("backoff", VerdictCode::kReclaimRefused, 0);
  backoff.verdict.reclaim = ReclaimState::kBackoff;
  backoff.verdict.node = "n1";
  backoff.verdict.victims = {"eq1/a3"};
  backoff.verdict.retry_at_ms = kNow + 4'500;
  board.Set(backoff);
  PendingPodRecord limited = Record("limited", VerdictCode::kReclaimRefused, kNow - 1'000);
  limited.verdict.reclaim = ReclaimState::kRefused;
  limited.verdict.node = "n1";
  limited.verdict.victims = {"eq1/a4"};
  board.Set(limited);

  auto doc = Render(board);
  CHECK(doc["ready"].GetBool());
  CHECK(doc["count"].GetUint64() == 4);
  CHECK(doc["byReason"]["QuotaExceeded"].GetInt() == 1);
  CHECK(doc["byReason"]["ReclaimRefused"].GetInt() == 2);
  CHECK(doc["byReason"]["WaitingForReclaim"].GetInt() == 1);
  const auto& pods = doc["pending"];
  REQUIRE(pods.Size() == 4);
  // Unknown creation time first (0), then oldest first.
  CHECK(Str(pods[0]["name"]) == "backoff");
  CHECK(Str(pods[1]["name"]) == "flight");
  CHECK(Str(pods[2]["name"]) == "quota");
  CHECK(Str(pods[3]["name"]) == "limited");

  const auto& q = pods[2];
  CHECK(Str(q["namespace"]) == "eq2");
  CHECK(Str(q["uid"]) == "u-quota");
  CHECK(Str(q["quota"]) == "eq2/eq2");
  CHECK(q["priority"].GetInt() == 7);
  CHECK(Str(q["reason"]) == "QuotaExceeded");
  CHECK(Str(q["message"]) == "message of quota \"quoted\"");
  CHECK(Str(q["createdAt"]) == "2025-12-31T23:58:30.000Z");
  CHECK(q["waitingSeconds"].GetDouble() == 90.0);
  CHECK(Str(q["verdictAt"]) == "2025-12-31T23:59:59.500Z");
  CHECK(Str(q["reclaim"]["state"]) == "none");
  CHECK_FALSE(q["reclaim"].HasMember("node"));

  const auto& f = pods[1]["reclaim"];
  CHECK(Str(f["state"]) == "in-flight");
  CHECK(Str(f["node"]) == "n2");
  REQUIRE(f["victims"].Size() == 2);
  CHECK(Str(f["victims"][1]) == "eq1/job-c");
  CHECK(Str(f["startedAt"]) == "2025-12-31T23:59:58.000Z");
  CHECK(pods[1]["waitingSeconds"].GetDouble() == 3600.0);

  const auto& b = pods[0];
  CHECK(b["createdAt"].IsNull());
  CHECK(b["waitingSeconds"].IsNull());
  CHECK(Str(b["reclaim"]["state"]) == "backoff");
  CHECK(Str(b["reclaim"]["retryAt"]) == "2026-01-01T00:00:04.500Z");
  CHECK(b["reclaim"]["retryInSeconds"].GetDouble() == 4.5);

  CHECK(Str(pods[3]["reclaim"]["state"]) == "refused");
  CHECK(Str(pods[3]["reclaim"]["victims"][0]) == "eq1/a4");
}

TEST_CASE("/pending: the last reclaims, newest first, within the history's capacity", "[pending]") {
  PendingBoard board(2);
  board.ReclaimStarted({"u1", "eq2/p1", "n1", {"eq1/a1"}, "in-flight", kNow - 9'000, 0});
  board.ReclaimStarted({"u2", "eq2/p2", "n2", {"eq1/a2"}, "in-flight", kNow - 8'000, 0});
  board.ReclaimStarted({"u3", "eq2/p3", "n1", {"eq1/a3", "eq1/a5"}, "in-flight", kNow - 5'000, 0});
  board.ReclaimEnded("u2", "expired", kNow - 1'000);
  board.ReclaimEnded("u3", "bound", kNow - 3'750);
  board.ReclaimEnded("u1", "bound", kNow);  // dropped from the history: nothing to update
  auto doc = Render(board);
  const auto& r = doc["recentReclaims"];
  REQUIRE(r.Size() == 2);
  CHECK(Str(r[0]["pod"]) == "eq2/p3");
  CHECK(Str(r[0]["node"]) == "n1");
  CHECK(r[0]["victims"].Size() == 2);
  CHECK(Str(r[0]["outcome"]) == "bound");
  CHECK(Str(r[0]["startedAt"]) == "2025-12-31T23:59:55.000Z");
  CHECK(Str(r[0]["endedAt"]) == "2025-12-31T23:59:56.250Z");
  CHECK(r[0]["secondsToBind"].GetDouble() == 1.25);
  CHECK(Str(r[1]["pod"]) == "eq2/p2");
  CHECK(Str(r[1]["outcome"]) == "expired");
  CHECK(r[1]["secondsToBind"].IsNull());
}

}  // namespace
}  // namespace pending_view_test
}  // namespace capext

namespace capext {
namespace pending_view_test {
namespace {

// docs/workloads-live.md#the-admission-loop, why a pod waits: gate mode's gated pods among the
// pending ones.
TEST_CASE("/pending: gated pods listed with the pending ones, their gate reason and numbers",
          "[pending]") {
  PendingBoard board;
  board.Set(Record("job-1", VerdictCode::kQuotaExceeded, kNow - 20'000));
  PendingPodRecord gated = Record("b-0", VerdictCode::kGated, kNow - 30'000);
  gated.gate = "QuotaExceeded";
  gated.verdict.message =
      "gang eq2/b: 4 pods need cpu 4: ElasticQuota eq2/eq2 would exceed max: cpu used 4 + "
      "request 4 > max 6";
  http::Response r = PendingView(board, true, kNow, {gated});
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(doc["count"].GetInt() == 2);
  CHECK(doc["byReason"]["Gated"].GetInt() == 1);
  CHECK(doc["byReason"]["QuotaExceeded"].GetInt() == 1);
  const auto& pods = doc["pending"].GetArray();
  REQUIRE(pods.Size() == 2);
  // Oldest first: the gated pod was created before job-1.
  CHECK(Str(pods[0]["name"]) == "b-0");
  CHECK(Str(pods[0]["reason"]) == "Gated");
  CHECK(Str(pods[0]["gate"]) == "QuotaExceeded");
  CHECK(Str(pods[0]["message"]) == gated.verdict.message);
  CHECK(Str(pods[1]["name"]) == "job-1");
  CHECK_FALSE(pods[1].HasMember("gate"));
}

TEST_CASE("/pending: a plan across nodes with its outcome, members, nodes, victims and hold",
          "[pending]") {
  PendingBoard board;
  PendingPodRecord waiting = Record("w-0", VerdictCode::kGated, kNow - 30'000);
  waiting.gate = "ReclaimInFlight";
  PlanView plan;
  plan.outcome = "found";
  plan.preemptor = "gang team-a/train";
  plan.members = {{"team-a/w-0", "n1"}, {"team-a/w-1", "n2"}};
  plan.units = {"single team-b/b2", "single team-b/b1"};
  plan.steps = 12;
  plan.hold_expires_ms = kNow + 120'000;
  waiting.verdict.plan = plan;
  board.Set(Record("job-1", VerdictCode::kQuotaExceeded, kNow - 20'000));
  http::Response r = PendingView(board, true, kNow, {waiting});
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  const auto& pods = doc["pending"].GetArray();
  REQUIRE(pods.Size() == 2);
  REQUIRE(pods[0].HasMember("plan"));
  const auto& p = pods[0]["plan"];
  CHECK(Str(p["outcome"]) == "found");
  CHECK(Str(p["for"]) == "gang team-a/train");
  REQUIRE(p["members"].Size() == 2);
  CHECK(Str(p["members"][1]["pod"]) == "team-a/w-1");
  CHECK(Str(p["members"][1]["node"]) == "n2");
  REQUIRE(p["victims"].Size() == 2);
  CHECK(Str(p["victims"][0]) == "single team-b/b2");
  CHECK(p["steps"].GetInt() == 12);
  CHECK(Str(p["holdExpiresAt"]) == TimestampText(kNow + 120'000));
  CHECK_FALSE(pods[1].HasMember("plan"));
}

}  // namespace
}  // namespace pending_view_test
}  // namespace capext
