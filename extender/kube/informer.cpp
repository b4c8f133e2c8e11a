#include "extender/kube/informer.h"

#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <utility>

#include "config/json_pull_reader.h"
#include "extender/kube/api_envelopes.h"
#include "extender/kube/kube_log.h"
#include "extender/kube/protobuf_envelopes.h"
#include "extender/kube/url_component.h"

namespace capext::kube {
namespace {

using Clock = std::chrono::steady_clock;

// A watch that ends this fast without a single line is treated like an error (a wait), so a
// server that keeps closing at once is not hammered.
constexpr auto kMinimalUsefulWatch = std::chrono::seconds(1);
// A continue token may expire mid-list (410); the list restarts from scratch this often at most.
constexpr int kMaxListRestarts = 3;

std::string DescribeFailure(const RestResponse& response) {
  if (!response.error.empty()) return response.error;
  ApiStatus status;
  if (ParseApiStatus(response.body, &status)) {
    return "HTTP " + std::to_string(response.status) + " " + status.reason + ": " + status.message;
  }
  return "HTTP " + std::to_string(response.status) + ": " + response.body.substr(0, 200);
}

// The server's Retry-After: the header, else the Status body's details.retryAfterSeconds.
int RetryAfterOf(int header_seconds, std::string_view body) {
  if (header_seconds >= 0) return header_seconds;
  ApiStatus status;
  if (ParseApiStatus(body, &status) && status.retry_after_seconds > 0)
    return status.retry_after_seconds;
  return -1;
}

std::string Milliseconds(std::chrono::steady_clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

}  // namespace

class Informer::Timer {
 public:
  explicit Timer(boost::asio::io_context& io) : timer(io) {}
  boost::asio::steady_timer timer;
};

Informer::Informer(RestClient* client, InformerOptions options, InformerSink* sink)
    : client_(client),
      options_(std::move(options)),
      sink_(sink),
      random_(options_.seed != 0 ? options_.seed : std::random_device{}()),
      retry_(RetryOptions{options_.backoff_initial, options_.backoff_max, options_.probe_interval},
             &random_),
      timer_(std::make_unique<Timer>(client->io_context())),
      sync_(Clock::now(), options_.sync_limits) {}

Informer::~Informer() {
  Stop();
}

void Informer::Start() {
  std::lock_guard<std::mutex> lock(lifecycle_mutex_);
  started_ = true;
  client_->RunOnClientThread([this] { Next(); });
}

void Informer::Stop() {
  std::lock_guard<std::mutex> lock(lifecycle_mutex_);
  if (!started_ || stop_done_) return;
  stop_done_ = true;
  auto acknowledged = std::make_shared<std::promise<void>>();
  std::future<void> done = acknowledged->get_future();
  client_->RunOnClientThread([this, acknowledged] {
    stopping_ = true;
    stopped_.emplace(std::move(*acknowledged));
    timer_->timer.cancel();
    if (call_) call_->Cancel();
    Stopping();
  });
  done.wait();
}

bool Informer::Stopping() {
  if (!stopping_) return false;
  if (outstanding_ == 0 && stopped_) {
    // Stop() returns, and the informer may be destroyed, as soon as the value is set: nothing
    // of *this is touched after that.
    std::promise<void> acknowledged = std::move(*stopped_);
    stopped_.reset();
    acknowledged.set_value();
  }
  return true;
}

InformerStats Informer::Stats() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  return stats_;
}

SyncState Informer::Sync(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  return sync_.State(now);
}

template <typename F>
void Informer::UpdateSync(F&& f) {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  f(sync_);
}

std::chrono::seconds Informer::NextWatchTimeout() {
  const int64_t idle_ms = options_.watch_idle_timeout.count();
  const int64_t low = std::max<int64_t>(1, idle_ms * 2 / 3 / 1000);
  const int64_t high = std::max<int64_t>(low, idle_ms * 8 / 9 / 1000);
  std::uniform_int_distribution<int64_t> pick(low, high);
  return std::chrono::seconds(std::max<int64_t>(1, pick(random_)));
}

void Informer::After(std::chrono::milliseconds wait, bool probe) {
  ++outstanding_;
  timer_->timer.expires_after(wait);
  timer_->timer.async_wait([this, probe](const boost::system::error_code&) {
    --outstanding_;
    if (Stopping()) return;
    if (probe) return Probe();
    Next();
  });
}

void Informer::Fail(FailureKind kind, const std::string& message, int retry_after_seconds) {
  if (!message.empty()) Log(LogSeverity::kWarning, message);
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    sync_.Failed(message.empty() ? sync_.State(Clock::now()).cause : message);
    if (!message.empty()) ++stats_.errors;
  }
  std::optional<std::chrono::seconds> retry_after;
  if (retry_after_seconds >= 0) retry_after = std::chrono::seconds(retry_after_seconds);
  retry_at_ = Clock::now() + retry_.AfterFailure(kind, retry_after);
  WaitToRetry();
}

