#include "extender/kube/informer.h"

#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <utility>

#include "config/json_pull_reader.h"
#include "extender/kube/api_envelopes.h"
#include "extender/kube/kube_log.h"
#include "extender/kube/url_component.h"

namespace capext::kube {
namespace {

using Clock = std::chrono::steady_clock;

// A watch that ends this fast without a single line is treated like an error (backoff), so a
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
      timer_(std::make_unique<Timer>(client->io_context())) {}

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

void Informer::CountError() {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  ++stats_.errors;
}

std::chrono::seconds Informer::NextWatchTimeout() {
  auto low = options_.watch_timeout_min.count();
  auto high = std::max(low, options_.watch_timeout_max.count());
  std::uniform_int_distribution<int64_t> pick(low, high);
  return std::chrono::seconds(std::max<int64_t>(1, pick(random_)));
}

std::chrono::milliseconds Informer::NextBackoff() {
  // Exponential: initial * 2^step, capped; jittered into [50%, 100%] of that.
  auto ceiling = options_.backoff_initial;
  for (int i = 0; i < backoff_step_ && ceiling < options_.backoff_max; ++i)
    ceiling *= 2;
  ceiling = std::min(ceiling, options_.backoff_max);
  ++backoff_step_;
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return std::chrono::milliseconds(
      static_cast<int64_t>(static_cast<double>(ceiling.count()) * jitter(random_)));
}

void Informer::After(std::chrono::milliseconds wait) {
  ++outstanding_;
  timer_->timer.expires_after(wait);
  timer_->timer.async_wait([this](const boost::system::error_code&) {
    --outstanding_;
    if (Stopping()) return;
    Next();
  });
}

void Informer::Backoff() {
  After(NextBackoff());
}

void Informer::Fail(const std::string& message) {
  Log(LogSeverity::kWarning, message);
  CountError();
  Backoff();
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
  if (response.status != 200) {
    return Fail("list " + options_.path + ": " + DescribeFailure(response) + " (retrying)");
  }
  ListPage page;
  if (Status parsed = ParseListPage(response.body, &page); !parsed.ok()) {
    return Fail("list " + options_.path + ": " + parsed.message() + " (retrying)");
  }
  if (list_rv_.empty()) list_rv_ = page.resource_version;  // every page carries the first's RV
  for (auto& item : page.items)
    items_.push_back(std::move(item));
  if (!page.continue_token.empty()) {
    continue_token_ = std::move(page.continue_token);
    return RequestPage();
  }
  if (list_rv_.empty()) {
    return Fail("list " + options_.path + ": no metadata.resourceVersion (retrying)");
  }
  sink_->Replace(options_.resource, std::move(items_));
  items_ = {};
  resource_version_ = list_rv_;
  need_list_ = false;
  synced_.store(true, std::memory_order_release);
  backoff_step_ = 0;
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
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
  const auto started = Clock::now();
  ++outstanding_;
  call_ = client_->WatchAsync(
      std::move(path),
      std::chrono::duration_cast<std::chrono::milliseconds>(timeout) +
          options_.watch_inactivity_slack,
      [this](std::string_view line) { return HandleWatchLine(line); },
      [this, started](WatchResult result) {
        --outstanding_;
        call_.reset();
        if (Stopping()) return;
        OnWatchEnd(std::move(result), started);
      });
}

bool Informer::HandleWatchLine(std::string_view line) {
  if (stopping_) return false;
  // The line's buffer is reused for the next line: withdraw its parsed tokens when done.
  struct Forget {
    ~Forget() { json::JsonPullReader::ForgetSource(); }
  } forget;
  WatchEventEnvelope event;
  Status parsed = ParseWatchEvent(line, &event);
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
    ++stats_.bookmarks;
    stats_.resource_version = resource_version_;
    return true;
  } else if (event.type == "ERROR") {
    ApiStatus status;
    bool is_status = ParseApiStatus(event.object, &status);
    if (is_status && status.code == 410) {
      watch_expired_ = true;  // "too old resource version" (captures 75, 76)
    } else {
      watch_error_ =
          "watch of " + options_.resource + " sent ERROR " +
          (is_status ? std::to_string(status.code) + " " + status.reason + ": " + status.message
                     : std::string(event.object.substr(0, 200)));
    }
    return false;
  } else {
    Log(LogSeverity::kWarning,
        "watch of " + options_.resource + ": ignoring event type \"" + event.type + "\"");
    return true;
  }
  sink_->Apply(options_.resource, type, event.object);
  if (!event.resource_version.empty()) resource_version_ = std::move(event.resource_version);
  std::lock_guard<std::mutex> lock(stats_mutex_);
  ++stats_.events;
  stats_.resource_version = resource_version_;
  return true;
}

void Informer::OnWatchEnd(WatchResult result, Clock::time_point started) {
  if (watch_expired_ || result.status == 410) {
    Log(LogSeverity::kInfo, "watch of " + options_.resource + " from resourceVersion " +
                                resource_version_ + " expired (410): relisting");
    need_list_ = true;
    {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      ++stats_.relists_expired;
    }
    // A fresh list's RV expiring again at once means something is off: do not spin.
    if (++expired_in_a_row_ > 1) return Backoff();
    return Next();
  }
  if (result.lines > 0) expired_in_a_row_ = 0;
  if (!watch_error_.empty()) {
    need_list_ = true;
    return Fail(watch_error_ + ": relisting");
  }
  if (result.status != 200) {
    RestResponse failure{result.status, result.body, result.error};
    return Fail("watch of " + options_.resource + ": " + DescribeFailure(failure) + " (retrying)");
  }
  const bool useful = result.lines > 0 || Clock::now() - started >= kMinimalUsefulWatch;
  if (!result.error.empty()) {
    // A dropped stream: resume from the last resourceVersion; nothing is lost or repeated.
    Log(LogSeverity::kInfo, result.error + "; resuming from resourceVersion " + resource_version_);
    if (useful) return Next();
    CountError();
    return Backoff();
  }
  if (!useful) return Backoff();
  backoff_step_ = 0;
  Next();
}

}  // namespace capext::kube
