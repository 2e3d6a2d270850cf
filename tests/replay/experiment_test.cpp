// Replay behaviour: determinism per seed on the real trace (skipped without the data), and
// the server path (annotations → filters → GPU choice) on a small synthetic trace.
#include "replay/experiment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "replay/replay.h"

namespace fleetsched::replay {
namespace {

// FLEETSCHED_OPENB_DIR, else ../shared/data/openb next to the source tree.
std::string openbDir() {
  if (const char* env = std::getenv("FLEETSCHED_OPENB_DIR")) return env;
  const char* root = std::getenv("FLEETSCHED_SOURCE_ROOT");
  return (std::filesystem::path(root != nullptr ? root : ".") / ".." / "shared" / "data" / "openb").string();
}

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
  double a = 0, b = 0;
  ASSERT_TRUE(publishedAllocation("default", "fgd", a, b));
  EXPECT_DOUBLE_EQ(a, 95.2);
  EXPECT_DOUBLE_EQ(b, 95.4);
  EXPECT_FALSE(publishedAllocation("default", "fleet", a, b));
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

}  // namespace
}  // namespace fleetsched::replay
