// Fit plugin: cpu, memory and pod-count feasibility (allocatable minus used ≥ request), with
// kube-scheduler's reasons ("Insufficient cpu", "Insufficient memory", "Too many pods"). Not
// in the default profile — kube-scheduler's NodeResourcesFit already runs before the extender —
// but replay and full-Nodes mode need it. A request larger than the node's allocatable is
// UnschedulableAndUnresolvable (preemption cannot help); otherwise Unschedulable. A node with
// allocPods == 0 has no pod limit recorded (trace replay) and is not checked for it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "plugins/framework.h"

namespace fleetsched::plugins::fit {

constexpr std::string_view kName = "Fit";

struct Args {};

std::optional<Args> parseArgs(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> create(const Args& args);
std::unique_ptr<Plugin> createFromYaml(const YAML::Node& args, std::string& error);

}  // namespace fleetsched::plugins::fit
