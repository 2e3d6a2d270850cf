// An append-only JSON writer into a caller-owned std::string or codec::Buffer, writing exactly
// the bytes Go's encoding/json (json.Marshal, HTML escaping on) writes: compact, strings escaped like Go
// (\" \\ \b \f \n \r \t, other control bytes and < > & as \u00XX, U+2028/U+2029 as \u2028 /
// \u2029, invalid UTF-8 bytes replaced by \ufffd), integers in plain decimal. The writer
// does not track nesting; callers emit commas (the encoders are short and fixed-shape).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "codec/buffer.h"

namespace fleetsched::codec {

//
// For speed the writer grows its output ahead of what it has written and writes through a
// pointer: the output holds exactly what was written once the writer is destroyed or finish()
// has been called (writing may continue after finish()). Instantiated for std::string and
// Buffer (replies: growing a Buffer does not zero-fill).
template <class Out = std::string>
class JsonWriter {
 public:
  explicit JsonWriter(Out& out) : out_(out), len_(out.size()) {}
  ~JsonWriter() { finish(); }
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void finish() { setSize(out_, len_); }
  // Bytes of out_ written so far (the caller's prefix included).
  size_t size() const { return len_; }
  // Appends a copy of n bytes already written at offset `from` (e.g. a string escaped earlier).
  void repeat(size_t from, size_t n) {
    char* p = reserve(n);
    std::memcpy(p, out_.data() + from, n);
    len_ += n;
  }

  void raw(std::string_view s) {
    if (s.empty()) return;  // it may have no bytes (nullptr), which memcpy must not get
    std::memcpy(reserve(s.size()), s.data(), s.size());
    len_ += s.size();
  }
  void ch(char c) {
    *reserve(1) = c;
    ++len_;
  }
  void null() { raw("null"); }
  void boolean(bool b) { raw(b ? std::string_view("true") : std::string_view("false")); }
  void int64(int64_t v);
  // A quoted, Go-escaped string.
  void string(std::string_view s);
  // `"key":` for a key known to need no escaping (a Go field name).
  void key(std::string_view plainKey) {
    char* p = reserve(plainKey.size() + 3);
    p[0] = '"';
    std::memcpy(p + 1, plainKey.data(), plainKey.size());
    p[plainKey.size() + 1] = '"';
    p[plainKey.size() + 2] = ':';
    len_ += plainKey.size() + 3;
  }

 private:
  char* reserve(size_t n) {
    if (out_.size() - len_ < n) grow(n);
    return out_.data() + len_;
  }
  void grow(size_t n);
  void escapeSlow(std::string_view s, size_t from);
  static void setSize(std::string& s, size_t n) { s.resize(n); }
  static void setSize(Buffer& b, size_t n) { b.resizeUninitialized(n); }

  Out& out_;
  size_t len_;  // bytes written; out_.size() may be larger until finish()
};

extern template class JsonWriter<std::string>;
extern template class JsonWriter<Buffer>;

}  // namespace fleetsched::codec