void Informer::WaitToRetry() {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(retry_at_ - Clock::now());
  if (left.count() <= 0) return Next();
  if (retry_.ShouldProbe()) {
    const auto probe_in = retry_.NextProbeDelay();
    if (probe_in < left) return After(probe_in, true);
  }
  After(left, false);
}

void Informer::Probe() {
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.probes;
  }
  ++outstanding_;
  // Bounded like the waits it shortens: a server that hangs must not hold the informer longer.
  const auto timeout = std::max(options_.probe_interval * 2, std::chrono::milliseconds(1000));
  call_ = client_->SendAsync(
      "GET", options_.probe_path, "", "",
      [this](RestResponse response) {
        --outstanding_;
        call_.reset();
        if (Stopping()) return;
        // Served: ready, or it answers but will not tell (RBAC, a server without the path).
        const int code = response.status;
        const bool serving = code == 200 || code == 401 || code == 403 || code == 404;
        if (!retry_.OnProbe(serving)) return WaitToRetry();
        {
          std::lock_guard<std::mutex> lock(stats_mutex_);
          ++stats_.probe_wakes;
        }
        Log(LogSeverity::kInfo, "the API server answers " + options_.probe_path + " again: " +
                                    (need_list_ ? "listing " : "watching ") + options_.resource +
                                    " now instead of in " + Milliseconds(retry_at_ - Clock::now()));
        Next();
      },
      timeout);
}

void Informer::Next() {
  if (Stopping()) return;
  if (!need_list_) return StartWatch();
  items_.clear();
  list_rv_.clear();
  continue_token_.clear();
  list_restarts_ = 0;
  RequestPage();
}

void Informer::RequestPage() {
  std::string path = options_.path + "?limit=" + std::to_string(options_.page_size);
  if (!continue_token_.empty()) path += "&continue=" + EscapeUrlComponent(continue_token_);
  ++outstanding_;
  call_ = client_->SendAsync("GET", std::move(path), "", "", [this](RestResponse response) {
    --outstanding_;
    call_.reset();
    if (Stopping()) return;
    OnPage(std::move(response));
  });
}

void Informer::OnPage(RestResponse response) {
  if (response.status == 410 && !continue_token_.empty() && list_restarts_ < kMaxListRestarts) {
    // The list's point in time was compacted away between pages (capture 74): the pages read so
    // far no longer belong to one consistent list, so start a fresh one.
    Log(LogSeverity::kInfo,
        "list of " + options_.resource + ": continue token expired, starting the list again");
    ++list_restarts_;
    items_.clear();
    list_rv_.clear();
    continue_token_.clear();
    return RequestPage();
  }
  if (response.status == 0) {
    // Refused, reset, timed out, or cut off mid-body: the server is away (or going).
    return Fail(FailureKind::kNoAnswer,
                "list " + options_.path + ": " + DescribeFailure(response) + " (retrying)");
  }
  if (response.status != 200) {
    return Fail(FailureKindOf(response.status),
                "list " + options_.path + ": " + DescribeFailure(response) + " (retrying)",
                RetryAfterOf(response.retry_after_seconds, response.body));
  }
  ListPage page;
  if (Status parsed = ParseListPage(response.body, &page); !parsed.ok()) {
    return Fail(FailureKind::kErrorAnswer,
                "list " + options_.path + ": " + parsed.message() + " (retrying)");
  }
  retry_.Succeeded();
  if (list_rv_.empty()) list_rv_ = page.resource_version;  // every page carries the first's RV
  for (auto& item : page.items)
    items_.push_back(std::move(item));
  if (!page.continue_token.empty()) {
    continue_token_ = std::move(page.continue_token);
    return RequestPage();
  }
  if (list_rv_.empty()) {
    return Fail(FailureKind::kErrorAnswer,
                "list " + options_.path + ": no metadata.resourceVersion (retrying)");
  }
  sink_->Replace(options_.resource, std::move(items_));
  items_ = {};
  resource_version_ = list_rv_;
  need_list_ = false;
  synced_.store(true, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    sync_.ListCompleted(Clock::now());
    stats_.synced = true;
    ++stats_.lists;
    if (resync_) ++stats_.resyncs;
    stats_.resource_version = resource_version_;
  }
  resync_ = false;
  if (options_.resync_period.count() > 0) next_resync_ = Clock::now() + options_.resync_period;
  Next();
}

