// The labels and annotations fleetsched defines on pods (documented in docs/annotations.md); the
// ones the cache reads too are read in plugins/interpretation.h. Node-side labels come from the
// cloud providers and GPU feature discovery and are settings of a plugins::Interpretation.
#pragma once

#include <string_view>

namespace fleetsched::plugins::annotations {

// Per-GPU share for a pod that requests one GPU it can share: "250" = a quarter GPU (milli).
constexpr std::string_view kGpuMilli = "fleetsched.io/gpu-milli";
// Allowed GPU models, '|'-separated, each an exact value of the GPU plugin's productLabel
// (default nvidia.com/gpu.product):
// "NVIDIA-A100-SXM4-80GB|NVIDIA-H100-80GB-HBM3".
constexpr std::string_view kGpuModels = "fleetsched.io/gpu-models";
// Minimum memory per GPU in MiB: "40000".
constexpr std::string_view kGpuMinMemory = "fleetsched.io/gpu-min-memory";
// Per-pod override of the GPU placement policy: "binpack" or "spread".
constexpr std::string_view kGpuPolicy = "fleetsched.io/gpu-policy";
// Spot tolerance: "true" lets the pod run on spot capacity (a toleration of the
// fleetsched.io/spot key does the same).
constexpr std::string_view kSpotTolerant = "fleetsched.io/spot-tolerant";
constexpr std::string_view kSpotTolerationKey = "fleetsched.io/spot";
// Per-pod override of the zone policy: "spread" or "pack".
constexpr std::string_view kZonePolicy = "fleetsched.io/zone-policy";
// Workload key for zone spreading/packing when no controller owner reference fits.
constexpr std::string_view kWorkloadLabel = "fleetsched.io/workload";
// Written by the binder: the GPU indexes a pod was given, dash-separated ("0-1-3").
constexpr std::string_view kGpuIndex = "fleetsched.io/gpu-index";
// Written by the binder: when the pod was assumed, wall-clock Unix nanoseconds, for the device
// plugin handoff (cache::bindingAnnotations writes both, for every deployment).
constexpr std::string_view kAssumeTime = "fleetsched.io/assume-time";

}  // namespace fleetsched::plugins::annotations
