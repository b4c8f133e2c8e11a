// The measuring side of the micro-benchmarks: wall and thread-CPU timing, the command line
// (--json, --quick, bench flags), percentiles, heap and RSS, and the JSON report with its targets
// and their verdicts. Header-only; nothing here is used by the product.
#pragma once

#include <malloc.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace capext::bench {

using Clock = std::chrono::steady_clock;

inline double MicrosSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// CPU time of the calling thread, in microseconds. On a loaded machine (other processes sharing
// the cores) wall time includes waiting for a core; thread CPU time is what the call costs.
inline double ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Wall and thread-CPU time of one call.
struct Stopwatch {
  Clock::time_point wall = Clock::now();
  double cpu = ThreadCpuMicros();
  double WallMicros() const { return MicrosSince(wall); }
  double CpuMicros() const { return ThreadCpuMicros() - cpu; }
};

// ---------------------------------------------------------------------------------------------
// Command line: --json FILE, --quick (fewer iterations), --log-level L, --help, plus
// bench-specific flags read with Int("--name", default) / Str(...).
struct Args {
  std::map<std::string, std::string> values;
  bool quick = false;

  static Args Parse(int argc, char** argv, const char* usage) {
    Args a;
    for (int i = 1; i < argc; ++i) {
      std::string flag = argv[i];
      if (flag == "--help" || flag == "-h") {
        std::printf("%s\n", usage);
        std::exit(0);
      }
      if (flag == "--quick") {
        a.quick = true;
      } else if (flag.rfind("--", 0) == 0 && i + 1 < argc) {
        a.values[flag] = argv[++i];
      } else {
        std::fprintf(stderr, "unknown or incomplete flag %s\n", flag.c_str());
        std::exit(2);
      }
    }
    return a;
  }
  int Int(const std::string& flag, int fallback) const {
    auto it = values.find(flag);
    return it == values.end() ? fallback : std::atoi(it->second.c_str());
  }
  std::string Str(const std::string& flag, const std::string& fallback) const {
    auto it = values.find(flag);
    return it == values.end() ? fallback : it->second;
  }
};

// ---------------------------------------------------------------------------------------------
// Statistics.
struct Summary {
  std::size_t n = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

inline Summary Summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  auto at = [&](double p) {
    return samples[std::min(samples.size() - 1, static_cast<std::size_t>(p * samples.size()))];
  };
  s.n = samples.size();
  s.p50 = at(0.50);
  s.p90 = at(0.90);
  s.p99 = at(0.99);
  s.max = samples.back();
  double sum = 0;
  for (double v : samples)
    sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  return s;
}

// The median of per-run values (the mean of the two middle ones for an even count); 0 if none.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

inline void PrintSummary(const char* what, const Summary& s) {
  std::printf("  %-44s n=%-6zu p50=%9.1fus p90=%9.1fus p99=%9.1fus max=%9.1fus\n", what, s.n, s.p50,
              s.p90, s.p99, s.max);
}

// ---------------------------------------------------------------------------------------------
// Heap in use (glibc): arena bytes handed out plus mmapped blocks.
inline std::size_t HeapInUse() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// Resident set size in bytes (/proc/self/statm).
inline std::size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// ---------------------------------------------------------------------------------------------
// The JSON report: flat numbers, notes, and targets with the verdict.
class Report {
 public:
  explicit Report(std::string name) : name_(std::move(name)) {}

  void Number(const std::string& key, double value) { numbers_.emplace_back(key, value); }
  void Note(const std::string& key, const std::string& value) { notes_.emplace_back(key, value); }
  void Latency(const std::string& key, const Summary& s) {
    Number(key + ".p50_us", s.p50);
    Number(key + ".p90_us", s.p90);
    Number(key + ".p99_us", s.p99);
    Number(key + ".max_us", s.max);
    Number(key + ".n", static_cast<double>(s.n));
  }
  // Per-run values of a measure whose median is reported (JSON "series").
  void Series(const std::string& key, std::vector<double> values) {
    series_.emplace_back(key, std::move(values));
  }
  // `op` is "<=", ">=" or "=="; prints and records whether `value` meets `target`. The JSON row
  // is {"name","value","unit","target":"<= 0.5","op","threshold","met"} in every benchmark, so
  // that bench.sh can summarize them all.
  void Target(const std::string& key, double value, const std::string& op, double target,
              const std::string& unit) {
    const bool met = op == "<=" ? value <= target : op == ">=" ? value >= target : value == target;
    targets_.push_back({key, value, op, target, unit, met});
    std::printf("  TARGET %-48s %12.2f %s %s %-10.2f %s\n", key.c_str(), value, unit.c_str(),
                op.c_str(), target, met ? "MET" : "MISSED");
  }

  // Writes to `path`, or out/bench/<name>.json when empty. Returns the path written.
  std::string Write(const std::string& path) const {
    const std::string file = path.empty() ? "out/bench/" + name_ + ".json" : path;
    std::error_code ec;
    const auto parent = std::filesystem::path(file).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    rapidjson::StringBuffer buffer;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("bench");
    w.String(name_.c_str());
    w.Key("numbers");
    w.StartObject();
    for (const auto& [k, v] : numbers_) {
      w.Key(k.c_str());
      w.Double(v);
    }
    w.EndObject();
    w.Key("notes");
    w.StartObject();
    for (const auto& [k, v] : notes_) {
      w.Key(k.c_str());
      w.String(v.c_str());
    }
    w.EndObject();
    w.Key("series");
    w.StartObject();
    for (const auto& [k, values] : series_) {
      w.Key(k.c_str());
      w.StartArray();
      for (double v : values)
        w.Double(v);
      w.EndArray();
    }
    w.EndObject();
    w.Key("targets");
    w.StartArray();
    for (const auto& t : targets_) {
      w.StartObject();
      w.Key("name");
      w.String(t.name.c_str());
      w.Key("value");
      w.Double(t.value);
      w.Key("unit");
      w.String(t.unit.c_str());
      w.Key("target");
      w.String(fmt::format("{} {:g}", t.op, t.target).c_str());
      w.Key("op");
      w.String(t.op.c_str());
      w.Key("threshold");
      w.Double(t.target);
      w.Key("met");
      w.Bool(t.met);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::ofstream(file) << buffer.GetString() << "\n";
    std::printf("wrote %s\n", file.c_str());
    return file;
  }

 private:
  struct TargetRow {
    std::string name;
    double value;
    std::string op;
    double target;
    std::string unit;
    bool met;
  };
  std::string name_;
  std::vector<std::pair<std::string, double>> numbers_;
  std::vector<std::pair<std::string, std::string>> notes_;
  std::vector<std::pair<std::string, std::vector<double>>> series_;
  std::vector<TargetRow> targets_;
};

}  // namespace capext::bench