void Informer::StartWatch() {
  auto timeout = NextWatchTimeout();
  if (next_resync_ != Clock::time_point::max()) {
    auto until_resync = std::chrono::ceil<std::chrono::seconds>(next_resync_ - Clock::now());
    if (until_resync.count() <= 0) {
      need_list_ = true;  // periodic full relist: repairs anything a watch might have missed
      resync_ = true;
      UpdateSync([](InformerSync& sync) { sync.Doing("periodic resync: relisting"); });
      return Next();
    }
    timeout = std::min(timeout, until_resync);
  }
  std::string path = options_.path +
                     "?watch=1&resourceVersion=" + EscapeUrlComponent(resource_version_) +
                     "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(timeout.count());
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.watches;
  }
  watch_expired_ = false;
  watch_error_.clear();
  watch_confirmed_ = false;
  const auto started = Clock::now();
  // The server ends a healthy watch by its timeoutSeconds, sooner than this; a watch silent
  // this long is stuck (or the server failed to end it).
  const auto inactivity = std::max(options_.watch_idle_timeout,
                                   std::chrono::duration_cast<std::chrono::milliseconds>(timeout) +
                                       std::chrono::milliseconds(500));
  watch_protobuf_ = false;
  ++outstanding_;
  call_ = client_->WatchAsync(
      std::move(path), inactivity,
      [this](std::string_view event) { return HandleWatchEvent(event); },
      [this, started](WatchResult result) {
        --outstanding_;
        call_.reset();
        if (Stopping()) return;
        OnWatchEnd(std::move(result), started);
      },
      [this](int status, WatchFraming framing) {
        if (status != 200) return;
        watch_protobuf_ = framing == WatchFraming::kLengthPrefixed;
        if (options_.protobuf_watch && !watch_protobuf_ && !told_json_answer_) {
          // An API server (or a proxy) that does not speak protobuf: JSON serves as well.
          told_json_answer_ = true;
          Log(LogSeverity::kInfo,
              "watch of " + options_.resource + ": the API server answered in JSON, not protobuf");
        }
        UpdateSync([](InformerSync& sync) { sync.WatchOpened(Clock::now()); });
      },
      options_.protobuf_watch ? std::string(kProtobufMediaType) + ", application/json"
                              : std::string("application/json"));
}

bool Informer::HandleWatchEvent(std::string_view data) {
  if (stopping_) return false;
  // The line's buffer is reused for the next line: withdraw its parsed tokens when done.
  struct Forget {
    ~Forget() { json::JsonPullReader::ForgetSource(); }
  } forget;
  WatchEventEnvelope event;
  ProtobufWatchEvent frame;  // a protobuf watch's event, its object's envelope parsed
  Status parsed;
  if (watch_protobuf_) {
    parsed = ParseProtobufWatchEvent(data, &frame);
    event.type = std::move(frame.type);
    event.object = frame.object;
    event.resource_version = std::move(frame.resource_version);
  } else {
    parsed = ParseWatchEvent(data, &event);
  }
  if (!parsed.ok()) {
    watch_error_ = "undecodable watch event of " + options_.resource + ": " + parsed.message();
    return false;
  }
  WatchEventType type;
  if (event.type == "ADDED") {
    type = WatchEventType::kAdded;
  } else if (event.type == "MODIFIED") {
    type = WatchEventType::kModified;
  } else if (event.type == "DELETED") {
    type = WatchEventType::kDeleted;
  } else if (event.type == "BOOKMARK") {
    // Everything up to this RV was delivered: resume from here (no object change to apply).
    if (!event.resource_version.empty()) resource_version_ = event.resource_version;
    std::lock_guard<std::mutex> lock(stats_mutex_);
    if (!watch_confirmed_) sync_.WatchLine(Clock::now());
    watch_confirmed_ = true;
    ++stats_.bookmarks;
    stats_.resource_version = resource_version_;
    return true;
  } else if (event.type == "ERROR") {
    ApiStatus status;
    bool is_status = ParseApiStatus(event.object, &status);
    bool too_large = false;
    for (const auto& cause : status.causes)
      too_large = too_large || cause.first == "ResourceVersionTooLarge";
    if (is_status && (status.code == 410 || too_large)) {
      // "too old resource version" (captures 75, 76), or one the server never had (it was
      // started fresh under us): either way only a relist gives a resourceVersion to follow.
      watch_expired_ = true;
      watch_expired_why_ =
          too_large ? "is ahead of the server (" + status.message + ")" : "expired (410 Gone)";
    } else {
      watch_error_ =
          "watch of " + options_.resource + " sent ERROR " +
          (is_status ? std::to_string(status.code) + " " + status.reason + ": " + status.message
           : watch_protobuf_ ? std::string("an object that is not a Status")
                             : std::string(event.object.substr(0, 200)));
    }
    return false;
  } else {
    Log(LogSeverity::kWarning,
        "watch of " + options_.resource + ": ignoring event type \"" + event.type + "\"");
    return true;
  }
  if (watch_protobuf_) {
    sink_->Apply(options_.resource, type, ObjectEncoding::kProtobuf, frame.contents.raw);
  } else {
    sink_->Apply(options_.resource, type, ObjectEncoding::kJson, event.object);
  }
  if (!event.resource_version.empty()) resource_version_ = std::move(event.resource_version);
  std::lock_guard<std::mutex> lock(stats_mutex_);
  if (!watch_confirmed_) sync_.WatchLine(Clock::now());
  watch_confirmed_ = true;
  ++stats_.events;
  if (watch_protobuf_) ++stats_.protobuf_events;
  stats_.resource_version = resource_version_;
  return true;
}

