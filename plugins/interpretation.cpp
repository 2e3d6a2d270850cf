#include "plugins/interpretation.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "plugins/annotations.h"

namespace fleetsched::plugins {

static_assert(kDefaultWorkloadLabel == annotations::kWorkloadLabel);

// ---- pods ----------------------------------------------------------------------------------------

std::string_view GpuResourceConfig::primary() const {
  for (const auto& n : resourceNames) {
    if (!isPrefix(n)) return n;
  }
  return {};
}

bool GpuResourceConfig::counts(std::string_view resource) const {
  for (const auto& n : resourceNames) {
    if (matches(n, resource)) return true;
  }
  return false;
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

int32_t gpuMilliAnnotation(const codec::Pod& pod) {
  const std::string_view* v = codec::findKey(pod.annotations, annotations::kGpuMilli);
  if (v == nullptr) return 0;
  int64_t m = 0;
  if (!parseDecimal(*v, m) || m < 1 || m > kMilliPerGpu) return -1;
  return static_cast<int32_t>(m);
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

  const int32_t milli = gpuMilliAnnotation(pod);
  if (milli == 0) {
    out.gpuMilli = out.gpuCount > 0 ? kMilliPerGpu : 0;
    return {};
  }
  if (milli < 0) {
    return {Code::UnschedulableAndUnresolvable,
            "invalid annotation fleetsched.io/gpu-milli: want an integer 1..1000 (milli-GPU)"};
  }
  if (out.gpuCount != 1) {
    return {Code::UnschedulableAndUnresolvable,
            "annotation fleetsched.io/gpu-milli needs a request of exactly 1 GPU"};
  }
  out.gpuMilli = milli;
  return {};
}

bool parseGpuIndex(std::string_view s, uint16_t& mask) {
  mask = 0;
  uint16_t bits = 0;
  if (s.empty()) return false;
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    unsigned v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || next == p || v >= kMaxGpusPerNode) return false;
    bits = static_cast<uint16_t>(bits | (1U << v));
    p = next;
    if (p < end) {
      if (*p != '-' || p + 1 == end) return false;
      ++p;
    }
  }
  mask = bits;
  return true;
}

bool gpuIndexAnnotation(const codec::Pod& pod, uint16_t& mask) {
  mask = 0;
  const std::string_view* v = codec::findKey(pod.annotations, annotations::kGpuIndex);
  return v != nullptr && parseGpuIndex(*v, mask);
}

std::string formatGpuIndex(const GpuAssignment& gpus) {
  std::string out;
  for (uint8_t i = 0; i < gpus.count; ++i) {
    if (i) out.push_back('-');
    out += std::to_string(gpus.index[i]);
  }
  return out;
}

bool workloadKey(const codec::Pod& pod, std::span<const std::string> labels, std::string& out) {
  out.clear();
  if (const codec::OwnerReference* o = pod.controllerRef(); o != nullptr && !o->name.empty()) {
    out.append(pod.namespace_).append("/").append(o->kind).append("/").append(o->name);
    return true;
  }
  for (const auto& l : labels) {
    if (const auto* v = codec::findKey(pod.labels, l); v != nullptr && !v->empty()) {
      out.append(pod.namespace_).append("/label/").append(*v);
      return true;
    }
  }
  return false;
}

// ---- nodes ---------------------------------------------------------------------------------------

std::vector<CapacityLabelRule> defaultCapacityRules() {
  return {
      {"eks.amazonaws.com/capacityType", "SPOT", CapacityType::Spot},
      {"eks.amazonaws.com/capacityType", "ON_DEMAND", CapacityType::OnDemand},
      {"eks.amazonaws.com/capacityType", "CAPACITY_BLOCK", CapacityType::Reserved},
      {"karpenter.sh/capacity-type", "spot", CapacityType::Spot},
      {"karpenter.sh/capacity-type", "on-demand", CapacityType::OnDemand},
      {"karpenter.sh/capacity-type", "reserved", CapacityType::Reserved},
      {"cloud.google.com/gke-spot", "true", CapacityType::Spot},
      {"cloud.google.com/gke-preemptible", "true", CapacityType::Spot},
      {"kubernetes.azure.com/scalesetpriority", "spot", CapacityType::Spot},
      {"kubernetes.azure.com/scalesetpriority", "regular", CapacityType::OnDemand},
  };
}

namespace {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

int32_t parseGpuMemoryMiB(std::string_view value) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || n < 0) return 0;
  std::string_view suffix(p, value.data() + value.size() - p);
  // Result in bytes for suffixed values, then to MiB.
  int64_t mib = 0;
  constexpr int64_t kMiB = 1 << 20;
  if (suffix.empty()) {
    mib = n;
  } else if (suffix == "Ki") {
    mib = n / 1024;
  } else if (suffix == "Mi") {
    mib = n;
  } else if (suffix == "Gi") {
    mib = n * 1024;
  } else if (suffix == "Ti") {
    mib = n * 1024 * 1024;
  } else if (suffix == "K" || suffix == "k" || suffix == "KB") {
    mib = n * 1000 / kMiB;
  } else if (suffix == "M" || suffix == "MB") {
    mib = n * 1000 * 1000 / kMiB;
  } else if (suffix == "G" || suffix == "GB") {
    mib = n * 1000 * 1000 * 1000 / kMiB;
  } else if (suffix == "T" || suffix == "TB") {
    mib = n * 1000 * 1000 * 1000 * 1000 / kMiB;
  } else {
    return 0;
  }
  return static_cast<int32_t>(std::min<int64_t>(mib, INT32_MAX));
}

