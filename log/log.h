// One logger for the whole process, in the format of Kubernetes components (klog):
//
//   text (default)  I1206 02:41:25.570554    3576 serve.cpp:502] "message" key="value" count=3
//   json            {"ts":1733452885.570554,"caller":"serve.cpp:502","msg":"message","v":0,"key":"value","count":3}
//
// Text: severity letter (I, W, E), month and day, local time with microseconds, the thread id
// (the process id on the main thread), source file:line, the message quoted, then key=value pairs
// with strings quoted and escaped as Go's %q does (\" \\ \n \t \r, other control bytes \xNN), so
// one line is one entry whatever a value holds. JSON: one object a line; info and warning lines
// carry "v" (their verbosity level), error lines carry the error as "err"; strings escaped as
// JSON requires (control bytes \u00XX, invalid UTF-8 bytes as \ufffd).
//
//   FLOG_INFO("reloaded").kv("nodes", n).kv("pods", p);
//   FLOG_ERROR("audit failed").err(message);
//   FLOG_V(4, "filter").kv("pod", name);  // only at -v=4 or more
//
// The line is written when the full expression ends (one write(2) to stderr, or the sink set
// with setSink). FLOG_V checks the level with one relaxed load before anything else: when the
// level is above -v nothing after the macro is evaluated, formatted or allocated.
//
// setFormat, setVerbosity and setSink are for start-up (and tests), before other threads log.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace fleetsched::log {

enum class Format : uint8_t { kText, kJson };
enum class Severity : uint8_t { kInfo, kWarning, kError };

namespace detail {
inline std::atomic<int> verbosity{0};
}  // namespace detail

// Lines at `level` are written when level <= verbosity (-v). Levels are >= 0; FLOG_INFO is 0.
inline bool enabled(int level) { return level <= detail::verbosity.load(std::memory_order_relaxed); }
void setVerbosity(int v);
int verbosity();

void setFormat(Format f);
Format format();
// "text" or "json"; false for anything else.
bool parseFormat(std::string_view name, Format& out);

// Where finished lines go (each ends in '\n'); nullptr: stderr. For tests.
using Sink = void (*)(std::string_view line, void* context);
void setSink(Sink sink, void* context);

// printf into a std::string: for messages that keep values in their text.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Appends `s` quoted and escaped as in text lines (Go's %q for ASCII; bytes >= 0x80 as they are).
void appendQuoted(std::string& out, std::string_view s);
// Appends `s` as a JSON string (quotes included).
void appendJsonString(std::string& out, std::string_view s);

class Line {
 public:
  Line(Severity severity, int level, const char* file, int line, std::string_view message);
  ~Line();
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  Line& kv(std::string_view key, std::string_view value);
  Line& kv(std::string_view key, const char* value) { return kv(key, std::string_view(value)); }
  Line& kv(std::string_view key, const std::string& value) { return kv(key, std::string_view(value)); }
  Line& kv(std::string_view key, bool value);
  Line& kv(std::string_view key, double value);
  template <std::signed_integral T>
  Line& kv(std::string_view key, T value) {
    return int64(key, static_cast<int64_t>(value));
  }
  template <std::unsigned_integral T>
    requires(!std::same_as<T, bool>)
  Line& kv(std::string_view key, T value) {
    return uint64(key, static_cast<uint64_t>(value));
  }
  // A value already rendered as JSON (an object or array), written as is in both formats.
  Line& kvJson(std::string_view key, std::string_view json);
  // The error: key "err".
  Line& err(std::string_view message) { return kv("err", message); }

 private:
  Line& int64(std::string_view key, int64_t v);
  Line& uint64(std::string_view key, uint64_t v);
  void key(std::string_view k);

  std::string buf_;
  Format format_;
};

}  // namespace fleetsched::log

#define FLOG_AT_(severity, level, message) \
  ::fleetsched::log::Line(::fleetsched::log::Severity::severity, level, __FILE__, __LINE__, message)
#define FLOG_INFO(message) FLOG_AT_(kInfo, 0, message)
#define FLOG_WARNING(message) FLOG_AT_(kWarning, 0, message)
#define FLOG_ERROR(message) FLOG_AT_(kError, 0, message)
// An info line at verbosity `level`: nothing is evaluated unless -v >= level.
#define FLOG_V(level, message)                  \
  if (!::fleetsched::log::enabled(level)) {     \
  } else                                        \
    FLOG_AT_(kInfo, level, message)
