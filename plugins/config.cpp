#include "plugins/config.h"

#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "plugins/gpu/gpu_plugin.h"
#include "plugins/registry.h"
#include "plugins/spot/spot_plugin.h"
#include "plugins/zone/zone_plugin.h"

namespace fleetsched::plugins {
namespace {

// Rejects keys outside `allowed` in a map; returns the offending key or empty.
std::string unknownKey(const YAML::Node& map, std::initializer_list<std::string_view> allowed) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
    bool ok = false;
    for (auto a : allowed) ok = ok || key == a;
    if (!ok) return key;
  }
  return {};
}

std::string scalarOr(const YAML::Node& n, std::string_view fallback) {
  return n && n.IsScalar() ? n.Scalar() : std::string(fallback);
}

// Builds one profile; returns false with `error` set (without the location prefix).
bool buildProfile(const YAML::Node& p, std::string& name, std::vector<Profile>& out, std::string& error) {
  if (!p.IsMap()) {
    error = "want a map with name and plugins";
    return false;
  }
  if (!p["name"] || !p["name"].IsScalar() || p["name"].Scalar().empty()) {
    error = "name: want a non-empty string";
    return false;
  }
  name = p["name"].Scalar();
  if (auto k = unknownKey(p, {"name", "plugins", "pluginConfig"}); !k.empty()) {
    error = "unknown key \"" + k + "\" (known: name, plugins, pluginConfig)";
    return false;
  }
  const YAML::Node plugins = p["plugins"];
  if (!plugins || !plugins.IsSequence() || plugins.size() == 0) {
    error = "plugins: want a non-empty list of {name, weight}";
    return false;
  }
  if (plugins.size() > static_cast<size_t>(CycleState::kMaxPlugins)) {
    error = "plugins: at most " + std::to_string(CycleState::kMaxPlugins) + " plugins per profile";
    return false;
  }

  struct Wanted {
    std::string name;
    int32_t weight;
    YAML::Node args;
  };
  std::vector<Wanted> wanted;
  for (size_t i = 0; i < plugins.size(); ++i) {
    const YAML::Node e = plugins[i];
    const std::string where = "plugins[" + std::to_string(i) + "]";
    if (!e.IsMap()) {
      error = where + ": want a map {name, weight}";
      return false;
    }
    if (auto k = unknownKey(e, {"name", "weight"}); !k.empty()) {
      error = where + ": unknown key \"" + k + "\" (known: name, weight)";
      return false;
    }
    const std::string pname = scalarOr(e["name"], "");
    if (pname.empty()) {
      error = where + ": name: want a plugin name (known: " + registeredPluginNames() + ")";
      return false;
    }
    if (findPlugin(pname) == nullptr) {
      error = where + ": unknown plugin \"" + pname + "\" (known: " + registeredPluginNames() + ")";
      return false;
    }
    for (const auto& w : wanted) {
      if (w.name == pname) {
        error = where + ": plugin \"" + pname + "\" listed twice";
        return false;
      }
    }
    int64_t weight = 1;
    if (e["weight"]) {
      bool ok = e["weight"].IsScalar();
      if (ok) {
        try {
          weight = e["weight"].as<int64_t>();
        } catch (const YAML::Exception&) {
          ok = false;
        }
      }
      if (!ok || weight < 1 || weight > kMaxPluginWeight) {
        error = where + " (" + pname + "): weight: want an integer 1.." + std::to_string(kMaxPluginWeight) +
                ", got \"" + scalarOr(e["weight"], "?") + "\"";
        return false;
      }
    }
    wanted.push_back({pname, static_cast<int32_t>(weight), YAML::Node()});
  }

  if (const YAML::Node pc = p["pluginConfig"]) {
    if (!pc.IsSequence()) {
      error = "pluginConfig: want a list of {name, args}";
      return false;
    }
    std::vector<std::string> configured;
    for (size_t i = 0; i < pc.size(); ++i) {
      const YAML::Node e = pc[i];
      const std::string where = "pluginConfig[" + std::to_string(i) + "]";
      if (!e.IsMap()) {
        error = where + ": want a map {name, args}";
        return false;
      }
      if (auto k = unknownKey(e, {"name", "args"}); !k.empty()) {
        error = where + ": unknown key \"" + k + "\" (known: name, args)";
        return false;
      }
      const std::string pname = scalarOr(e["name"], "");
      Wanted* target = nullptr;
      for (auto& w : wanted) target = w.name == pname ? &w : target;
      if (target == nullptr) {
        error = where + ": \"" + pname + "\" is not in this profile's plugins";
        return false;
      }
      for (const auto& c : configured) {
        if (c == pname) {
          error = where + ": \"" + pname + "\" configured twice";
          return false;
        }
      }
      configured.push_back(pname);
      target->args = e["args"];
    }
  }

  GpuResourceConfig gpuResources;
  std::vector<Profile::Entry> entries;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto& w = wanted[i];
    std::string argError;
    auto plugin = createPlugin(w.name, w.args, argError);
    if (plugin == nullptr) {
      error = "plugins[" + std::to_string(i) + "] (" + w.name + "): " + argError;
      return false;
    }
    if (w.name == gpu::kName) {
      // The GPU plugin's resourceNames decide which requests count as GPUs for the whole
      // profile (derivePodInfo); its args were validated just above.
      if (auto a = gpu::parseArgs(w.args, argError)) gpuResources = a->resources;
    }
    entries.push_back({std::move(plugin), w.weight});
  }
  out.emplace_back(name, std::move(gpuResources), std::move(entries));
  return true;
}

