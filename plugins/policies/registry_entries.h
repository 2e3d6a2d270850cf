// YAML factories of the placement policies for the plugins registry table (registry.cpp):
// Random {seed}, DotProduct, GpuClustering, GpuPacking, BestFit, FGD, Fleet (no args; FGD and
// Fleet learn the typical pods online from the pods they see).
#pragma once

#include <memory>
#include <string>

#include <yaml-cpp/yaml.h>

#include "plugins/framework.h"

namespace fleetsched::plugins::policies {

std::unique_ptr<Plugin> randomFromYaml(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> dotProductFromYaml(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> gpuClusteringFromYaml(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> gpuPackingFromYaml(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> bestFitFromYaml(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> fgdFromYaml(const YAML::Node& args, std::string& error);
std::unique_ptr<Plugin> fleetFromYaml(const YAML::Node& args, std::string& error);

}  // namespace fleetsched::plugins::policies