std::string_view Interpretation::zone(const std::vector<codec::KeyValue>& labels) const {
  for (const auto& label : zoneLabels) {
    if (const auto* v = codec::findKey(labels, label); v != nullptr && !v->empty()) return *v;
  }
  return {};
}

std::string_view Interpretation::gpuModel(const std::vector<codec::KeyValue>& labels) const {
  const auto* v = codec::findKey(labels, gpuProductLabel);
  return v != nullptr ? *v : std::string_view{};
}

int32_t Interpretation::gpuMemoryMiB(const std::vector<codec::KeyValue>& labels) const {
  // A label that is present but unparsable gives way to the next one.
  for (const auto& label : gpuMemoryLabels) {
    if (const auto* v = codec::findKey(labels, label); v != nullptr) {
      if (const int32_t mib = parseGpuMemoryMiB(*v); mib > 0) return mib;
    }
  }
  return 0;
}

CapacityType Interpretation::capacityType(const std::vector<codec::KeyValue>& labels) const {
  // Rules are grouped by label in table order; the first label present decides, so a node with
  // an unrecognised value of an earlier label does not fall through to a later provider's label.
  std::string_view decidedLabel;
  for (const auto& rule : capacityRules) {
    if (!decidedLabel.empty() && rule.label != decidedLabel) break;
    const std::string_view* v = codec::findKey(labels, rule.label);
    if (v == nullptr) continue;
    decidedLabel = rule.label;
    if (equalsIgnoreCase(*v, rule.value)) return rule.type;
  }
  return CapacityType::Unknown;
}

size_t Interpretation::profileIndex(std::string_view schedulerName) const {
  return profileIndexFor(schedulerName, profiles.size(),
                         [this](size_t i) -> std::string_view { return profiles[i].profile; });
}

bool Interpretation::workloadKey(const codec::Pod& pod, std::string& out) const {
  if (profiles.empty()) return plugins::workloadKey(pod, {}, out);
  const size_t i = profiles.size() == 1 ? 0 : profileIndex(pod.schedulerName);
  return plugins::workloadKey(pod, profiles[i].workloadLabels, out);
}

// ---- from profiles -------------------------------------------------------------------------------

bool interpretProfiles(std::span<ProfileSettings> profiles, Interpretation& out, std::string& error) {
  auto named = [&](size_t i) { return "profiles[" + std::to_string(i) + "] (" + profiles[i].name + ")"; };
  out = Interpretation{};
  out.profiles.clear();
  out.gpuResources.resourceNames.clear();

  // The per-GPU resource and the product label: the first profile with the GPU plugin that names
  // one sets it, the others must agree.
  size_t primaryFrom = SIZE_MAX, labelFrom = SIZE_MAX;
  std::string primary(kDefaultGpuResource);
  for (size_t i = 0; i < profiles.size(); ++i) {
    const ProfileSettings& p = profiles[i];
    if (!p.hasGpuPlugin) continue;
    if (labelFrom == SIZE_MAX) {
      labelFrom = i;
      out.gpuProductLabel = p.gpuProductLabel;
    } else if (p.gpuProductLabel != out.gpuProductLabel) {
      error = named(i) + ": GPU productLabel: " + p.gpuProductLabel + " differs from " + out.gpuProductLabel +
              " in " + named(labelFrom) +
              "; a node has one GPU model, read from one label, so every profile must name the same";
      return false;
    }
    const std::string_view own = p.gpuResources.primary();
    if (own.empty()) continue;
    if (primaryFrom == SIZE_MAX) {
      primaryFrom = i;
      primary.assign(own);
    } else if (own != primary) {
      error =
          named(i) + ": GPU resourceNames: the per-GPU resource (the first exact name) " + std::string(own) +
          " differs from " + primary + " in " + named(primaryFrom) +
          "; a node keeps per-GPU accounting for one resource, so every profile must list the same one first";
      return false;
    }
  }

  for (ProfileSettings& p : profiles) {
    if (!p.hasGpuPlugin) p.gpuResources.resourceNames = {primary};
    for (const std::string& name : p.gpuResources.resourceNames) {
      auto& names = out.gpuResources.resourceNames;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    out.profiles.push_back({p.name, p.workloadLabels});
  }
  if (out.profiles.empty()) out.profiles.push_back(ProfileReading{std::string(kDefaultProfileName)});
  return true;
}

}  // namespace fleetsched::plugins
