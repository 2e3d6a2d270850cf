// Zone plugin: scores zones for a pod's workload. `spread` (default, serving replicas): fewer
// pods of the workload in the node's zone → higher. `pack` (training gangs): more → higher; a
// workload with no placed pod yet packs toward the zone with the most free GPUs (free CPU for
// CPU-only pods) among the candidate nodes, so the rest of the gang finds room there. Scores
// are min–max scaled over the zones of the scored nodes; pods without a workload key, nodes
// without a zone, and workloads whose counts tie everywhere score neutrally (50).
// Per-pod override: annotation fleetsched.io/zone-policy = spread | pack. A pod's workload key is
// plugins::workloadKey over `workloadLabels`; the cache counts the pods of this plugin's profile
// under the same labels (plugins/interpretation.h).
//
// topologySpreadConstraints are not decoded by the codec yet, so pods carrying them are not
// detected; kube-scheduler's PodTopologySpread scores them too and spreading agrees with it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "plugins/framework.h"
#include "plugins/interpretation.h"

namespace fleetsched::plugins::zone {

constexpr std::string_view kName = "Zone";

enum class Policy : uint8_t { Spread, Pack };

struct Args {
  Policy policy = Policy::Spread;
  std::vector<std::string> workloadLabels{std::string(kDefaultWorkloadLabel)};
};

std::optional<Args> parseArgs(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> create(const Args& args);
std::unique_ptr<Plugin> createFromYaml(const YAML::Node& args, std::string& error);

}  // namespace fleetsched::plugins::zone
