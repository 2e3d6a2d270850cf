#include "log/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cmath>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace fleetsched::log {
namespace {

std::atomic<Format> gFormat{Format::kText};
std::atomic<Sink> gSink{nullptr};
std::atomic<void*> gSinkContext{nullptr};

constexpr char kHex[] = "0123456789abcdef";

int threadId() {
  thread_local const int id = static_cast<int>(::syscall(SYS_gettid));
  return id;
}

std::string_view baseName(const char* file) {
  const char* slash = std::strrchr(file, '/');
  return slash == nullptr ? std::string_view(file) : std::string_view(slash + 1);
}

void appendInt(std::string& out, int64_t v) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, end);
}

void appendUint(std::string& out, uint64_t v) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, end);
}

void appendDouble(std::string& out, double v, bool json) {
  if (!std::isfinite(v)) {  // NaN or infinite: JSON has no literal for them
    if (json) {
      out.append(v != v ? "\"NaN\"" : (v > 0 ? "\"+Inf\"" : "\"-Inf\""));
    } else {
      out.append(v != v ? "NaN" : (v > 0 ? "+Inf" : "-Inf"));
    }
    return;
  }
  char digits[32];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, end);
}

// Length of the valid UTF-8 sequence at s[i] (2..4), or 0 when the bytes there are not one.
size_t utf8Length(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp;
  if (b >= 0xc2 && b <= 0xdf) {
    n = 2;
    cp = b & 0x1f;
  } else if (b >= 0xe0 && b <= 0xef) {
    n = 3;
    cp = b & 0x0f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4;
    cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return n;
}

void write(std::string_view line) {
  if (Sink sink = gSink.load(std::memory_order_acquire)) {
    sink(line, gSinkContext.load(std::memory_order_relaxed));
    return;
  }
  // One write for the whole line, so lines of different threads do not interleave.
  while (!line.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    line.remove_prefix(static_cast<size_t>(n));
  }
}

// The escapes Go's %q and JSON share: quote, backslash, newline, carriage return, tab.
bool appendSharedEscape(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      out.append("\\\"");
      return true;
    case '\\':
      out.append("\\\\");
      return true;
    case '\n':
      out.append("\\n");
      return true;
    case '\r':
      out.append("\\r");
      return true;
    case '\t':
      out.append("\\t");
      return true;
    default:
      return false;
  }
}

}  // namespace

void setVerbosity(int v) { detail::verbosity.store(v < 0 ? 0 : v, std::memory_order_relaxed); }
int verbosity() { return detail::verbosity.load(std::memory_order_relaxed); }
void setFormat(Format f) { gFormat.store(f, std::memory_order_relaxed); }
Format format() { return gFormat.load(std::memory_order_relaxed); }

bool parseFormat(std::string_view name, Format& out) {
  if (name == "text") {
    out = Format::kText;
  } else if (name == "json") {
    out = Format::kJson;
  } else {
    return false;
  }
  return true;
}

void setSink(Sink sink, void* context) {
  gSinkContext.store(context, std::memory_order_relaxed);
  gSink.store(sink, std::memory_order_release);
}

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char small[256];
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(small, sizeof small, fmt, args);
  va_end(args);
  std::string out;
  if (n < 0) {
    va_end(again);
    return out;
  }
  if (static_cast<size_t>(n) < sizeof small) {
    out.assign(small, static_cast<size_t>(n));
  } else {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), fmt, again);
    out.resize(static_cast<size_t>(n));
  }
  va_end(again);
  return out;
}

void appendQuoted(std::string& out, std::string_view s) {
  out.push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (appendSharedEscape(out, c)) continue;
    switch (c) {
      case '\a':
        out.append("\\a");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\v':
        out.append("\\v");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out.append("\\x");
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

void appendJsonString(std::string& out, std::string_view s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      if (const size_t n = utf8Length(s, i)) {
        out.append(s.substr(i, n));
        i += n;
      } else {
        out.append("\\ufffd");
        ++i;
      }
      continue;
    }
    if (appendSharedEscape(out, c)) {
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      out.append("\\u00");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    } else {
      out.push_back(static_cast<char>(c));
    }
    ++i;
  }
  out.push_back('"');
}

Line::Line(Severity severity, int level, const char* file, int line, std::string_view message)
    : format_(format()) {
  buf_.reserve(160 + message.size());
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const std::string_view caller = baseName(file);
  if (format_ == Format::kJson) {
    char ts[48];
    const int n = std::snprintf(ts, sizeof ts, "{\"ts\":%lld.%06ld,\"caller\":\"", static_cast<long long>(now.tv_sec),
                                now.tv_nsec / 1000);
    buf_.append(ts, static_cast<size_t>(n));
    buf_.append(caller);  // a source file name: nothing to escape
    buf_.push_back(':');
    appendInt(buf_, line);
    buf_.append("\",\"msg\":");
    appendJsonString(buf_, message);
    if (severity != Severity::kError) {
      buf_.append(",\"v\":");
      appendInt(buf_, level);
    }
    return;
  }
  tm local{};
  localtime_r(&now.tv_sec, &local);
  const char letter = severity == Severity::kInfo ? 'I' : severity == Severity::kWarning ? 'W' : 'E';
  char head[64];
  const int n = std::snprintf(head, sizeof head, "%c%02d%02d %02d:%02d:%02d.%06ld %7d ", letter, local.tm_mon + 1,
                              local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec, now.tv_nsec / 1000, threadId());
  buf_.append(head, static_cast<size_t>(n));
  buf_.append(caller);
  buf_.push_back(':');
  appendInt(buf_, line);
  buf_.append("] ");
  appendQuoted(buf_, message);
}

Line::~Line() {
  buf_.append(format_ == Format::kJson ? "}\n" : "\n");
  write(buf_);
}

void Line::key(std::string_view k) {
  if (format_ == Format::kJson) {
    buf_.push_back(',');
    appendJsonString(buf_, k);
    buf_.push_back(':');
  } else {
    buf_.push_back(' ');
    buf_.append(k);
    buf_.push_back('=');
  }
}

Line& Line::kv(std::string_view k, std::string_view value) {
  key(k);
  if (format_ == Format::kJson) {
    appendJsonString(buf_, value);
  } else {
    appendQuoted(buf_, value);
  }
  return *this;
}

Line& Line::kv(std::string_view k, bool value) {
  key(k);
  buf_.append(value ? "true" : "false");
  return *this;
}

Line& Line::kv(std::string_view k, double value) {
  key(k);
  appendDouble(buf_, value, format_ == Format::kJson);
  return *this;
}

Line& Line::int64(std::string_view k, int64_t v) {
  key(k);
  appendInt(buf_, v);
  return *this;
}

Line& Line::uint64(std::string_view k, uint64_t v) {
  key(k);
  appendUint(buf_, v);
  return *this;
}

Line& Line::kvJson(std::string_view k, std::string_view json) {
  key(k);
  buf_.append(json);
  return *this;
}

}  // namespace fleetsched::log