std::optional<Config> parseRoot(const YAML::Node& root, std::string& error) {
  if (!root.IsMap()) {
    error = "want a FleetschedConfiguration map (apiVersion, kind, profiles)";
    return std::nullopt;
  }
  if (auto k = unknownKey(root, {"apiVersion", "kind", "profiles"}); !k.empty()) {
    error = "unknown key \"" + k + "\" (known: apiVersion, kind, profiles)";
    return std::nullopt;
  }
  if (scalarOr(root["apiVersion"], "") != kConfigApiVersion) {
    error = "apiVersion: want " + std::string(kConfigApiVersion) + ", got \"" + scalarOr(root["apiVersion"], "") + "\"";
    return std::nullopt;
  }
  if (scalarOr(root["kind"], "") != kConfigKind) {
    error = "kind: want " + std::string(kConfigKind) + ", got \"" + scalarOr(root["kind"], "") + "\"";
    return std::nullopt;
  }
  const YAML::Node profiles = root["profiles"];
  if (!profiles || !profiles.IsSequence() || profiles.size() == 0) {
    error = "profiles: want a non-empty list";
    return std::nullopt;
  }
  std::vector<Profile> out;
  for (size_t i = 0; i < profiles.size(); ++i) {
    std::string name, perr;
    if (!buildProfile(profiles[i], name, out, perr)) {
      error = "profiles[" + std::to_string(i) + "]" + (name.empty() ? "" : " (" + name + ")") + ": " + perr;
      return std::nullopt;
    }
    for (size_t j = 0; j + 1 < out.size(); ++j) {
      if (out[j].name() == name) {
        error = "profiles[" + std::to_string(i) + "]: profile name \"" + name + "\" used twice";
        return std::nullopt;
      }
    }
  }
  return Config(std::move(out));
}

}  // namespace

const Profile* Config::find(std::string_view name) const {
  for (const auto& p : profiles_) {
    if (p.name() == name) return &p;
  }
  return nullptr;
}

const Profile& Config::profileFor(const codec::Pod& pod) const {
  if (const Profile* p = find(pod.schedulerName)) return *p;
  if (const Profile* p = find(kDefaultProfileName)) return *p;
  return profiles_.front();
}

std::optional<Config> loadConfig(std::string_view yaml, std::string& error) {
  try {
    return parseRoot(YAML::Load(std::string(yaml)), error);
  } catch (const YAML::Exception& e) {
    // yaml-cpp marks are 0-based, and null for errors not tied to a position.
    error = e.mark.is_null() ? e.msg
                             : "line " + std::to_string(e.mark.line + 1) + ", column " +
                                   std::to_string(e.mark.column + 1) + ": " + e.msg;
    return std::nullopt;
  }
}

std::optional<Config> loadConfigFile(const std::string& path, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read the file";
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto c = loadConfig(ss.str(), error);
  if (!c) error = path + ": " + error;
  return c;
}

Config defaultConfig() {
  std::vector<Profile::Entry> entries;
  std::string error;
  const YAML::Node none;
  entries.push_back({createPlugin(gpu::kName, none, error), 10});
  entries.push_back({createPlugin(spot::kName, none, error), 5});
  entries.push_back({createPlugin(zone::kName, none, error), 3});
  std::vector<Profile> profiles;
  profiles.emplace_back(std::string(kDefaultProfileName), GpuResourceConfig{}, std::move(entries));
  return Config(std::move(profiles));
}

}  // namespace fleetsched::plugins
