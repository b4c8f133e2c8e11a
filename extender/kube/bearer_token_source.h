// BearerTokenSource: the bearer token sent to the API server. Either fixed (a kubeconfig `token`)
// or read from a file that is replaced while we run (a kubeconfig `tokenFile`, or the projected
// service-account token, which the kubelet rotates about hourly).
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"

namespace capext::kube {

class BearerTokenSource {
 public:
  static std::shared_ptr<BearerTokenSource> Fixed(std::string token);

  // Reads `path` now. On success sets *out; on failure (missing, unreadable or empty file)
  // returns an error naming the file. `recheck_interval` bounds how often Current() looks at the
  // file's modification time.
  static Status FromFile(const std::string& path, std::chrono::milliseconds recheck_interval,
                         std::shared_ptr<BearerTokenSource>* out);

  // The token to send now. For a file: when at least recheck_interval has passed since the last
  // look (or after ForceReload()) and the file's modification time or size changed, the file is
  // read again (surrounding whitespace trimmed). A failed or empty read keeps the last good token
  // and is logged.
  std::string Current();

  // Called when the API server answered 401: the next Current() re-reads the file whatever its
  // modification time. Returns true when the source is a file (so a retry may help).
  bool ForceReload();

  bool from_file() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

 private:
  BearerTokenSource() = default;
  // REQUIRES: mutex_ held. Reads the file; on failure token_ is unchanged.
  Status ReadFileLocked();

  std::string path_;  // empty: fixed token
  std::chrono::milliseconds recheck_interval_{0};

  std::mutex mutex_;
  std::string token_;
  std::filesystem::file_time_type mtime_{};
  std::uintmax_t size_ = 0;
  std::chrono::steady_clock::time_point last_check_{};
  bool force_reload_ = false;
};

}  // namespace capext::kube
