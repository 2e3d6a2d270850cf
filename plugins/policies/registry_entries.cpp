#include "plugins/policies/registry_entries.h"

#include "plugins/args_reader.h"
#include "plugins/policies/bestfit/best_fit_policy.h"
#include "plugins/policies/clustering/gpu_clustering_policy.h"
#include "plugins/policies/dotprod/dot_product_policy.h"
#include "plugins/policies/fgd/fgd_policy.h"
#include "plugins/policies/fleet/fleet_policy.h"
#include "plugins/policies/packing/gpu_packing_policy.h"
#include "plugins/policies/random/random_policy.h"

namespace fleetsched::plugins::policies {

namespace {

// Policies without args still reject unknown keys.
bool noArgs(const YAML::Node& args, std::string& error) {
  ArgsReader r(args);
  return r.finish(error);
}

}  // namespace

std::unique_ptr<Plugin> randomFromYaml(const YAML::Node& args, std::string& error) {
  ArgsReader r(args);
  int64_t seed = 0;
  r.getInt("seed", seed, 0, INT64_MAX);
  if (!r.finish(error)) return nullptr;
  return createRandomPolicy({static_cast<uint64_t>(seed)});
}

std::unique_ptr<Plugin> dotProductFromYaml(const YAML::Node& args, std::string& error) {
  return noArgs(args, error) ? createDotProductPolicy() : nullptr;
}
std::unique_ptr<Plugin> gpuClusteringFromYaml(const YAML::Node& args, std::string& error) {
  return noArgs(args, error) ? createGpuClusteringPolicy() : nullptr;
}
std::unique_ptr<Plugin> gpuPackingFromYaml(const YAML::Node& args, std::string& error) {
  return noArgs(args, error) ? createGpuPackingPolicy() : nullptr;
}
std::unique_ptr<Plugin> bestFitFromYaml(const YAML::Node& args, std::string& error) {
  return noArgs(args, error) ? createBestFitPolicy() : nullptr;
}
std::unique_ptr<Plugin> fgdFromYaml(const YAML::Node& args, std::string& error) {
  return noArgs(args, error) ? createFgdPolicy({}) : nullptr;
}
std::unique_ptr<Plugin> fleetFromYaml(const YAML::Node& args, std::string& error) {
  return noArgs(args, error) ? createFleetPolicy({}) : nullptr;
}

}  // namespace fleetsched::plugins::policies
