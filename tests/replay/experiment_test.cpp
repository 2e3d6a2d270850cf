// Replay behaviour: determinism per seed on the real trace (skipped without the data), and
// the server path (annotations → filters → GPU choice) on a small synthetic trace.
#include "replay/experiment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "plugins/policies/policies.h"
#include "replay/published.h"
#include "replay/replay.h"
#include "tests/replay/openb.h"

namespace fleetsched::replay {
namespace {

using testing::openbDir;

std::shared_ptr<const TraceData> loadOpenb(const std::string& trace) {
  const std::string dir = openbDir();
  std::vector<NodeRow> nodes;
  std::vector<PodRow> pods;
  std::string error;
  if (!readNodeList(dir + "/openb_node_list_gpu_node.csv", nodes, error)) return nullptr;
  if (!readPodList(dir + "/openb_pod_list_" + trace + ".csv", pods, error)) return nullptr;
  return prepareTrace(trace, std::move(nodes), std::move(pods));
}

TEST(OpenbReplay, First500PodsAreDeterministicForASeed) {
  const auto trace = loadOpenb("gpushare40");
  if (!trace) GTEST_SKIP() << "openb trace not found in " << openbDir() << " (set FLEETSCHED_OPENB_DIR)";
  EXPECT_EQ(trace->nodes.size(), 1213u);
  for (const char* policy : {"fgd", "random", "bestfit"}) {
    ExperimentSpec spec{policy, 42, 1.3, true, 500};
    const auto a = runExperiment(*trace, spec, true);
    const auto b = runExperiment(*trace, spec, true);
    ASSERT_EQ(a.placements.size(), 500u);
    EXPECT_EQ(a.placements, b.placements) << policy;
    spec.seed = 43;
    const auto c = runExperiment(*trace, spec, true);
    EXPECT_NE(a.placements, c.placements) << policy << ": the seed must change order and tie-breaks";
  }
}

TEST(OpenbReplay, TypicalPodsMatchThePublishedClassCounts) {
  const auto trace = loadOpenb("default");
  if (!trace) GTEST_SKIP() << "openb trace not found in " << openbDir();
  EXPECT_EQ(trace->typicalPods->size(), 35u);  // spec §2.7: 35 of 91 classes
}

TEST(OpenbReplay, PublishedTableIsKnown) {
  // 17 traces x 6 policies; spec §4 rounds default FGD to 95.2 / 95.4.
  EXPECT_EQ(publishedTable().size(), 102u);
  const PublishedAllocation* fgd = findPublished("default", "fgd");
  ASSERT_NE(fgd, nullptr);
  EXPECT_NEAR(fgd->at100, 95.2, 0.05);
  EXPECT_NEAR(fgd->at130, 95.4, 0.05);
  EXPECT_EQ(findPublished("default", "fleet"), nullptr);
}

// Two nodes of model A, one of model B; pods constrained to B and shared pods.
std::shared_ptr<const TraceData> syntheticTrace() {
  std::vector<NodeRow> nodes = {{"node-a1", 32000, 65536, 2, "A"},
                                {"node-a2", 32000, 65536, 2, "A"},
                                {"node-b1", 32000, 65536, 2, "B"},
                                {"node-cpu", 64000, 65536, 0, ""}};
  std::vector<PodRow> pods;
  for (int i = 0; i < 3; ++i) pods.push_back({"pod-b" + std::to_string(i), 1000, 1024, 1, 1000, "B|C"});
  for (int i = 0; i < 4; ++i) pods.push_back({"pod-s" + std::to_string(i), 1000, 1024, 1, 500, ""});
  return prepareTrace("synthetic", std::move(nodes), std::move(pods));
}

TEST(SyntheticReplay, ModelConstraintAndSharedGpusGoThroughThePipeline) {
  const auto trace = syntheticTrace();
  EXPECT_EQ(trace->nodes.size(), 3u);  // the CPU-only node is not part of the evaluation
  for (const char* policy : {"random", "dotprod", "clustering", "packing", "bestfit", "fgd", "fleet"}) {
    ExperimentSpec spec{policy, 42, 0, false, 0};  // file order, no tuning
    const auto r = runExperiment(*trace, spec, true);
    ASSERT_EQ(r.placements.size(), 7u) << policy;
    // Only node-b1 (2 GPUs) may take the B pods: the third fails.
    EXPECT_NE(r.placements[0].find("node-b1"), std::string::npos) << policy << ": " << r.placements[0];
    EXPECT_NE(r.placements[1].find("node-b1"), std::string::npos) << policy << ": " << r.placements[1];
    EXPECT_EQ(r.placements[2], "pod-b2 -> -") << policy;
    EXPECT_EQ(r.failed, 1u) << policy;
    // Four half-GPU pods fill the A nodes' 2000 milli exactly.
    EXPECT_EQ(r.usedMilli, 2000 + 2000) << policy;
    EXPECT_EQ(r.capacityMilli, 6000);
  }
}

// The published method accounts shared GPUs in milli per GPU: twelve quarter-GPU pods fill
// three GPUs. (Holding each shared pod to a whole nvidia.com/gpu unit placed 6 of them and cost
// every policy 3-9 points on the openb traces.)
TEST(SyntheticReplay, SharedPodsPackOntoOneGpu) {
  std::vector<NodeRow> nodes = {{"node-2", 64000, 65536, 2, "A"}, {"node-1", 64000, 65536, 1, "A"}};
  std::vector<PodRow> pods;
  for (int i = 0; i < 12; ++i) pods.push_back({"pod-q" + std::to_string(i), 1000, 1024, 1, 250, ""});
  const auto trace = prepareTrace("quarters", std::move(nodes), std::move(pods));
  for (const auto name : plugins::policies::policyNames()) {
    const std::string policy(name);
    const auto r = runExperiment(*trace, ExperimentSpec{policy, 42, 0, false, 0}, true);
    EXPECT_EQ(r.failed, 0u) << policy;
    EXPECT_EQ(r.usedMilli, 3000) << policy;
    EXPECT_EQ(r.gpusTouched, 3) << policy;
  }
}

TEST(SyntheticReplay, TuningAppendsClonesUpToTheTarget) {
  const auto trace = syntheticTrace();
  ExperimentSpec spec{"bestfit", 42, 1.3, true, 0};
  const auto r = runExperiment(*trace, spec, true);
  // Own demand is 5000 milli; the target is 1.3 × 6000 = 7800, so clones are appended.
  ASSERT_GT(r.placements.size(), 7u);
  EXPECT_NE(r.placements.back().find("-tuned-"), std::string::npos);
  EXPECT_LE(r.arrivedMilli, 7800);
  EXPECT_GE(r.arrivedMilli + 1000, 7800);  // stops at the first draw that would overshoot
}

TEST(SyntheticReplay, PlanIsWhatTheExperimentSubmits) {
  const auto trace = syntheticTrace();
  const ExperimentSpec spec{"fgd", 43, 1.3, true, 0};
  const ExperimentPlan plan = planExperiment(*trace, spec);
  const auto r = runExperiment(*trace, spec, true);
  ASSERT_EQ(plan.pods.size(), r.placements.size());
  for (size_t a = 0; a < plan.pods.size(); ++a) {
    EXPECT_EQ(r.placements[a].substr(0, r.placements[a].find(" -> ")), plan.podName(*trace, a));
  }
  ASSERT_EQ(plan.nodeNames.size(), trace->nodes.size());
  for (size_t i = 0; i < plan.nodeNames.size(); ++i) {
    EXPECT_EQ(plan.nodeNames[i].substr(5), trace->nodes[i].name);  // "NNNN-" + the trace's name
  }
}

// A user's profile runs through the same driver; its filters still apply (the B pods only fit
// node-b1) and its policy learns the typical pods as they come.
TEST(SyntheticReplay, UserProfilesReplayAsTheServerRunsThem) {
  const auto trace = syntheticTrace();
  auto yaml = std::make_shared<const std::string>(
      "apiVersion: fleetsched.io/v1alpha1\nkind: FleetschedConfiguration\nprofiles:\n"
      "- name: frag\n  plugins: [{name: GPU, weight: 0}, {name: Fleet, weight: 1}]\n"
      "  pluginConfig: [{name: GPU, args: {countWholeDevices: false}}]\n");
  const auto r = runExperiment(*trace, ExperimentSpec{"frag", 42, 0, false, 0, yaml}, true);
  ASSERT_EQ(r.placements.size(), 7u);
  EXPECT_NE(r.placements[0].find("node-b1"), std::string::npos) << r.placements[0];
  EXPECT_EQ(r.placements[2], "pod-b2 -> -");
  EXPECT_EQ(r.usedMilli, 4000);
}

TEST(OpenbReplay, ConfigProfilesMayNotShadowBuiltInPolicies) {
  const auto dir = std::filesystem::temp_directory_path() / "fleetsched-replay-config-test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "config.yaml";
  std::ofstream(file) << "apiVersion: fleetsched.io/v1alpha1\nkind: FleetschedConfiguration\nprofiles:\n"
                         "- name: fgd\n  plugins: [{name: FGD}]\n";
  Options o;
  o.traceDir = openbDir();
  o.traces = {"default"};
  o.configFile = file.string();
  std::string error;
  EXPECT_FALSE(runExperiments(o, error));
  if (testing::haveOpenb()) {
    EXPECT_NE(error.find("profile \"fgd\" has a built-in policy's name"), std::string::npos) << error;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fleetsched::replay
