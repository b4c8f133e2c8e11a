// kSanitizerBuild: whether this build runs under AddressSanitizer or ThreadSanitizer. The tests
// that generate thousands of cases run fewer of them there (each case is 10-50 times slower).
// GCC says so with __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang only through
// __has_feature: checking one of them alone misses the other compiler's sanitizer builds.
#pragma once

namespace capext::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

}  // namespace capext::testing
