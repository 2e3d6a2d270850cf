#include "codec/json_writer.h"

#include <array>
#include <charconv>

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

}  // namespace

void JsonWriter::int64(int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, static_cast<size_t>(r.ptr - buf));
}

void JsonWriter::string(std::string_view s) {
  out_.push_back('"');
  size_t i = 0;
  const size_t n = s.size();
  while (i < n && kClass[static_cast<uint8_t>(s[i])] == 0) ++i;
  if (i == n) {
    out_.append(s);
  } else {
    escapeSlow(s, i);
  }
  out_.push_back('"');
}

void JsonWriter::escapeSlow(std::string_view s, size_t i) {
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
      out_.append(s.data() + start, i - start);
      switch (c) {
        case '"': out_.append("\\\"", 2); break;
        case '\\': out_.append("\\\\", 2); break;
        case '\b': out_.append("\\b", 2); break;
        case '\f': out_.append("\\f", 2); break;
        case '\n': out_.append("\\n", 2); break;
        case '\r': out_.append("\\r", 2); break;
        case '\t': out_.append("\\t", 2); break;
        default: {
          char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
          out_.append(u, 6);
        }
      }
      start = ++i;
      continue;
    }
    uint32_t rune = 0;
    size_t len = decodeRune(s, i, rune);
    if (len == 0) {
      out_.append(s.data() + start, i - start);
      out_.append("\\ufffd", 6);
      start = ++i;
      continue;
    }
    if (rune == 0x2028 || rune == 0x2029) {
      out_.append(s.data() + start, i - start);
      out_.append(rune == 0x2028 ? "\\u2028" : "\\u2029", 6);
      i += len;
      start = i;
      continue;
    }
    i += len;
  }
  out_.append(s.data() + start, n - start);
}

}  // namespace fleetsched::codec
