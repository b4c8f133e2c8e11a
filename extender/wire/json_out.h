// JsonOut: a RapidJSON Writer that writes straight into the std::string that becomes the HTTP
// response body (no intermediate StringBuffer and no copy at the end), with two fast paths for
// the extender's answers, which are mostly node names echoed back: strings that need no escaping
// are copied with memcpy, and a value rendered once (a reason shared by every node) can be
// repeated without escaping it again. The output is byte for byte what rapidjson::Writer writes.
// Thread-safety: a value type; one writer per response.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace capext {

// A RapidJSON output stream over a std::string it owns.
class StringSink {
 public:
  using Ch = char;

  StringSink() = default;
  StringSink(const StringSink&) = delete;
  StringSink& operator=(const StringSink&) = delete;

  void Put(char c) {
    if (next_ == end_) Grow(1);
    *next_++ = c;
  }
  void PutUnsafe(char c) { *next_++ = c; }
  void Reserve(std::size_t n) {
    if (static_cast<std::size_t>(end_ - next_) < n) Grow(n);
  }
  void Append(const char* data, std::size_t n) {
    Reserve(n);
    AppendUnsafe(data, n);
  }
  // Append() after a Reserve() that covers it; short strings are copied without a call.
  void AppendUnsafe(const char* data, std::size_t n) {
    if (n >= 16 && n <= 32) {
      std::memcpy(next_, data, 16);
      std::memcpy(next_ + n - 16, data + n - 16, 16);
    } else if (n >= 8 && n < 16) {
      std::memcpy(next_, data, 8);
      std::memcpy(next_ + n - 8, data + n - 8, 8);
    } else {
      std::memcpy(next_, data, n);
    }
    next_ += n;
  }
  void Flush() {}

  // The text written so far; the sink is empty afterwards.
  std::string Take() {
    buffer_.resize(static_cast<std::size_t>(next_ - buffer_.data()));
    std::string out = std::move(buffer_);
    buffer_.clear();
    next_ = end_ = buffer_.data();
    return out;
  }

 private:
  void Grow(std::size_t n) {
    const std::size_t used = static_cast<std::size_t>(next_ - buffer_.data());
    buffer_.resize(std::max({buffer_.size() * 2, used + n, std::size_t{4096}}));
    next_ = buffer_.data() + used;
    end_ = buffer_.data() + buffer_.size();
  }

  std::string buffer_;  // [data, next_) written, [next_, end_) spare
  char* next_ = buffer_.data();
  char* end_ = buffer_.data();
};

// Found by argument-dependent lookup from rapidjson::Writer (instead of its generic versions).
inline void PutReserve(StringSink& sink, std::size_t n) {
  sink.Reserve(n);
}
inline void PutUnsafe(StringSink& sink, char c) {
  sink.PutUnsafe(c);
}

namespace json_out_detail {
// Non-zero iff one of the 8 bytes of `w` is < 0x20, '"' or '\\' (the "has less than" and "has
// zero byte" bit tricks; bytes >= 0x80 never count, and borrows only ever add flags above a byte
// that is flagged anyway, so the any-byte answer is exact).
inline uint64_t EscapeCandidates(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  const uint64_t control = w - kOnes * 0x20;
  const uint64_t quote = (w ^ (kOnes * '"')) - kOnes;
  const uint64_t backslash = (w ^ (kOnes * '\\')) - kOnes;
  return (control | quote | backslash) & ~w & kHigh;
}
}  // namespace json_out_detail

// True when rapidjson::Writer would write `s` unchanged between quotes (no '"', '\\' or control
// character; other bytes, UTF-8 included, are copied as they are).
inline bool NeedsNoEscape(std::string_view s) {
  const char* p = s.data();
  const std::size_t n = s.size();
  if (n >= 8) {
    uint64_t flagged = 0;
    uint64_t w;
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&w, p + i, 8);
      flagged |= json_out_detail::EscapeCandidates(w);
    }
    std::memcpy(&w, p + n - 8, 8);
    flagged |= json_out_detail::EscapeCandidates(w);
    return flagged == 0;
  }
  bool escape = false;
  for (unsigned char c : s)
    escape |= (c < 0x20) | (c == '"') | (c == '\\');
  return !escape;
}

namespace json_out_detail {
struct SinkHolder {
  StringSink sink;
};
}  // namespace json_out_detail

class JsonOut : private json_out_detail::SinkHolder, public rapidjson::Writer<StringSink> {
 public:
  JsonOut() : SinkHolder(), Writer(sink) {}

  // String() / Key() with the memcpy fast path.
  bool Text(std::string_view s) {
    if (!NeedsNoEscape(s)) return String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    Prefix(rapidjson::kStringType);
    Quoted(s);
    return EndValue(true);
  }
  bool KeyText(std::string_view s) {
    if (!NeedsNoEscape(s)) return Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    Prefix(rapidjson::kStringType);
    Quoted(s);
    return EndValue(true);
  }
  // An array of the strings of `items` for which keep(index) is true, written in one go (the
  // same text as StartArray, String for each, EndArray).
  template <typename Keep>
  bool TextArray(const std::vector<std::string_view>& items, Keep&& keep) {
    Prefix(rapidjson::kArrayType);
    sink.Put('[');
    bool first = true;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!keep(i)) continue;
      const std::string_view s = items[i];
      if (NeedsNoEscape(s)) {
        sink.Reserve(s.size() + 3);
        if (!first) sink.PutUnsafe(',');
        sink.PutUnsafe('"');
        sink.AppendUnsafe(s.data(), s.size());
        sink.PutUnsafe('"');
      } else {
        if (!first) sink.Put(',');
        const std::string rendered = RenderOne(s);
        sink.Append(rendered.data(), rendered.size());
      }
      first = false;
    }
    sink.Put(']');
    return EndValue(true);
  }

  // A string value rendered once by RenderString(), written again as it is.
  bool RenderedString(std::string_view rendered) {
    Prefix(rapidjson::kStringType);
    sink.Append(rendered.data(), rendered.size());
    return EndValue(true);
  }

  // Makes room for `n` more bytes at once (saves regrowing when the size is known roughly).
  void Reserve(std::size_t n) { sink.Reserve(n); }

  // The document written so far (call once, after the root value is complete).
  std::string Take() { return sink.Take(); }

 private:
  static std::string RenderOne(std::string_view s) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return std::string(buffer.GetString(), buffer.GetSize());
  }

  void Quoted(std::string_view s) {
    sink.Reserve(s.size() + 2);
    sink.PutUnsafe('"');
    sink.AppendUnsafe(s.data(), s.size());
    sink.PutUnsafe('"');
  }
};

// `s` as a JSON string value (quotes and escapes included), for JsonOut::RenderedString.
inline std::string RenderString(std::string_view s) {
  JsonOut w;
  w.Text(s);
  return w.Take();
}

}  // namespace capext
