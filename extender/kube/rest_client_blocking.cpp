// The blocking forms of RestClient's calls: each waits on a future for its asynchronous form
// (rest_client.h says which threads may call them).
#include <future>
#include <stop_token>
#include <utility>

#include "extender/kube/rest_client.h"

namespace capext::kube {

RestResponse RestClient::Send(const std::string& method, const std::string& path, std::string body,
                              const std::string& content_type, std::stop_token stop,
                              std::chrono::milliseconds timeout) {
  if (OnClientThread()) {
    return {0, "", method + " " + path + ": a blocking call on the client thread would deadlock"};
  }
  std::promise<RestResponse> promise;
  std::future<RestResponse> future = promise.get_future();
  auto handle = SendAsync(
      method, path, std::move(body), content_type,
      [&promise](RestResponse r) { promise.set_value(std::move(r)); }, timeout);
  std::stop_callback on_stop(stop, [&handle] { handle->Cancel(); });
  return future.get();
}

RestResponse RestClient::Get(const std::string& path, std::stop_token stop) {
  return Send("GET", path, "", "", stop);
}
RestResponse RestClient::Post(const std::string& path, std::string body,
                              const std::string& content_type) {
  return Send("POST", path, std::move(body), content_type);
}
RestResponse RestClient::Put(const std::string& path, std::string body,
                             const std::string& content_type) {
  return Send("PUT", path, std::move(body), content_type);
}
RestResponse RestClient::Patch(const std::string& path, std::string body,
                               const std::string& content_type) {
  return Send("PATCH", path, std::move(body), content_type);
}
RestResponse RestClient::Delete(const std::string& path) {
  return Send("DELETE", path, "", "");
}

WatchResult RestClient::Watch(const std::string& path, std::chrono::milliseconds inactivity_timeout,
                              const EventCallback& on_event, std::stop_token stop,
                              std::string accept) {
  if (OnClientThread()) {
    WatchResult result;
    result.error = "watch " + path + ": a blocking call on the client thread would deadlock";
    return result;
  }
  std::promise<WatchResult> promise;
  std::future<WatchResult> future = promise.get_future();
  auto handle = WatchAsync(
      path, inactivity_timeout, on_event,
      [&promise](WatchResult r) { promise.set_value(std::move(r)); }, {}, std::move(accept));
  std::stop_callback on_stop(stop, [&handle] { handle->Cancel(); });
  WatchResult result = future.get();
  if (stop.stop_requested()) result.stopped = true;
  return result;
}

}  // namespace capext::kube
