// FleetschedConfiguration: the profile YAML (schema in docs/configuration.md).
//
//   apiVersion: fleetsched.io/v1alpha1
//   kind: FleetschedConfiguration
//   profiles:
//   - name: default
//     plugins: [{name: GPU, weight: 10}, {name: Spot, weight: 5}, {name: Zone, weight: 3}]
//     pluginConfig: [{name: GPU, args: {policy: binpack}}]
//
// Loading validates everything (unknown keys, unknown plugins, weights, args, profiles that
// disagree on how nodes are read) and reports the first problem as one line naming where it is.
// A loaded Config is immutable and shared by every request. Its interpretation() is how the
// cache must read nodes and pods for these profiles (plugins/interpretation.h).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model.h"
#include "plugins/interpretation.h"
#include "plugins/profile.h"

namespace fleetsched::plugins {

constexpr std::string_view kConfigApiVersion = "fleetsched.io/v1alpha1";
constexpr std::string_view kConfigKind = "FleetschedConfiguration";
constexpr int32_t kMaxPluginWeight = 1000;

class Config {
 public:
  // `interpretation` is interpretProfiles' result for `profiles` (one ProfileReading each, in order).
  Config(std::vector<Profile> profiles, Interpretation interpretation)
      : profiles_(std::move(profiles)), interpretation_(std::move(interpretation)) {}

  std::span<const Profile> profiles() const { return profiles_; }
  const Profile* find(std::string_view name) const;
  // The profile named like the pod's spec.schedulerName, else "default", else the first one.
  const Profile& profileFor(const codec::Pod& pod) const;
  // How nodes and pods are read for these profiles: what the cache must be built with.
  const Interpretation& interpretation() const { return interpretation_; }

 private:
  std::vector<Profile> profiles_;  // never empty
  Interpretation interpretation_;
};

// Parses YAML text. On error returns nullopt and sets `error` to one line.
std::optional<Config> loadConfig(std::string_view yaml, std::string& error);
// Reads and parses a file; errors start with the path. `text`, when given, receives the file.
std::optional<Config> loadConfigFile(const std::string& path, std::string& error, std::string* text = nullptr);

// Profile "default": GPU 10, Spot 5, Zone 3, every plugin with default args.
Config defaultConfig();

}  // namespace fleetsched::plugins
