#include "extender/kube/bearer_token_source.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include "extender/kube/kube_log.h"

namespace capext::kube {
namespace {

std::string Trim(const std::string& text) {
  const char* kSpace = " \t\r\n";
  size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(kSpace);
  return text.substr(begin, end - begin + 1);
}

}  // namespace

std::shared_ptr<BearerTokenSource> BearerTokenSource::Fixed(std::string token) {
  std::shared_ptr<BearerTokenSource> source(new BearerTokenSource());
  source->token_ = Trim(token);
  return source;
}

Status BearerTokenSource::FromFile(const std::string& path,
                                   std::chrono::milliseconds recheck_interval,
                                   std::shared_ptr<BearerTokenSource>* out) {
  std::shared_ptr<BearerTokenSource> source(new BearerTokenSource());
  source->path_ = path;
  source->recheck_interval_ = recheck_interval;
  std::lock_guard<std::mutex> lock(source->mutex_);
  if (Status s = source->ReadFileLocked(); !s.ok()) return s;
  *out = std::move(source);
  return Status::Ok();
}

Status BearerTokenSource::ReadFileLocked() {
  std::error_code ec;
  // Stat before reading: if the file changes in between, the next look reads it again.
  auto mtime = std::filesystem::last_write_time(path_, ec);
  auto size = ec ? 0 : std::filesystem::file_size(path_, ec);
  last_check_ = std::chrono::steady_clock::now();
  if (ec) {
    return Status::Invalid("token file " + path_ + ": " + ec.message());
  }
  std::ifstream in(path_, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return Status::Invalid("token file " + path_ + ": cannot be read");
  }
  std::string token = Trim(content.str());
  if (token.empty()) {
    return Status::Invalid("token file " + path_ + " is empty");
  }
  mtime_ = mtime;
  size_ = size;
  token_ = std::move(token);
  return {};
}

std::string BearerTokenSource::Current() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (path_.empty()) return token_;
  auto now = std::chrono::steady_clock::now();
  if (!force_reload_ && now - last_check_ < recheck_interval_) return token_;
  bool forced = force_reload_;
  force_reload_ = false;
  std::error_code ec;
  auto mtime = std::filesystem::last_write_time(path_, ec);
  auto size = ec ? 0 : std::filesystem::file_size(path_, ec);
  last_check_ = now;
  if (!forced && !ec && mtime == mtime_ && size == size_) return token_;
  std::string previous = token_;
  if (Status s = ReadFileLocked(); !s.ok()) {
    Log(LogSeverity::kWarning, s.message() + "; keeping the previous token");
  } else if (token_ != previous) {
    Log(LogSeverity::kInfo, "bearer token reloaded from " + path_);
  }
  return token_;
}

bool BearerTokenSource::ForceReload() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (path_.empty()) return false;
  force_reload_ = true;
  return true;
}

}  // namespace capext::kube
