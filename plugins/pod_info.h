// derivePodInfo: what a pod asks for, read once per scheduling cycle from its effective requests
// and fleetsched's annotations (plugins/annotations.h).
//
// GPU resources are matched in the configured order: an entry is either an exact resource name
// ("nvidia.com/gpu") or, when it ends in '-' or '/', a prefix ("nvidia.com/mig-"). The first
// entry the pod requests a positive amount of wins. Per-GPU accounting (NodeInfo::gpuCount and
// gpuUsedMilli) describes the primary resource: the first exact name in the list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codec/model.h"
#include "plugins/framework.h"

namespace fleetsched::plugins {

struct GpuResourceConfig {
  std::vector<std::string> resourceNames{"nvidia.com/gpu"};

  // The first exact (non-prefix) name, or empty when every entry is a prefix.
  std::string_view primary() const;
  // True when `resource` matches entry `name` (exactly, or by prefix for prefix entries).
  static bool matches(std::string_view name, std::string_view resource);
  static bool isPrefix(std::string_view name) {
    return !name.empty() && (name.back() == '-' || name.back() == '/');
  }
};

// Fills `out` (pod, cpu, memory, GPU demand) and returns Success, or returns
// UnschedulableAndUnresolvable with a constant reason when an annotation is invalid: a
// fleetsched.io/gpu-milli outside 1..1000 or not an integer, or set on a pod that does not
// request exactly one GPU. Never allocates.
Status derivePodInfo(const codec::Pod& pod, const GpuResourceConfig& config, PodInfo& out);

// Parses a strictly decimal, non-negative integer ("250"); false on anything else or overflow.
bool parseDecimal(std::string_view s, int64_t& out);

}  // namespace fleetsched::plugins
