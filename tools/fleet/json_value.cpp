#include "tools/fleet/json_value.h"

#include <algorithm>
#include <numeric>

namespace fleetsched::tools::fleet {

JsonValue JsonValue::boolean(bool b) {
  JsonValue v;
  v.kind_ = Kind::Bool;
  v.b_ = b;
  return v;
}

JsonValue JsonValue::integer(int64_t i) {
  JsonValue v;
  v.kind_ = Kind::Int;
  v.i_ = i;
  return v;
}

JsonValue JsonValue::string(std::string s) {
  JsonValue v;
  v.kind_ = Kind::String;
  v.s_ = std::move(s);
  return v;
}

JsonValue JsonValue::array() {
  JsonValue v;
  v.kind_ = Kind::Array;
  return v;
}

JsonValue JsonValue::object() {
  JsonValue v;
  v.kind_ = Kind::Object;
  return v;
}

JsonValue JsonValue::map() {
  JsonValue v = object();
  v.sorted_ = true;
  return v;
}

JsonValue& JsonValue::set(std::string key, JsonValue v) {
  members_.emplace_back(std::move(key), std::move(v));
  return *this;
}

JsonValue& JsonValue::push(JsonValue v) {
  items_.push_back(std::move(v));
  return *this;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (kind_ != Kind::Object) return nullptr;
  for (const auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

void appendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == '<' || c == '>' || c == '&') {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

namespace {

void newline(std::string& out, int depth) {
  out.push_back('\n');
  out.append(static_cast<size_t>(depth) * 4, ' ');
}

}  // namespace

void JsonValue::write(std::string& out, Style style) const { writeIndented(out, style, 0); }

void JsonValue::writeIndented(std::string& out, Style style, int depth) const {
  const bool pretty = style == Style::kKubectl;
  switch (kind_) {
    case Kind::Null: out += "null"; return;
    case Kind::Bool: out += b_ ? "true" : "false"; return;
    case Kind::Int: out += std::to_string(i_); return;
    case Kind::String: appendJsonString(out, s_); return;
    case Kind::Array:
      if (items_.empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out.push_back(',');
        if (pretty) newline(out, depth + 1);
        items_[i].writeIndented(out, style, depth + 1);
      }
      if (pretty) newline(out, depth);
      out.push_back(']');
      return;
    case Kind::Object: {
      if (members_.empty()) {
        out += "{}";
        return;
      }
      std::vector<size_t> order(members_.size());
      std::iota(order.begin(), order.end(), size_t{0});
      if (sorted_ || style != Style::kWire) {
        std::sort(order.begin(), order.end(),
                  [&](size_t a, size_t b) { return members_[a].first < members_[b].first; });
      }
      out.push_back('{');
      bool first = true;
      for (size_t i : order) {
        if (!first) out.push_back(',');
        first = false;
        if (pretty) newline(out, depth + 1);
        appendJsonString(out, members_[i].first);
        out += pretty ? ": " : ":";
        members_[i].second.writeIndented(out, style, depth + 1);
      }
      if (pretty) newline(out, depth);
      out.push_back('}');
      return;
    }
  }
}

}  // namespace fleetsched::tools::fleet
