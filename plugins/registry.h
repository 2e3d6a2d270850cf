// The plugin registry: ONE explicit table, name → factory (registry.cpp). Static
// self-registration would be dropped by the linker inside a static library, and an explicit
// table is what a reader greps for. A factory validates its YAML args and returns the plugin,
// or nullptr with a one-line message in `error`.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "plugins/framework.h"

namespace fleetsched::plugins {

using PluginFactory = std::unique_ptr<Plugin> (*)(const YAML::Node& args, std::string& error);

struct PluginRegistration {
  std::string_view name;
  PluginFactory create;
};

std::span<const PluginRegistration> registeredPlugins();
const PluginRegistration* findPlugin(std::string_view name);

// "GPU, Spot, Zone, Fit, ..." for error messages.
std::string registeredPluginNames();

// Builds the plugin `name` from `args` (a map, or null for defaults). Unknown names and bad args
// return nullptr with `error` set.
std::unique_ptr<Plugin> createPlugin(std::string_view name, const YAML::Node& args, std::string& error);

}  // namespace fleetsched::plugins
