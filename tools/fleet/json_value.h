// A tiny ordered JSON tree used only to generate fixtures. Struct-shaped objects keep their
// members in insertion order (Go's json.Marshal writes struct fields in declaration order);
// map-shaped objects (labels, annotations, resource lists) are always written with sorted keys,
// as Go sorts map keys. Writing with Style::kKubectl sorts every object and indents by four
// spaces, which is what `kubectl get -o json` prints (it goes through unstructured maps).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fleetsched::tools::fleet {

class JsonValue {
 public:
  enum class Kind : uint8_t { Null, Bool, Int, String, Array, Object };
  enum class Style : uint8_t {
    kWire,     // compact, struct order: json.Marshal of typed objects (kube-scheduler)
    kKubectl,  // every key sorted, four-space indent: kubectl get -o json
    kSorted,   // every key sorted, compact
  };

  JsonValue() = default;
  static JsonValue null() { return JsonValue(); }
  static JsonValue boolean(bool b);
  static JsonValue integer(int64_t i);
  static JsonValue string(std::string s);
  static JsonValue array();
  static JsonValue object();  // struct: insertion order in kWire
  static JsonValue map();     // Go map: sorted keys in every style

  Kind kind() const { return kind_; }

  // Object members; returns *this so struct literals chain. Keys are not checked for
  // duplicates: the generator writes each key once.
  JsonValue& set(std::string key, JsonValue v);
  JsonValue& set(std::string key, std::string_view s) { return set(std::move(key), string(std::string(s))); }
  JsonValue& set(std::string key, const char* s) { return set(std::move(key), string(s)); }
  JsonValue& setInt(std::string key, int64_t i) { return set(std::move(key), integer(i)); }
  JsonValue& setBool(std::string key, bool b) { return set(std::move(key), boolean(b)); }
  JsonValue& push(JsonValue v);
  JsonValue& push(std::string_view s) { return push(string(std::string(s))); }

  size_t size() const { return kind_ == Kind::Array ? items_.size() : members_.size(); }
  // Member lookup for tests and summaries; nullptr when absent or not an object.
  const JsonValue* find(std::string_view key) const;
  const std::string& str() const { return s_; }

  void write(std::string& out, Style style = Style::kWire) const;
  std::string dump(Style style = Style::kWire) const {
    std::string out;
    write(out, style);
    return out;
  }

 private:
  void writeIndented(std::string& out, Style style, int depth) const;

  Kind kind_ = Kind::Null;
  bool sorted_ = false;  // Go map
  bool b_ = false;
  int64_t i_ = 0;
  std::string s_;
  std::vector<std::pair<std::string, JsonValue>> members_;
  std::vector<JsonValue> items_;
};

// Appends `s` as a JSON string literal escaped the way Go's encoding/json does (including its
// HTML-safe escapes of <, > and &).
void appendJsonString(std::string& out, std::string_view s);

}  // namespace fleetsched::tools::fleet
