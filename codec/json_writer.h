// An append-only JSON writer into a caller-owned std::string, writing exactly the bytes Go's
// encoding/json (json.Marshal, HTML escaping on) writes: compact, strings escaped like Go
// (\" \\ \b \f \n \r \t, other control bytes and < > & as \u00XX, U+2028/U+2029 as \u2028 /
// \u2029, invalid UTF-8 bytes replaced by \ufffd), integers in plain decimal. The writer
// does not track nesting; callers emit commas (the encoders are short and fixed-shape).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fleetsched::codec {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void raw(std::string_view s) { out_.append(s); }
  void ch(char c) { out_.push_back(c); }
  void null() { out_.append("null", 4); }
  void boolean(bool b) { b ? out_.append("true", 4) : out_.append("false", 5); }
  void int64(int64_t v);
  // A quoted, Go-escaped string.
  void string(std::string_view s);
  // `"key":` for a key known to need no escaping (a Go field name).
  void key(std::string_view plainKey) {
    out_.push_back('"');
    out_.append(plainKey);
    out_.append("\":", 2);
  }

  std::string& out() { return out_; }

 private:
  void escapeSlow(std::string_view s, size_t from);
  std::string& out_;
};

}  // namespace fleetsched::codec
