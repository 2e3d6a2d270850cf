// ArgsReader: strict, typed reading of one plugin's `args` map from the profile YAML. Absent
// keys keep the caller's default; wrong types, out-of-range values and unknown keys become one
// error message ("policy: want one of binpack, spread, got \"pack\""). Config loading only —
// never on the request path (yaml-cpp throws; the reader catches).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace fleetsched::plugins {

class ArgsReader {
 public:
  // `args` may be null/undefined (no args given) or a map; anything else is an error.
  explicit ArgsReader(const YAML::Node& args);

  void getBool(std::string_view key, bool& out);
  void getInt(std::string_view key, int64_t& out, int64_t min, int64_t max);
  // A non-empty string.
  void getString(std::string_view key, std::string& out);
  void getEnum(std::string_view key, std::string& out, std::initializer_list<std::string_view> allowed);
  // A list of non-empty strings; `nonEmpty` also rejects an empty list.
  void getStringList(std::string_view key, std::vector<std::string>& out, bool nonEmpty);

  // Reports unknown keys; returns false and sets `error` when anything failed.
  bool finish(std::string& error);

 private:
  std::optional<YAML::Node> find(std::string_view key);
  void fail(std::string_view key, std::string message);

  YAML::Node args_;
  std::vector<std::string> known_;
  std::string error_;
};

}  // namespace fleetsched::plugins
