// Router: maps (method, request target) to what serves it. Pure and allocation-free per request.
//   POST {prefix}/filter|prioritize|preempt|bind  -> kVerb (batched to the BatchHandler)
//   GET  /healthz /readyz /metrics                -> built-in
//   GET  paths added with addGet (exact, or a subtree when the path ends in '/')
//   a known path with another method -> kMethodNotAllowed (+ Allow); anything else -> kNotFound.
// The query string is ignored for matching; absolute-form targets (http://host/path) match by path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/reactor/handler.h"

namespace fleetsched::engine {

constexpr size_t kVerbCount = 4;

// Normalises a configured URL prefix: keeps only the path of a full URL, ensures a leading '/',
// trims trailing '/'. "" and "/" both mean "no prefix".
std::string normalizePrefix(std::string_view prefix);

class Router {
 public:
  enum class Kind : uint8_t { kVerb, kHealthz, kReadyz, kMetrics, kCustom, kNotFound, kMethodNotAllowed };
  struct Match {
    Kind kind = Kind::kNotFound;
    Verb verb = Verb::Filter;
    uint32_t custom = 0;     // index given by addGet, for kCustom
    std::string_view allow;  // for kMethodNotAllowed
  };

  explicit Router(std::string_view prefix = {});

  // Registers a GET path; returns its index (reported in Match::custom).
  uint32_t addGet(std::string path);

  // method is an llhttp_method_t value.
  Match match(uint8_t method, std::string_view target) const;

  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
  std::string verbPaths_[kVerbCount];
  std::vector<std::string> gets_;
};

}  // namespace fleetsched::engine
