#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fixtures.h"
#include "plugins/config.h"
#include "plugins/registry.h"

namespace fleetsched::plugins {
namespace {

using testing::PodBuilder;

std::vector<std::pair<std::string, int32_t>> pluginsOf(const Profile& p) {
  std::vector<std::pair<std::string, int32_t>> v;
  for (const auto& e : p.plugins()) v.emplace_back(std::string(e.plugin->name()), e.weight);
  return v;
}

TEST(Config, DefaultIsGpu10Spot5Zone3) {
  const Config c = defaultConfig();
  ASSERT_EQ(c.profiles().size(), 1u);
  EXPECT_EQ(c.profiles()[0].name(), "default");
  EXPECT_EQ(pluginsOf(c.profiles()[0]),
            (std::vector<std::pair<std::string, int32_t>>{{"GPU", 10}, {"Spot", 5}, {"Zone", 3}}));
  EXPECT_EQ(c.profiles()[0].gpuResources().resourceNames, std::vector<std::string>{"nvidia.com/gpu"});
}

constexpr const char* kGood = R"(
apiVersion: fleetsched.io/v1alpha1
kind: FleetschedConfiguration
profiles:
- name: default
  plugins:
  - {name: GPU, weight: 10}
  - {name: Spot, weight: 5}
  - {name: Zone, weight: 3}
  pluginConfig:
  - name: GPU
    args: {resourceNames: [nvidia.com/gpu, nvidia.com/mig-], policy: binpack}
- name: training
  plugins:
  - name: Fit
  - {name: GPU, weight: 4}
  - {name: Zone, weight: 2}
  pluginConfig:
  - name: Zone
    args:
      policy: pack
      workloadLabels: [training.example.com/job]
)";

TEST(Config, LoadsProfilesWeightsAndArgs) {
  std::string error;
  auto c = loadConfig(kGood, error);
  ASSERT_TRUE(c) << error;
  ASSERT_EQ(c->profiles().size(), 2u);
  EXPECT_EQ(c->profiles()[0].gpuResources().resourceNames,
            (std::vector<std::string>{"nvidia.com/gpu", "nvidia.com/mig-"}));
  EXPECT_EQ(pluginsOf(c->profiles()[1]),
            (std::vector<std::pair<std::string, int32_t>>{{"Fit", 1}, {"GPU", 4}, {"Zone", 2}}));
  EXPECT_EQ(c->profileFor(PodBuilder().schedulerName("training").build()).name(), "training");
  EXPECT_EQ(c->profileFor(PodBuilder().schedulerName("default-scheduler").build()).name(), "default");
  EXPECT_EQ(c->profileFor(PodBuilder().build()).name(), "default");
  EXPECT_EQ(c->find("nope"), nullptr);
}

TEST(Config, InterpretationFollowsEveryProfile) {
  std::string error;
  auto c = loadConfig(kGood, error);
  ASSERT_TRUE(c) << error;
  const Interpretation& in = c->interpretation();
  // GPU resources: the union; workload labels: each profile's own, picked as profileFor picks.
  EXPECT_EQ(in.gpuResources.resourceNames, (std::vector<std::string>{"nvidia.com/gpu", "nvidia.com/mig-"}));
  EXPECT_EQ(in.gpuProductLabel, "nvidia.com/gpu.product");
  ASSERT_EQ(in.profiles.size(), 2u);
  EXPECT_EQ(in.profiles[0].profile, "default");
  EXPECT_EQ(in.profiles[0].workloadLabels, std::vector<std::string>{"fleetsched.io/workload"});
  EXPECT_EQ(in.profiles[1].profile, "training");
  EXPECT_EQ(in.profiles[1].workloadLabels, std::vector<std::string>{"training.example.com/job"});
  std::string key;
  const auto pod = [](std::string_view scheduler) {
    return PodBuilder()
        .ns("ml")
        .schedulerName(std::string(scheduler))
        .label("fleetsched.io/workload", "w")
        .label("training.example.com/job", "j");
  };
  ASSERT_TRUE(in.workloadKey(pod("training").build(), key));
  EXPECT_EQ(key, "ml/label/j");
  ASSERT_TRUE(in.workloadKey(pod("default-scheduler").build(), key));
  EXPECT_EQ(key, "ml/label/w");
}

TEST(Config, DefaultInterpretationIsTheDefaultProfiles) {
  const Interpretation in = defaultConfig().interpretation();
  EXPECT_EQ(in.gpuResources.resourceNames, std::vector<std::string>{"nvidia.com/gpu"});
  EXPECT_EQ(in.gpuProductLabel, "nvidia.com/gpu.product");
  ASSERT_EQ(in.profiles.size(), 1u);
  EXPECT_EQ(in.profiles[0].workloadLabels, std::vector<std::string>{"fleetsched.io/workload"});
}

TEST(Config, ProfileWithoutGpuPluginCountsTheConfiguredGpu) {
  std::string error;
  auto c = loadConfig(
      "apiVersion: fleetsched.io/v1alpha1\nkind: FleetschedConfiguration\nprofiles:\n"
      "- name: cpu\n  plugins: [{name: Spot}]\n"
      "- name: default\n  plugins: [{name: GPU}]\n"
      "  pluginConfig: [{name: GPU, args: {resourceNames: [amd.com/gpu, amd.com/mig-], productLabel: x/y}}]\n",
      error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->profiles()[0].gpuResources().resourceNames, std::vector<std::string>{"amd.com/gpu"});
  EXPECT_EQ(c->interpretation().gpuResources.resourceNames,
            (std::vector<std::string>{"amd.com/gpu", "amd.com/mig-"}));
  EXPECT_EQ(c->interpretation().gpuProductLabel, "x/y");
}

TEST(Config, WeightZeroIsAFilterOnlyPlugin) {
  std::string error;
  auto c = loadConfig(
      "apiVersion: fleetsched.io/v1alpha1\nkind: FleetschedConfiguration\nprofiles:\n"
      "- name: frag\n  plugins: [{name: GPU, weight: 0}, {name: Fleet, weight: 1}]\n",
      error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(pluginsOf(c->profiles()[0]), (std::vector<std::pair<std::string, int32_t>>{{"GPU", 0}, {"Fleet", 1}}));
}

struct BadCase {
  const char* desc;
  std::string yaml;
  std::string error;  // exact message
};

std::string withProfiles(const std::string& profiles) {
  return "apiVersion: fleetsched.io/v1alpha1\nkind: FleetschedConfiguration\nprofiles:\n" + profiles;
}

class BadConfig : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, OneClearErrorLine) {
  const auto& c = GetParam();
  std::string error;
  EXPECT_FALSE(loadConfig(c.yaml, error)) << c.desc;
  EXPECT_EQ(error, c.error) << c.desc;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadConfig,
    ::testing::Values(
        BadCase{"unknown plugin", withProfiles("- name: default\n  plugins: [{name: GPUs, weight: 1}]\n"),
                "profiles[0] (default): plugins[0]: unknown plugin \"GPUs\" (known: " + registeredPluginNames() + ")"},
        BadCase{"zero weight on a plugin that only scores", withProfiles("- name: default\n  plugins: [{name: Zone, weight: 0}]\n"),
                "profiles[0] (default): plugins[0] (Zone): weight: 0 means filter only, and Zone does not filter"},
        BadCase{"negative weight", withProfiles("- name: p\n  plugins: [{name: Spot, weight: -2}]\n"),
                "profiles[0] (p): plugins[0] (Spot): weight: want an integer 0..1000 (0: filter only), got \"-2\""},
        BadCase{"text weight", withProfiles("- name: p\n  plugins: [{name: Spot, weight: heavy}]\n"),
                "profiles[0] (p): plugins[0] (Spot): weight: want an integer 0..1000 (0: filter only), got \"heavy\""},
        BadCase{"bad enum arg",
                withProfiles("- name: p\n  plugins: [{name: GPU}]\n  pluginConfig: [{name: GPU, args: {policy: pack}}]\n"),
                "profiles[0] (p): plugins[0] (GPU): GPU args: policy: want one of binpack, spread, got \"pack\""},
        BadCase{"unknown arg",
                withProfiles("- name: p\n  plugins: [{name: Spot}]\n  pluginConfig: [{name: Spot, args: {prefer: true}}]\n"),
                "profiles[0] (p): plugins[0] (Spot): Spot args: unknown arg \"prefer\" (known: preferSpot, "
                "tolerationKeys)"},
        BadCase{"bool arg", withProfiles("- name: p\n  plugins: [{name: Spot}]\n  pluginConfig: [{name: Spot, args: "
                                         "{preferSpot: maybe}}]\n"),
                "profiles[0] (p): plugins[0] (Spot): Spot args: preferSpot: want true or false"},
        BadCase{"args for Fit", withProfiles("- name: p\n  plugins: [{name: Fit}]\n  pluginConfig: [{name: Fit, args: "
                                             "{cpu: 1}}]\n"),
                "profiles[0] (p): plugins[0] (Fit): Fit args: unknown arg \"cpu\" (this plugin takes no args)"},
        BadCase{"empty resource list", withProfiles("- name: p\n  plugins: [{name: GPU}]\n  pluginConfig: [{name: GPU, "
                                                    "args: {resourceNames: []}}]\n"),
                "profiles[0] (p): plugins[0] (GPU): GPU args: resourceNames: want at least one entry"},
        BadCase{"both score weights zero", withProfiles("- name: p\n  plugins: [{name: GPU}]\n  pluginConfig: [{name: "
                                                        "GPU, args: {memoryWeight: 0, policyWeight: 0}}]\n"),
                "profiles[0] (p): plugins[0] (GPU): GPU args: memoryWeight and policyWeight: at least one must be > 0"},
        BadCase{"config for a plugin not in the profile",
                withProfiles("- name: p\n  plugins: [{name: GPU}]\n  pluginConfig: [{name: Zone, args: {}}]\n"),
                "profiles[0] (p): pluginConfig[0]: \"Zone\" is not in this profile's plugins"},
        BadCase{"plugin twice", withProfiles("- name: p\n  plugins: [{name: GPU}, {name: GPU, weight: 2}]\n"),
                "profiles[0] (p): plugins[1]: plugin \"GPU\" listed twice"},
        BadCase{"profile twice",
                withProfiles("- name: p\n  plugins: [{name: GPU}]\n- name: p\n  plugins: [{name: Spot}]\n"),
                "profiles[1]: profile name \"p\" used twice"},
        BadCase{"no plugins", withProfiles("- name: p\n  plugins: []\n"),
                "profiles[0] (p): plugins: want a non-empty list of {name, weight}"},
        BadCase{"typo in a profile key", withProfiles("- name: p\n  plugin: [{name: GPU}]\n"),
                "profiles[0] (p): unknown key \"plugin\" (known: name, plugins, pluginConfig)"},
        BadCase{"profiles with different per-GPU resources",
                withProfiles("- name: default\n  plugins: [{name: GPU}]\n- name: amd\n  plugins: [{name: GPU}]\n"
                             "  pluginConfig: [{name: GPU, args: {resourceNames: [amd.com/gpu]}}]\n"),
                "profiles[1] (amd): GPU resourceNames: the per-GPU resource (the first exact name) amd.com/gpu differs "
                "from nvidia.com/gpu in profiles[0] (default); a node keeps per-GPU accounting for one resource, so "
                "every profile must list the same one first"},
        BadCase{"profiles with different product labels",
                withProfiles("- name: a\n  plugins: [{name: Spot}]\n- name: b\n  plugins: [{name: GPU}]\n"
                             "- name: c\n  plugins: [{name: GPU}]\n"
                             "  pluginConfig: [{name: GPU, args: {productLabel: example.com/gpu-model}}]\n"),
                "profiles[2] (c): GPU productLabel: example.com/gpu-model differs from nvidia.com/gpu.product in "
                "profiles[1] (b); a node has one GPU model, read from one label, so every profile must name the same"},
        BadCase{"no profiles", "apiVersion: fleetsched.io/v1alpha1\nkind: FleetschedConfiguration\n",
                "profiles: want a non-empty list"},
        BadCase{"wrong apiVersion", "apiVersion: v1\nkind: FleetschedConfiguration\nprofiles: []\n",
                "apiVersion: want fleetsched.io/v1alpha1, got \"v1\""},
        BadCase{"wrong kind", "apiVersion: fleetsched.io/v1alpha1\nkind: KubeSchedulerConfiguration\n",
                "kind: want FleetschedConfiguration, got \"KubeSchedulerConfiguration\""},
        BadCase{"not a map", "- 1\n- 2\n", "want a FleetschedConfiguration map (apiVersion, kind, profiles)"},
        BadCase{"yaml syntax", "apiVersion: [\n", "line 2, column 1: end of sequence flow not found"},
        // Control bytes the YAML spells out come back escaped (issue 26 item 7: fuzz_profile_yaml).
        BadCase{"key holding a line break", withProfiles("- name: p\n  \"plu\\ngin\": [{name: GPU}]\n"),
                "profiles[0] (p): unknown key \"plu\\ngin\" (known: name, plugins, pluginConfig)"},
        BadCase{"value holding control bytes", "apiVersion: \"v1\\r\\t\\x01\\x7f\"\nkind: FleetschedConfiguration\n",
                "apiVersion: want fleetsched.io/v1alpha1, got \"v1\\r\\t\\x01\\x7f\""},
        BadCase{"yaml-cpp quoting a control byte", "apiVersion: \"\\\x01\"\n",
                "line 1, column 16: unknown escape character: \\x01"}));

TEST(Config, MissingFileNamesThePath) {
  std::string error;
  EXPECT_FALSE(loadConfigFile("does/not/exist.yaml", error));
  EXPECT_EQ(error, "does/not/exist.yaml: cannot read the file");
}

TEST(Registry, EveryPluginBuildsWithDefaultArgsAndRejectsJunk) {
  ASSERT_GE(registeredPlugins().size(), 4u);
  for (const auto& r : registeredPlugins()) {
    std::string error;
    auto p = createPlugin(r.name, YAML::Node(), error);
    ASSERT_NE(p, nullptr) << r.name << ": " << error;
    EXPECT_EQ(p->name(), r.name);
    EXPECT_EQ(findPlugin(r.name), &r);
    EXPECT_EQ(createPlugin(r.name, YAML::Load("{noSuchArg: 1}"), error), nullptr) << r.name;
    EXPECT_EQ(createPlugin(r.name, YAML::Load("[1, 2]"), error), nullptr) << r.name;
  }
  std::string error;
  EXPECT_EQ(createPlugin("Nope", YAML::Node(), error), nullptr);
  EXPECT_EQ(error, "unknown plugin \"Nope\" (known: " + registeredPluginNames() + ")");
}

// The YAML blocks in docs/configuration.md are real configurations.
TEST(Config, DocumentedExamplesLoad) {
  const char* root = std::getenv("FLEETSCHED_SOURCE_ROOT");
  ASSERT_NE(root, nullptr);
  std::ifstream in(std::string(root) + "/docs/configuration.md");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  int examples = 0;
  for (size_t pos = doc.find("```yaml\n"); pos != std::string::npos; pos = doc.find("```yaml\n", pos)) {
    pos += 8;
    const size_t end = doc.find("```", pos);
    ASSERT_NE(end, std::string::npos);
    const std::string yaml = doc.substr(pos, end - pos);
    if (yaml.find("kind: FleetschedConfiguration") == std::string::npos) continue;
    std::string error;
    EXPECT_TRUE(loadConfig(yaml, error)) << error << "\n" << yaml;
    ++examples;
    pos = end + 3;
  }
  EXPECT_GE(examples, 2);
}

// The shipped profiles load (bench/replay/live.sh and the docs point at them).
TEST(Config, ShippedProfilesLoad) {
  const char* root = std::getenv("FLEETSCHED_SOURCE_ROOT");
  ASSERT_NE(root, nullptr);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(root) + "/deploy/profiles")) {
    std::string error;
    EXPECT_TRUE(loadConfigFile(entry.path().string(), error)) << error;
    ++files;
  }
  EXPECT_GE(files, 2);
  // default.yaml is the built-in default written out: the same plugins and weights.
  std::string error;
  const auto file = loadConfigFile(std::string(root) + "/deploy/profiles/default.yaml", error);
  ASSERT_TRUE(file) << error;
  const Config builtIn = defaultConfig();
  ASSERT_EQ(file->profiles().size(), builtIn.profiles().size());
  EXPECT_EQ(pluginsOf(file->profiles()[0]), pluginsOf(builtIn.profiles()[0]));
  EXPECT_EQ(file->profiles()[0].name(), builtIn.profiles()[0].name());
}

}  // namespace
}  // namespace fleetsched::plugins
