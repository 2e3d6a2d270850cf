#include "plugins/registry.h"

#include "plugins/fit/fit_plugin.h"
#include "plugins/gpu/gpu_plugin.h"
#include "plugins/spot/spot_plugin.h"
#include "plugins/zone/zone_plugin.h"
// Placement policies (plugins/policies/) add their headers here.

namespace fleetsched::plugins {
namespace {

constexpr PluginRegistration kRegistry[] = {
    {gpu::kName, &gpu::createFromYaml},
    {spot::kName, &spot::createFromYaml},
    {zone::kName, &zone::createFromYaml},
    {fit::kName, &fit::createFromYaml},
    // ---- Placement policies (plugins/policies/): add one line per policy below. ----
    // ---- End of placement policies. ----
};

}  // namespace

std::span<const PluginRegistration> registeredPlugins() { return kRegistry; }

const PluginRegistration* findPlugin(std::string_view name) {
  for (const auto& r : kRegistry) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::string registeredPluginNames() {
  std::string s;
  for (const auto& r : kRegistry) s.append(s.empty() ? "" : ", ").append(r.name);
  return s;
}

std::unique_ptr<Plugin> createPlugin(std::string_view name, const YAML::Node& args, std::string& error) {
  const PluginRegistration* r = findPlugin(name);
  if (r == nullptr) {
    error = "unknown plugin \"" + std::string(name) + "\" (known: " + registeredPluginNames() + ")";
    return nullptr;
  }
  std::string argError;
  auto p = r->create(args, argError);
  if (p == nullptr) error = std::string(name) + " args: " + argError;
  return p;
}

}  // namespace fleetsched::plugins
