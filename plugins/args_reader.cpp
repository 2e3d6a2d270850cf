#include "plugins/args_reader.h"

namespace fleetsched::plugins {

ArgsReader::ArgsReader(const YAML::Node& args) : args_(args) {
  if (args_.IsDefined() && !args_.IsNull() && !args_.IsMap()) error_ = "args: want a map";
}

std::optional<YAML::Node> ArgsReader::find(std::string_view key) {
  known_.emplace_back(key);
  if (!error_.empty() || !args_.IsMap()) return std::nullopt;
  for (auto it = args_.begin(); it != args_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return std::nullopt;
}

void ArgsReader::fail(std::string_view key, std::string message) {
  if (error_.empty()) error_ = std::string(key) + ": " + message;
}

void ArgsReader::getBool(std::string_view key, bool& out) {
  const std::optional<YAML::Node> n = find(key);
  if (!n) return;
  if (n->IsScalar()) {
    const std::string& s = n->Scalar();
    if (s == "true") { out = true; return; }
    if (s == "false") { out = false; return; }
  }
  fail(key, "want true or false");
}

void ArgsReader::getInt(std::string_view key, int64_t& out, int64_t min, int64_t max) {
  const std::optional<YAML::Node> n = find(key);
  if (!n) return;
  int64_t v = 0;
  bool ok = n->IsScalar();
  if (ok) {
    try {
      v = n->as<int64_t>();
    } catch (const YAML::Exception&) {
      ok = false;
    }
  }
  if (!ok || v < min || v > max) {
    fail(key, "want an integer in " + std::to_string(min) + ".." + std::to_string(max) +
                  (n->IsScalar() ? ", got \"" + n->Scalar() + "\"" : std::string()));
    return;
  }
  out = v;
}

void ArgsReader::getString(std::string_view key, std::string& out) {
  const std::optional<YAML::Node> n = find(key);
  if (!n) return;
  if (!n->IsScalar() || n->Scalar().empty()) {
    fail(key, "want a non-empty string");
    return;
  }
  out = n->Scalar();
}

void ArgsReader::getEnum(std::string_view key, std::string& out, std::initializer_list<std::string_view> allowed) {
  const std::optional<YAML::Node> n = find(key);
  if (!n) return;
  if (n->IsScalar()) {
    for (auto a : allowed) {
      if (n->Scalar() == a) {
        out = std::string(a);
        return;
      }
    }
  }
  std::string list;
  for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  fail(key, "want one of " + list + (n->IsScalar() ? ", got \"" + n->Scalar() + "\"" : std::string()));
}

void ArgsReader::getStringList(std::string_view key, std::vector<std::string>& out, bool nonEmpty) {
  const std::optional<YAML::Node> n = find(key);
  if (!n) return;
  if (!n->IsSequence()) {
    fail(key, "want a list of strings");
    return;
  }
  std::vector<std::string> v;
  for (const auto& item : *n) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      fail(key, "want a list of non-empty strings");
      return;
    }
    v.push_back(item.Scalar());
  }
  if (nonEmpty && v.empty()) {
    fail(key, "want at least one entry");
    return;
  }
  out = std::move(v);
}

bool ArgsReader::finish(std::string& error) {
  if (error_.empty() && args_.IsMap()) {
    for (auto it = args_.begin(); it != args_.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
      bool found = false;
      for (const auto& k : known_) found = found || k == key;
      if (!found) {
        std::string list;
        for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
        error_ = "unknown arg \"" + key + "\"" + (list.empty() ? " (this plugin takes no args)" : " (known: " + list + ")");
        break;
      }
    }
  }
  if (error_.empty()) return true;
  error = error_;
  return false;
}

}  // namespace fleetsched::plugins
