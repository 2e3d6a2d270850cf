// GPU plugin: GPU feasibility (resource present, enough free, allowed model, enough memory per
// GPU) and GPU-aware scoring (more memory per GPU, blended with binpack or spread over free
// GPUs; CPU-only pods steered off GPU nodes). Args are documented in docs/configuration.md.
//
// Verdicts: no GPU resource on the node, a disallowed model, too little memory per GPU, or
// fewer GPUs in total than the pod asks for → UnschedulableAndUnresolvable; not enough free
// right now → Unschedulable (preemption may help).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "plugins/framework.h"
#include "plugins/interpretation.h"

namespace fleetsched::plugins::gpu {

constexpr std::string_view kName = "GPU";

enum class Policy : uint8_t { Binpack, Spread };

struct Args {
  GpuResourceConfig resources;            // resourceNames
  Policy policy = Policy::Binpack;        // policy: binpack | spread
  int32_t memoryWeight = 1;               // memoryWeight: share of "more memory per GPU" in the score
  int32_t policyWeight = 3;               // policyWeight: share of binpack/spread in the score
  bool steerCpuPods = true;               // steerCpuPods: CPU-only pods prefer nodes without GPUs
  // countWholeDevices: with per-GPU accounting, also hold the pod to the node's free count of its
  // GPU resource, as kube-scheduler's own resource fit does (a shared pod takes a whole unit).
  // Turn off when managedResources sets ignoredByScheduler: fleetsched is then the only judge.
  bool countWholeDevices = true;
  std::string productLabel{kDefaultGpuProductLabel};  // productLabel: selector key naming the GPU model
};

std::optional<Args> parseArgs(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> create(const Args& args);
std::unique_ptr<Plugin> createFromYaml(const YAML::Node& args, std::string& error);

}  // namespace fleetsched::plugins::gpu
