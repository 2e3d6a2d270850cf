#include "plugins/pod_info.h"

#include <limits>

#include "plugins/annotations.h"

namespace fleetsched::plugins {

std::string_view GpuResourceConfig::primary() const {
  for (const auto& n : resourceNames) {
    if (!isPrefix(n)) return n;
  }
  return {};
}

bool GpuResourceConfig::matches(std::string_view name, std::string_view resource) {
  if (isPrefix(name)) return resource.size() > name.size() && resource.starts_with(name);
  return resource == name;
}

bool parseDecimal(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;  // 18 digits cannot overflow int64
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

Status derivePodInfo(const codec::Pod& pod, const GpuResourceConfig& config, PodInfo& out) {
  out = PodInfo{};
  out.pod = &pod;
  out.milliCpu = pod.requests.milliCpu;
  out.memory = pod.requests.memory;

  // First configured name wins, so "nvidia.com/gpu" listed before "nvidia.com/mig-" decides
  // which one a pod asking for both is scheduled by.
  for (const auto& name : config.resourceNames) {
    for (const auto& r : pod.requests.scalar) {
      if (r.value > 0 && GpuResourceConfig::matches(name, r.name)) {
        out.gpuResource = r.name;
        out.gpuCount = r.value > std::numeric_limits<int32_t>::max() ? std::numeric_limits<int32_t>::max()
                                                                     : static_cast<int32_t>(r.value);
        break;
      }
    }
    if (out.gpuCount > 0) break;
  }

  const std::string_view* milli = codec::findKey(pod.annotations, annotations::kGpuMilli);
  if (milli == nullptr) {
    out.gpuMilli = out.gpuCount > 0 ? kMilliPerGpu : 0;
    return {};
  }
  int64_t m = 0;
  if (!parseDecimal(*milli, m) || m < 1 || m > kMilliPerGpu) {
    return {Code::UnschedulableAndUnresolvable,
            "invalid annotation fleetsched.io/gpu-milli: want an integer 1..1000 (milli-GPU)"};
  }
  if (out.gpuCount != 1) {
    return {Code::UnschedulableAndUnresolvable,
            "annotation fleetsched.io/gpu-milli needs a request of exactly 1 GPU"};
  }
  out.gpuMilli = static_cast<int32_t>(m);
  return {};
}

}  // namespace fleetsched::plugins
