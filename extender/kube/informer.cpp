#include "extender/kube/informer.h"

#include <algorithm>
#include <condition_variable>
#include <utility>

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

// Sleeps for `duration` unless `stop` is requested first; returns false when stopped.
bool WaitUnlessStopped(std::stop_token stop, std::chrono::milliseconds duration) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock<std::mutex> lock(mutex);
  wake.wait_for(lock, stop, duration, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace

Informer::Informer(RestClient* client, InformerOptions options, InformerSink* sink)
    : client_(client),
      options_(std::move(options)),
      sink_(sink),
      random_(options_.seed != 0 ? options_.seed : std::random_device{}()) {}

Informer::~Informer() {
  Stop();
}

void Informer::Start() {
  std::lock_guard<std::mutex> lock(lifecycle_mutex_);
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void Informer::Stop() {
  std::lock_guard<std::mutex> lock(lifecycle_mutex_);
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
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

bool Informer::Backoff(std::stop_token stop) {
  // Exponential: initial * 2^step, capped; jittered into [50%, 100%] of that.
  auto ceiling = options_.backoff_initial;
  for (int i = 0; i < backoff_step_ && ceiling < options_.backoff_max; ++i)
    ceiling *= 2;
  ceiling = std::min(ceiling, options_.backoff_max);
  ++backoff_step_;
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  auto wait = std::chrono::milliseconds(
      static_cast<int64_t>(static_cast<double>(ceiling.count()) * jitter(random_)));
  return WaitUnlessStopped(stop, wait);
}

bool Informer::ListAll(std::stop_token stop, std::vector<std::string>* items, std::string* rv,
                       std::string* error) {
  items->clear();
  rv->clear();
  std::string continue_token;
  int restarts = 0;
  while (!stop.stop_requested()) {
    std::string path = options_.path + "?limit=" + std::to_string(options_.page_size);
    if (!continue_token.empty()) path += "&continue=" + EscapeUrlComponent(continue_token);
    RestResponse response = client_->Get(path, stop);
    if (response.status == 410 && !continue_token.empty() && restarts < kMaxListRestarts) {
      // The list's point in time was compacted away between pages (capture 74): the pages
      // read so far no longer belong to one consistent list, so start a fresh one.
      Log(LogSeverity::kInfo, "list of " + options_.resource + ": continue token expired, " +
                                  "starting the list again");
      ++restarts;
      items->clear();
      rv->clear();
      continue_token.clear();
      continue;
    }
    if (response.status != 200) {
      *error = "list " + options_.path + ": " + DescribeFailure(response);
      return false;
    }
    ListPage page;
    Status parsed = ParseListPage(response.body, &page);
    if (!parsed.ok()) {
      *error = "list " + options_.path + ": " + parsed.message();
      return false;
    }
    if (rv->empty()) *rv = page.resource_version;  // every page carries the first page's RV
    for (auto& item : page.items)
      items->push_back(std::move(item));
    if (page.continue_token.empty()) {
      if (rv->empty()) {
        *error = "list " + options_.path + ": no metadata.resourceVersion";
        return false;
      }
      return true;
    }
    continue_token = std::move(page.continue_token);
  }
  *error = "stopped";
  return false;
}

bool Informer::HandleWatchLine(std::string_view line, WatchVerdict* verdict) {
  WatchEventEnvelope event;
  Status parsed = ParseWatchEvent(line, &event);
  if (!parsed.ok()) {
    verdict->error = "undecodable watch event of " + options_.resource + ": " + parsed.message();
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
      verdict->expired = true;  // "too old resource version" (captures 75, 76)
    } else {
      verdict->error =
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
  sink_->Apply(options_.resource, type, std::string(event.object));
  if (!event.resource_version.empty()) resource_version_ = event.resource_version;
  std::lock_guard<std::mutex> lock(stats_mutex_);
  ++stats_.events;
  stats_.resource_version = resource_version_;
  return true;
}

void Informer::Run(std::stop_token stop) {
  bool need_list = true;
  bool resync = false;
  int expired_in_a_row = 0;
  Clock::time_point next_resync = Clock::time_point::max();
  while (!stop.stop_requested()) {
    if (need_list) {
      std::vector<std::string> items;
      std::string rv;
      std::string error;
      if (!ListAll(stop, &items, &rv, &error)) {
        if (stop.stop_requested()) break;
        Log(LogSeverity::kWarning, error + " (retrying)");
        CountError();
        Backoff(stop);
        continue;
      }
      sink_->Replace(options_.resource, std::move(items));
      resource_version_ = rv;
      need_list = false;
      synced_.store(true, std::memory_order_release);
      ResetBackoff();
      {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        stats_.synced = true;
        ++stats_.lists;
        if (resync) ++stats_.resyncs;
        stats_.resource_version = rv;
      }
      resync = false;
      if (options_.resync_period.count() > 0) next_resync = Clock::now() + options_.resync_period;
    }

    auto timeout = NextWatchTimeout();
    if (next_resync != Clock::time_point::max()) {
      auto until_resync = std::chrono::ceil<std::chrono::seconds>(next_resync - Clock::now());
      if (until_resync.count() <= 0) {
        need_list = true;  // periodic full relist: repairs anything a watch might have missed
        resync = true;
        continue;
      }
      timeout = std::min(timeout, until_resync);
    }
    std::string path =
        options_.path + "?watch=1&resourceVersion=" + EscapeUrlComponent(resource_version_) +
        "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(timeout.count());
    {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      ++stats_.watches;
    }
    WatchVerdict verdict;
    auto started = Clock::now();
    WatchResult result = client_->Watch(
        path,
        std::chrono::duration_cast<std::chrono::milliseconds>(timeout) +
            options_.watch_inactivity_slack,
        [this, &verdict](std::string_view line) { return HandleWatchLine(line, &verdict); }, stop);
    if (stop.stop_requested()) break;

    if (verdict.expired || result.status == 410) {
      Log(LogSeverity::kInfo, "watch of " + options_.resource + " from resourceVersion " +
                                  resource_version_ + " expired (410): relisting");
      need_list = true;
      {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        ++stats_.relists_expired;
      }
      // A fresh list's RV expiring again at once means something is off: do not spin.
      if (++expired_in_a_row > 1) Backoff(stop);
      continue;
    }
    if (result.lines > 0) expired_in_a_row = 0;
    if (!verdict.error.empty()) {
      Log(LogSeverity::kWarning, verdict.error + ": relisting");
      CountError();
      need_list = true;
      Backoff(stop);
      continue;
    }
    if (result.status != 200) {
      RestResponse failure{result.status, result.body, result.error};
      Log(LogSeverity::kWarning,
          "watch of " + options_.resource + ": " + DescribeFailure(failure) + " (retrying)");
      CountError();
      Backoff(stop);
      continue;
    }
    bool useful = result.lines > 0 || Clock::now() - started >= kMinimalUsefulWatch;
    if (!result.error.empty()) {
      // A dropped stream: resume from the last resourceVersion; nothing is lost or repeated.
      Log(LogSeverity::kInfo,
          result.error + "; resuming from resourceVersion " + resource_version_);
      if (!useful) {
        CountError();
        Backoff(stop);
      }
      continue;
    }
    if (useful) {
      ResetBackoff();
    } else {
      Backoff(stop);
    }
  }
}

}  // namespace capext::kube
