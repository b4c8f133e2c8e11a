#include "bench/sim/trace_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "config/snapshot.h"

namespace capext {
namespace {

constexpr int64_t kMebibyte = int64_t{1} << 20;

// One CSV file split into rows of fields. The trace has no quoting; a trailing '\r' is dropped.
class CsvRows {
 public:
  explicit CsvRows(std::string_view text) : text_(text) {}

  // Next non-empty line split on ','; false at the end. *line_no is 1-based.
  bool Next(std::vector<std::string_view>* fields, int* line_no) {
    while (pos_ < text_.size()) {
      std::size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      fields->clear();
      std::size_t start = 0;
      while (true) {
        std::size_t comma = line.find(',', start);
        fields->push_back(
            line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      *line_no = line_;
      return true;
    }
    return false;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 0;
};

// Column name -> index, from the header row.
class Header {
 public:
  Status Read(CsvRows* rows, const std::string& source) {
    std::vector<std::string_view> fields;
    int line = 0;
    if (!rows->Next(&fields, &line)) return Status::Error(source + ": empty file (no header row)");
    for (std::size_t i = 0; i < fields.size(); ++i)
      columns_[std::string(fields[i])] = static_cast<int>(i);
    return {};
  }
  // -1 when absent.
  int Find(const std::string& name) const {
    auto it = columns_.find(name);
    return it == columns_.end() ? -1 : it->second;
  }
  Status Require(const std::vector<std::string>& names, const std::string& source,
                 std::vector<int>* out) const {
    for (const auto& n : names) {
      int i = Find(n);
      if (i < 0) return Status::Error(fmt::format("{}: the header has no '{}' column", source, n));
      out->push_back(i);
    }
    return {};
  }

 private:
  std::map<std::string, int> columns_;
};

std::string_view Field(const std::vector<std::string_view>& fields, int index) {
  return index >= 0 && static_cast<std::size_t>(index) < fields.size() ? fields[index]
                                                                       : std::string_view();
}

Status ParseInt(std::string_view text, const std::string& where, std::string_view column,
                int64_t* out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || *out < 0) {
    return Status::Error(
        fmt::format("{}: {}: expected a non-negative integer, got '{}'", where, column, text));
  }
  return {};
}

std::vector<std::string> SplitModels(std::string_view spec) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t bar = spec.find('|', start);
    std::string_view part =
        spec.substr(start, bar == std::string_view::npos ? spec.npos : bar - start);
    if (!part.empty()) out.emplace_back(part);
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

bool ParseGpuSharing(std::string_view text, GpuSharing* out) {
  if (text == "round-up") {
    *out = GpuSharing::kRoundUp;
  } else if (text == "milli") {
    *out = GpuSharing::kMilli;
  } else {
    return false;
  }
  return true;
}

const char* GpuSharingName(GpuSharing sharing) {
  return sharing == GpuSharing::kMilli ? "milli" : "round-up";
}

Status ParseAlibabaNodeList(std::string_view text, const std::string& source,
                            const NodeListOptions& options, std::vector<Node>* out) {
  CsvRows rows(text);
  Header header;
  if (Status s = header.Read(&rows, source); !s.ok()) return s;
  std::vector<int> col;
  if (Status s = header.Require({"sn", "cpu_milli", "memory_mib", "gpu"}, source, &col); !s.ok())
    return s;
  const int model_col = header.Find("model");
  std::vector<std::string_view> f;
  int line = 0;
  while (rows.Next(&f, &line)) {
    const std::string where = fmt::format("{}:{}", source, line);
    Node node;
    node.name = std::string(Field(f, col[0]));
    if (node.name.empty()) return Status::Error(where + ": sn: empty node name");
    int64_t cpu = 0, mem = 0, gpu = 0;
    if (Status s = ParseInt(Field(f, col[1]), where, "cpu_milli", &cpu); !s.ok()) return s;
    if (Status s = ParseInt(Field(f, col[2]), where, "memory_mib", &mem); !s.ok()) return s;
    if (Status s = ParseInt(Field(f, col[3]), where, "gpu", &gpu); !s.ok()) return s;
    node.allocatable.Set("cpu", cpu);
    node.allocatable.Set("memory", SaturatingAdd(0, mem * kMebibyte));
    node.allocatable.Set("pods", options.max_pods);
    if (gpu > 0) {
      node.allocatable.Set(kGpuResource, gpu);
      if (options.gpu_sharing == GpuSharing::kMilli)
        node.allocatable.Set(kGpuMilliResource, gpu * 1000);
    }
    node.labels["kubernetes.io/hostname"] = node.name;
    std::string_view model = Field(f, model_col);
    if (!model.empty()) node.labels[kGpuModelLabel] = std::string(model);
    out->push_back(std::move(node));
  }
  return {};
}

Status ReadAlibabaNodeList(const std::string& path, const NodeListOptions& options,
                           std::vector<Node>* out) {
  std::string text;
  if (Status s = ReadFileToString(path, &text); !s.ok()) return s;
  return ParseAlibabaNodeList(text, path, options, out);
}

Status ParseAlibabaPodList(std::string_view text, const std::string& source,
                           const TraceOptions& options, Workload* out) {
  CsvRows rows(text);
  Header header;
  if (Status s = header.Read(&rows, source); !s.ok()) return s;
  std::vector<int> col;
  Status req = header.Require(
      {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time", "deletion_time"},
      source, &col);
  if (!req.ok()) return req.WithContext("this pod list has no arrival times");
  const int spec_col = header.Find("gpu_spec");
  const int qos_col = header.Find("qos");
  const int scheduled_col = header.Find("scheduled_time");
  const int group_col = header.Find("group");
  const int min_member_col = header.Find("min_member");
  std::map<std::string, std::string> tenant_of_group;  // a group's pods share its first tenant
  if (qos_col < 0 && options.tenants.kind == TenantRule::Kind::kQos) {
    return Status::Error(source + ": --tenants qos needs a 'qos' column; use --tenants hash:N");
  }
  int64_t zero_lifetime = 0, unscheduled = 0, unscheduled_skipped = 0, shared_gpu = 0, read = 0;
  std::vector<std::string_view> f;
  int line = 0;
  while (rows.Next(&f, &line)) {
    const std::string where = fmt::format("{}:{}", source, line);
    ++read;
    WorkloadPod pod;
    pod.name = std::string(Field(f, col[0]));
    if (pod.name.empty()) return Status::Error(where + ": name: empty pod name");
    int64_t cpu = 0, mem = 0, num_gpu = 0, gpu_milli = 0, created = 0, deleted = 0;
    if (Status s = ParseInt(Field(f, col[1]), where, "cpu_milli", &cpu); !s.ok()) return s;
    if (Status s = ParseInt(Field(f, col[2]), where, "memory_mib", &mem); !s.ok()) return s;
    if (Status s = ParseInt(Field(f, col[3]), where, "num_gpu", &num_gpu); !s.ok()) return s;
    if (Status s = ParseInt(Field(f, col[4]), where, "gpu_milli", &gpu_milli); !s.ok()) return s;
    if (Status s = ParseInt(Field(f, col[5]), where, "creation_time", &created); !s.ok()) return s;
    if (Status s = ParseInt(Field(f, col[6]), where, "deletion_time", &deleted); !s.ok()) return s;
    if (deleted <= created) {
      ++zero_lifetime;
      continue;
    }
    if (scheduled_col >= 0 && Field(f, scheduled_col).empty()) {
      ++unscheduled;
      if (options.skip_unscheduled) {
        ++unscheduled_skipped;
        continue;
      }
    }
    pod.arrival_ms = created * 1000;
    pod.duration_ms = (deleted - created) * 1000;
    if (cpu > 0) pod.requests.Set("cpu", cpu);
    if (mem > 0) pod.requests.Set("memory", mem * kMebibyte);
    const int64_t gpus = num_gpu > 0 ? num_gpu : (gpu_milli > 0 ? 1 : 0);
    if (gpus > 0) {
      if (gpu_milli > 0 && gpu_milli < 1000) ++shared_gpu;
      if (options.gpu_sharing == GpuSharing::kMilli) {
        pod.requests.Set(kGpuMilliResource, num_gpu > 0 ? num_gpu * gpu_milli : gpu_milli);
      } else {
        pod.requests.Set(kGpuResource, gpus);
      }
      pod.gpu_models = SplitModels(Field(f, spec_col));
    }
    pod.group = std::string(Field(f, group_col));
    if (!Field(f, min_member_col).empty()) {
      int64_t min_member = 0;
      if (Status s = ParseInt(Field(f, min_member_col), where, "min_member", &min_member); !s.ok())
        return s;
      pod.min_member = static_cast<int32_t>(std::min<int64_t>(min_member, INT32_MAX));
    }
    if (pod.group.empty()) {
      pod.tenant = TenantOf(options.tenants, pod.name, Field(f, qos_col));
    } else {
      auto [it, inserted] = tenant_of_group.emplace(pod.group, std::string());
      if (inserted) it->second = TenantOf(options.tenants, pod.group, Field(f, qos_col));
      pod.tenant = it->second;
    }
    out->pods.push_back(std::move(pod));
  }
  out->notes.push_back(fmt::format("{}: {} rows read, {} submitted", source, read,
                                   read - zero_lifetime - unscheduled_skipped));
  out->notes.push_back(fmt::format(
      "{} rows skipped: deletion_time <= creation_time (no lifetime to replay)", zero_lifetime));
  out->notes.push_back(fmt::format(
      "{} rows never scheduled in the original cluster (empty scheduled_time): {}", unscheduled,
      options.skip_unscheduled ? "skipped (--unscheduled skip)"
                               : "submitted with duration deletion_time - creation_time"));
  out->notes.push_back(
      fmt::format("{} GPU-sharing pods (gpu_milli < 1000): {}", shared_gpu,
                  options.gpu_sharing == GpuSharing::kMilli
                      ? "request alibaba.com/gpu-milli = num_gpu * gpu_milli"
                      : "each takes one whole nvidia.com/gpu (--gpu-sharing round-up)"));
  if (options.load_scale != 1.0) {
    for (WorkloadPod& pod : out->pods) {
      pod.arrival_ms = static_cast<int64_t>(
          std::llround(static_cast<double>(pod.arrival_ms) / options.load_scale));
    }
    out->notes.push_back(
        fmt::format("load scaled by {}: arrival times divided by {}, durations kept (--load-scale)",
                    options.load_scale, options.load_scale));
  }
  SortByArrival(&out->pods);
  if (group_col >= 0) {
    int64_t disagreements = 0;
    const std::vector<WorkloadGroup> groups = GroupsOf(*out, &disagreements);
    int64_t members = 0;
    for (const auto& g : groups)
      members += static_cast<int64_t>(g.members.size());
    out->notes.push_back(fmt::format(
        "{} pod groups (min_member >= 2) with {} pods; {} groups whose rows disagree on "
        "min_member (the oldest row's value applies)",
        groups.size(), members, disagreements));
  }
  return {};
}

Status ReadAlibabaPodList(const std::string& path, const TraceOptions& options, Workload* out) {
  std::string text;
  if (Status s = ReadFileToString(path, &text); !s.ok()) return s;
  const std::size_t slash = path.find_last_of('/');
  out->source = "trace " + (slash == std::string::npos ? path : path.substr(slash + 1));
  return ParseAlibabaPodList(text, path.substr(slash == std::string::npos ? 0 : slash + 1), options,
                             out);
}

}  // namespace capext
