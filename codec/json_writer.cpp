#include "codec/json_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

namespace fleetsched::codec {

namespace {

// 0: copy as is. 1: needs escaping (ASCII). 2: start of a multi-byte sequence to validate.
constexpr std::array<uint8_t, 256> makeClassTable() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 1;
  t['"'] = 1;
  t['\\'] = 1;
  t['<'] = 1;
  t['>'] = 1;
  t['&'] = 1;
  for (int c = 0x80; c < 0x100; ++c) t[c] = 2;
  return t;
}
constexpr std::array<uint8_t, 256> kClass = makeClassTable();
constexpr char kHex[] = "0123456789abcdef";

// Decodes one UTF-8 sequence at s[i] like Go's utf8.DecodeRune: returns its length, or 0 when
// the bytes are not valid UTF-8 (overlong, surrogate, above U+10FFFF, truncated).
size_t decodeRune(std::string_view s, size_t i, uint32_t& rune) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  size_t left = s.size() - i;
  uint8_t c0 = b(0);
  auto cont = [](uint8_t c) { return (c & 0xC0) == 0x80; };
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    if (left < 2 || !cont(b(1))) return 0;
    rune = ((c0 & 0x1Fu) << 6) | (b(1) & 0x3Fu);
    return 2;
  }
  if (c0 >= 0xE0 && c0 <= 0xEF) {
    if (left < 3 || !cont(b(1)) || !cont(b(2))) return 0;
    if (c0 == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c0 == 0xED && b(1) > 0x9F) return 0;  // surrogate
    rune = ((c0 & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
    return 3;
  }
  if (c0 >= 0xF0 && c0 <= 0xF4) {
    if (left < 4 || !cont(b(1)) || !cont(b(2)) || !cont(b(3))) return 0;
    if (c0 == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c0 == 0xF4 && b(1) > 0x8F) return 0;  // above U+10FFFF
    rune = ((c0 & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
    return 4;
  }
  return 0;
}

// True when any of the 8 bytes of w needs escaping or UTF-8 checking: a control byte, '"',
// '\\', '<', '>', '&' or a byte >= 0x80 (SWAR: one pass per word instead of eight lookups).
inline bool wordNeedsWork(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto hasZero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  uint64_t control = (w - kOnes * 0x20) & ~w & kHigh;
  return ((w & kHigh) | control | hasZero(w ^ (kOnes * '"')) | hasZero(w ^ (kOnes * '\\')) |
          hasZero(w ^ (kOnes * '<')) | hasZero(w ^ (kOnes * '>')) | hasZero(w ^ (kOnes * '&'))) != 0;
}

}  // namespace

template <class Out>
void JsonWriter<Out>::grow(size_t n) {
  // Use the capacity the caller reserved before doubling.
  size_t want = std::max(len_ + n, out_.capacity());
  if (want < out_.size() * 2) want = out_.size() * 2;
  setSize(out_, std::max<size_t>(want, 256));
}

template <class Out>
void JsonWriter<Out>::int64(int64_t v) {
  char* p = reserve(24);
  auto r = std::to_chars(p, p + 24, v);
  len_ += static_cast<size_t>(r.ptr - p);
}

template <class Out>
void JsonWriter<Out>::string(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  for (uint64_t w; i + 8 <= n; i += 8) {
    std::memcpy(&w, s.data() + i, 8);
    if (wordNeedsWork(w)) break;
  }
  while (i < n && kClass[static_cast<uint8_t>(s[i])] == 0) ++i;
  if (i == n) {
    char* p = reserve(n + 2);
    p[0] = '"';
    if (n != 0) std::memcpy(p + 1, s.data(), n);  // an empty view may have no bytes (nullptr)
    p[n + 1] = '"';
    len_ += n + 2;
    return;
  }
  ch('"');
  escapeSlow(s, i);
  ch('"');
}

template <class Out>
void JsonWriter<Out>::escapeSlow(std::string_view s, size_t i) {
  size_t start = 0;
  const size_t n = s.size();
  while (i < n) {
    uint8_t c = static_cast<uint8_t>(s[i]);
    uint8_t cls = kClass[c];
    if (cls == 0) {
      ++i;
      continue;
    }
    if (cls == 1) {
      raw(s.substr(start, i - start));
      switch (c) {
        case '"': raw("\\\""); break;
        case '\\': raw("\\\\"); break;
        case '\b': raw("\\b"); break;
        case '\f': raw("\\f"); break;
        case '\n': raw("\\n"); break;
        case '\r': raw("\\r"); break;
        case '\t': raw("\\t"); break;
        default: {
          char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
          raw(std::string_view(u, 6));
        }
      }
      start = ++i;
      continue;
    }
    uint32_t rune = 0;
    size_t len = decodeRune(s, i, rune);
    if (len == 0) {
      raw(s.substr(start, i - start));
      raw("\\ufffd");
      start = ++i;
      continue;
    }
    if (rune == 0x2028 || rune == 0x2029) {
      raw(s.substr(start, i - start));
      raw(rune == 0x2028 ? "\\u2028" : "\\u2029");
      i += len;
      start = i;
      continue;
    }
    i += len;
  }
  raw(s.substr(start));
}

template class JsonWriter<std::string>;
template class JsonWriter<Buffer>;

}  // namespace fleetsched::codec
