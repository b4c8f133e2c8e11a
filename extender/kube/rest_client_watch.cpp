// RestClient's watch streams: one dedicated connection per watch, its body cut into events:
// lines (JSON), or length-prefixed frames (protobuf).
#include "extender/kube/kube_log.h"
#include "extender/kube/rest_client_impl.h"

namespace capext::kube {
namespace {

constexpr size_t kMaxWatchEvent = 64u << 20;  // one event larger than this is a broken stream
constexpr size_t kMaxErrorBody = 64u << 10;   // kept of a non-200 watch response

}  // namespace

void RestClient::Impl::StartWatch(const std::shared_ptr<WatchCall>& watch) {
  watches_.insert(watch);
  if (shutting_down_ || watch->cancelled) return FinishWatch(watch);
  watch->connection = NewConnection();
  watch->connection->Connect(options_.request_timeout, [this, watch](beast::error_code ec,
                                                                     const char* stage) {
    if (watch->cancelled || shutting_down_) return FinishWatch(watch);
    if (ec) {
      watch->result.error = "watch " + watch->path + ": " + stage + " " + endpoint_.host_header +
                            ": " + DescribeError(ec, options_.request_timeout);
      return FinishWatch(watch);
    }
    std::string token = CurrentToken();
    auto request = BuildRequest("GET", watch->path, "", "", token);
    request->set(beast_http::field::accept, watch->accept);
    watch->connection->Stream(
        std::move(request), options_.request_timeout, watch->inactivity,
        [watch](int status, int retry_after, std::string_view content_type) {
          watch->result.status = status;
          watch->result.retry_after_seconds = retry_after;
          watch->result.framing =
              content_type.substr(0, kProtobufMediaType.size()) == kProtobufMediaType
                  ? WatchFraming::kLengthPrefixed
                  : WatchFraming::kLines;
          if (watch->on_start && !watch->cancelled) {
            watch->on_start(status, watch->result.framing);
          }
        },
        [watch](std::string_view data) { return WatchData(*watch, data); },
        [this, watch, token](beast::error_code ec, bool complete) {
          if (!watch->cancelled && !watch->result.stopped && watch->result.error.empty()) {
            if (complete) {
              watch->result.completed = watch->result.status == 200;
            } else if (ec) {
              // After the header, the only deadline is the inactivity one.
              watch->result.idle_timeout = ec == beast::error::timeout && watch->result.status != 0;
              watch->result.error =
                  "watch " + watch->path + ": " +
                  (watch->result.idle_timeout
                       ? "nothing received for " + std::to_string(watch->inactivity.count()) + " ms"
                       : DescribeError(ec, watch->inactivity));
            }
          }
          if (watch->result.status == 401 && config_.token) config_.token->ForceReload();
          FinishWatch(watch);
        });
  });
}

bool RestClient::Impl::WatchData(WatchCall& watch, std::string_view data) {
  if (watch.cancelled) return false;
  if (watch.result.status != 200) {
    if (watch.result.body.size() < kMaxErrorBody) watch.result.body.append(data);
    return true;
  }
  std::string& pending = watch.pending;
  pending.append(data);
  // Hands over one complete event; false when the watch is to end.
  auto deliver = [&watch](std::string_view event) {
    ++watch.result.lines;
    if (!watch.on_event(event)) {
      watch.result.stopped = true;
      return false;
    }
    return !watch.cancelled;
  };
  size_t start = 0;
  if (watch.result.framing == WatchFraming::kLengthPrefixed) {
    while (pending.size() - start >= 4) {
      const auto* p = reinterpret_cast<const unsigned char*>(pending.data() + start);
      const size_t length =
          (size_t{p[0]} << 24) | (size_t{p[1]} << 16) | (size_t{p[2]} << 8) | p[3];
      if (length > kMaxWatchEvent) {
        watch.result.error = "watch event larger than " + std::to_string(kMaxWatchEvent) + " bytes";
        return false;
      }
      if (pending.size() - start - 4 < length) break;
      if (!deliver(std::string_view(pending).substr(start + 4, length))) return false;
      start += 4 + length;
    }
  } else {
    for (size_t newline; (newline = pending.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      if (newline == start) continue;
      if (!deliver(std::string_view(pending).substr(start, newline - start))) return false;
    }
  }
  pending.erase(0, start);
  if (pending.size() > kMaxWatchEvent) {
    watch.result.error = "watch event larger than " + std::to_string(kMaxWatchEvent) + " bytes";
    return false;
  }
  return true;
}

void RestClient::Impl::FinishWatch(const std::shared_ptr<WatchCall>& watch) {
  if (watch->finished) return;
  watch->finished = true;
  watches_.erase(watch);
  if (watch->connection) watch->connection->Close();
  watch->connection.reset();
  if (watch->cancelled) watch->result.stopped = true;
  auto done = std::move(watch->done);
  watch->on_event = nullptr;
  watch->on_start = nullptr;
  done(std::move(watch->result));
}

std::shared_ptr<CallHandle> RestClient::WatchAsync(
    std::string path, std::chrono::milliseconds inactivity_timeout, EventCallback on_event,
    std::function<void(WatchResult)> done, WatchStartCallback on_start, std::string accept) {
  auto watch = std::make_shared<Impl::WatchCall>();
  watch->impl = impl_.get();
  watch->path = std::move(path);
  watch->inactivity = inactivity_timeout;
  watch->accept = std::move(accept);
  watch->on_event = std::move(on_event);
  watch->done = std::move(done);
  watch->on_start = std::move(on_start);
  net::post(impl_->io_, [impl = impl_.get(), watch] { impl->StartWatch(watch); });
  return watch;
}

}  // namespace capext::kube