void Informer::OnWatchEnd(WatchResult result, Clock::time_point started) {
  const auto now = Clock::now();
  if (watch_expired_ || result.status == 410) {
    const std::string why =
        "watch of " + options_.resource + " from resourceVersion " + resource_version_ + " " +
        (watch_expired_ ? watch_expired_why_ : std::string("expired (410 Gone)")) + ": relisting";
    Log(LogSeverity::kInfo, why);
    need_list_ = true;
    {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      sync_.WatchEnded(now, false, why);
      ++stats_.relists_expired;
    }
    // A fresh list's RV expiring again at once means something is off: do not spin. (A list
    // just succeeded, so the wait is the first step, not one grown during an outage.)
    if (++expired_in_a_row_ > 1) return Fail(FailureKind::kErrorAnswer, "");
    return Next();
  }
  // The server accepted the watch's resourceVersion: whatever expires next is not the fresh
  // list's. (A quiet resource's watches deliver no line at all, so lines cannot tell.)
  if (result.status == 200) expired_in_a_row_ = 0;
  const bool useful = result.lines > 0 || now - started >= kMinimalUsefulWatch;
  if (!watch_error_.empty()) {
    need_list_ = true;
    UpdateSync([&](InformerSync& sync) { sync.WatchEnded(now, false, watch_error_); });
    return Fail(FailureKind::kErrorAnswer, watch_error_ + ": relisting");
  }
  if (result.status == 0) {
    return Fail(FailureKind::kNoAnswer,
                "watch of " + options_.resource + ": " + result.error + " (retrying)");
  }
  if (result.status != 200) {
    RestResponse failure{result.status, result.body, result.error};
    return Fail(FailureKindOf(result.status),
                "watch of " + options_.resource + ": " + DescribeFailure(failure) + " (retrying)",
                RetryAfterOf(result.retry_after_seconds, result.body));
  }
  if (useful) retry_.Succeeded();
  if (result.idle_timeout) {
    // Stuck (or the server failed to end it at its timeoutSeconds): resume from the last
    // resourceVersion, which replays whatever it did not deliver.
    const std::string why =
        "watch of " + options_.resource + " delivered nothing for " +
        Milliseconds(now - started > options_.watch_idle_timeout ? options_.watch_idle_timeout
                                                                 : now - started) +
        ": resuming from resourceVersion " + resource_version_;
    Log(LogSeverity::kWarning, why);
    {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      sync_.WatchEnded(now, false, why);
      ++stats_.idle_restarts;
    }
    return Next();
  }
  if (!result.error.empty()) {
    // A dropped stream: resume from the last resourceVersion; nothing is lost or repeated.
    const std::string why = result.error + "; resuming from resourceVersion " + resource_version_;
    UpdateSync([&](InformerSync& sync) { sync.WatchEnded(now, false, why); });
    if (!useful) return Fail(FailureKind::kNoAnswer, why);
    Log(LogSeverity::kInfo, why);
    return Next();
  }
  if (!useful) {
    UpdateSync([&](InformerSync& sync) {
      sync.WatchEnded(now, false, "watch of " + options_.resource + " ended at once");
    });
    return Fail(FailureKind::kErrorAnswer, "");
  }
  UpdateSync([&](InformerSync& sync) { sync.WatchEnded(now, true, ""); });
  Next();
}

}  // namespace capext::kube
