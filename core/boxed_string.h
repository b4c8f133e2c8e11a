// BoxedString: a string member kept out of line, for types stored once per tracked object whose
// string is usually empty (a tracked pod's nomination, reclaim record, scheduler name, ...). It
// takes 8 bytes in its owner where a std::string takes 32, and allocates only when not empty;
// the guide allows a tracked pod less than 1 KiB of heap, and most of a bound pod's rarely set
// strings are empty. Reads see a `const std::string&` (an empty one when nothing is stored).
// Thread-safety: a value type.
#pragma once

#include <compare>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace capext {

class BoxedString {
 public:
  BoxedString() = default;
  // Implicit, as assignment and initialisation from text are what its owners do.
  BoxedString(std::string text) { assign(std::move(text)); }         // NOLINT(runtime/explicit)
  BoxedString(std::string_view text) { assign(std::string(text)); }  // NOLINT(runtime/explicit)
  BoxedString(const char* text) { assign(std::string(text)); }       // NOLINT(runtime/explicit)
  BoxedString(const BoxedString& other) { assign(other.str()); }
  BoxedString(BoxedString&&) noexcept = default;
  BoxedString& operator=(const BoxedString& other) {
    if (this != &other) assign(other.str());
    return *this;
  }
  BoxedString& operator=(BoxedString&&) noexcept = default;
  ~BoxedString() = default;

  void assign(std::string text) {
    if (text.empty()) {
      box_.reset();
    } else if (box_) {
      *box_ = std::move(text);
    } else {
      box_ = std::make_unique<std::string>(std::move(text));
    }
  }

  // The text; the same empty string for every empty BoxedString.
  const std::string& str() const { return box_ ? *box_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT(runtime/explicit)
  operator std::string_view() const { return str(); }    // NOLINT(runtime/explicit)

  bool empty() const { return box_ == nullptr; }  // invariant: a box is never empty
  std::size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }
  const char* data() const { return str().data(); }
  void clear() { box_.reset(); }

  friend bool operator==(const BoxedString& a, const BoxedString& b) { return a.str() == b.str(); }
  friend bool operator==(const BoxedString& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const BoxedString& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const BoxedString& a, const char* b) { return a.str() == b; }
  friend std::strong_ordering operator<=>(const BoxedString& a, const BoxedString& b) {
    return a.str() <=> b.str();
  }
  friend std::strong_ordering operator<=>(const BoxedString& a, std::string_view b) {
    return std::string_view(a.str()) <=> b;
  }
  friend std::strong_ordering operator<=>(const BoxedString& a, const std::string& b) {
    return a.str() <=> b;
  }

 private:
  static const std::string& Empty() {
    static const std::string kEmpty;
    return kEmpty;
  }
  std::unique_ptr<std::string> box_;
};

}  // namespace capext

template <>
struct fmt::formatter<capext::BoxedString> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const capext::BoxedString& text, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(text.str()), ctx);
  }
};
