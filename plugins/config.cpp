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

// Keeps an error on one line: its control bytes (from the YAML's keys and values, or quoted
// by yaml-cpp's messages) written as \n, \r, \t or \xNN, the way log lines escape them.
void escapeControlBytes(std::string& error) {
  std::string out;
  for (char c : error) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  error = std::move(out);
}

std::string scalarOr(const YAML::Node& n, std::string_view fallback) {
  return n && n.IsScalar() ? n.Scalar() : std::string(fallback);
}

// A validated profile waiting for the configuration's interpretation, which may still change its
// GPU resources (a profile without the GPU plugin takes the configuration's per-GPU resource).
struct PendingProfile {
  ProfileSettings settings;
  std::vector<Profile::Entry> entries;
};

// Builds one profile; returns false with `error` set (without the location prefix).
bool buildProfile(const YAML::Node& p, std::string& name, std::vector<PendingProfile>& out,
                  std::string& error) {
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
      if (!ok || weight < 0 || weight > kMaxPluginWeight) {
        error = where + " (" + pname + "): weight: want an integer 0.." + std::to_string(kMaxPluginWeight) +
                " (0: filter only), got \"" + scalarOr(e["weight"], "?") + "\"";
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

  PendingProfile pending;
  pending.settings.name = name;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto& w = wanted[i];
    std::string argError;
    auto plugin = createPlugin(w.name, w.args, argError);
    if (plugin == nullptr) {
      error = "plugins[" + std::to_string(i) + "] (" + w.name + "): " + argError;
      return false;
    }
    if (w.weight == 0 && !plugin->filters()) {
      error = "plugins[" + std::to_string(i) + "] (" + w.name + "): weight: 0 means filter only, and " + w.name +
              " does not filter";
      return false;
    }
    // What the cache reads for this profile comes from the same args (validated just above).
    if (w.name == gpu::kName) {
      // The GPU plugin's resourceNames also decide which requests count as GPUs for the whole
      // profile (derivePodInfo).
      if (auto a = gpu::parseArgs(w.args, argError)) {
        pending.settings.hasGpuPlugin = true;
        pending.settings.gpuResources = a->resources;
        pending.settings.gpuProductLabel = a->productLabel;
      }
    } else if (w.name == zone::kName) {
      if (auto a = zone::parseArgs(w.args, argError)) pending.settings.workloadLabels = a->workloadLabels;
    }
    pending.entries.push_back({std::move(plugin), w.weight});
  }
  out.push_back(std::move(pending));
  return true;
}

Config makeConfig(std::vector<PendingProfile> pending, const Interpretation& interpretation) {
  std::vector<Profile> profiles;
  profiles.reserve(pending.size());
  for (PendingProfile& p : pending) {
    profiles.emplace_back(p.settings.name, std::move(p.settings.gpuResources), std::move(p.entries));
  }
  return Config(std::move(profiles), interpretation);
}

// The interpretation of `pending`'s profiles; fills in their GPU resources (interpretProfiles).
bool interpret(std::vector<PendingProfile>& pending, Interpretation& out, std::string& error) {
  std::vector<ProfileSettings> settings;
  for (const PendingProfile& p : pending) settings.push_back(p.settings);
  if (!interpretProfiles(settings, out, error)) return false;
  for (size_t i = 0; i < pending.size(); ++i) pending[i].settings = std::move(settings[i]);
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
  std::vector<PendingProfile> out;
  for (size_t i = 0; i < profiles.size(); ++i) {
    std::string name, perr;
    if (!buildProfile(profiles[i], name, out, perr)) {
      error = "profiles[" + std::to_string(i) + "]" + (name.empty() ? "" : " (" + name + ")") + ": " + perr;
      return std::nullopt;
    }
    for (size_t j = 0; j + 1 < out.size(); ++j) {
      if (out[j].settings.name == name) {
        error = "profiles[" + std::to_string(i) + "]: profile name \"" + name + "\" used twice";
        return std::nullopt;
      }
    }
  }
  Interpretation interpretation;
  if (!interpret(out, interpretation, error)) return std::nullopt;
  return makeConfig(std::move(out), interpretation);
}

}  // namespace

const Profile* Config::find(std::string_view name) const {
  for (const auto& p : profiles_) {
    if (p.name() == name) return &p;
  }
  return nullptr;
}

const Profile& Config::profileFor(const codec::Pod& pod) const {
  // The cache picks a pod's workload labels with the same rule.
  return profiles_[profileIndexFor(pod.schedulerName, profiles_.size(),
                                   [this](size_t i) { return profiles_[i].name(); })];
}

std::optional<Config> loadConfig(std::string_view yaml, std::string& error) {
  std::optional<Config> c;
  try {
    c = parseRoot(YAML::Load(std::string(yaml)), error);
  } catch (const YAML::Exception& e) {
    // yaml-cpp marks are 0-based, and null for errors not tied to a position.
    error = e.mark.is_null() ? e.msg
                             : "line " + std::to_string(e.mark.line + 1) + ", column " +
                                   std::to_string(e.mark.column + 1) + ": " + e.msg;
  }
  if (!c) escapeControlBytes(error);
  return c;
}

std::optional<Config> loadConfigFile(const std::string& path, std::string& error, std::string* text) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read the file";
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (text != nullptr) *text = ss.str();
  auto c = loadConfig(ss.str(), error);
  if (!c) error = path + ": " + error;
  return c;
}

Config defaultConfig() {
  std::vector<PendingProfile> pending(1);
  PendingProfile& p = pending[0];
  std::string error;
  const YAML::Node none;
  p.entries.push_back({createPlugin(gpu::kName, none, error), 10});
  p.entries.push_back({createPlugin(spot::kName, none, error), 5});
  p.entries.push_back({createPlugin(zone::kName, none, error), 3});
  p.settings.name = kDefaultProfileName;
  p.settings.hasGpuPlugin = true;  // GPU and Zone with their default args: the settings' defaults
  Interpretation interpretation;
  interpret(pending, interpretation, error);  // one profile cannot disagree with itself
  return makeConfig(std::move(pending), interpretation);
}

}  // namespace fleetsched::plugins
