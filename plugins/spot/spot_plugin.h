// Spot plugin: keeps pods that do not declare spot tolerance off spot capacity (a filter:
// UnschedulableAndUnresolvable "node is spot capacity; pod is not spot-tolerant"), and scores
// the capacity type for tolerant pods: spot first (preferSpot, the default) or on-demand first
// so spot pools drain. Nodes of unknown capacity type count as on-demand.
//
// A pod is spot-tolerant when it carries fleetsched.io/spot-tolerant: "true", or a toleration
// whose key is one of `tolerationKeys` (fleetsched.io/spot and the providers' spot taints), or
// a toleration with an empty key and operator Exists (it tolerates every taint).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "plugins/framework.h"

namespace fleetsched::plugins::spot {

constexpr std::string_view kName = "Spot";
constexpr std::string_view kNotTolerant = "node is spot capacity; pod is not spot-tolerant";

struct Args {
  bool preferSpot = true;
  std::vector<std::string> tolerationKeys{"fleetsched.io/spot", "kubernetes.azure.com/scalesetpriority",
                                          "cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible"};
};

std::optional<Args> parseArgs(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> create(const Args& args);
std::unique_ptr<Plugin> createFromYaml(const YAML::Node& args, std::string& error);

// The tolerance rule above, exposed for the cache and the preemption path.
bool isSpotTolerant(const codec::Pod& pod, const std::vector<std::string>& tolerationKeys);

}  // namespace fleetsched::plugins::spot
