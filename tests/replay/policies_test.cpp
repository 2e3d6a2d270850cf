// Each policy's score on hand-made nodes against the formulas of spec/gpu-scheduling.md §2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "plugins/gpu_select.h"
#include "plugins/policies/bestfit/best_fit_policy.h"
#include "plugins/policies/clustering/gpu_clustering_policy.h"
#include "plugins/policies/dotprod/dot_product_policy.h"
#include "plugins/policies/fgd/fgd_policy.h"
#include "plugins/policies/fgd/frag_cache.h"
#include "plugins/policies/fgd/typical_pods.h"
#include "plugins/policies/fleet/fleet_policy.h"
#include "plugins/policies/packing/gpu_packing_policy.h"
#include "plugins/policies/policies.h"
#include "plugins/registry.h"
#include "plugins/policies/policy_common.h"
#include "plugins/profile.h"
#include "tests/replay/node_builder.h"

namespace fleetsched::plugins::policies {
namespace {

using testing::NodeBuilder;
using testing::podInfo;

struct NoCluster : ClusterState {
  uint32_t zoneCount() const override { return 1; }
  void workloadZoneCounts(std::string_view, std::span<uint32_t>) const override {}
};

// The records as the profile hands them to a plugin, with rows (the policies read the records).
NodeBatch batchOf(NodeSpan nodes) {
  static ProfileScratch scratch;
  return scratch.batch(nodes, GpuResourceConfig{});
}

TEST(GpuPacking, IdleNodePrefersFewerGpus) {
  const auto pod = podInfo(1000, 1, 1000);
  EXPECT_EQ(gpuPackingScore(NodeBuilder().gpus(8, "G2").cpu(96000).build(), pod), 25);  // 33 - 8
  EXPECT_EQ(gpuPackingScore(NodeBuilder().gpus(2, "T4").cpu(96000).build(), pod), 31);  // 33 - 2
}

TEST(GpuPacking, OpeningFreeGpusOnUsedNode) {
  const auto node = NodeBuilder().gpus(8, "G2").cpu(96000).used({1000, 300}).build();
  EXPECT_EQ(gpuPackingScore(node, podInfo(1000, 2, 1000)), 48);  // max(50 - 2, 33)
  EXPECT_EQ(gpuPackingScore(node, podInfo(1000, 1, 1000)), 49);
}

TEST(GpuPacking, TopsUpTightestPartlyUsedGpu) {
  // GPU 1 has 300 free, GPU 2 has 600 free: a 200 share goes to GPU 1 (ascending free).
  const auto node = NodeBuilder().gpus(4, "T4").cpu(96000).used({1000, 700, 400}).build();
  EXPECT_EQ(gpuPackingScore(node, podInfo(1000, 1, 200)), 97);  // max(100 - 30 / 10, 50)
  // A 500 share only fits GPU 2 (600 free) or the free GPU 3; tightest first is GPU 2.
  EXPECT_EQ(gpuPackingScore(node, podInfo(1000, 1, 500)), 94);  // 100 - 60 / 10
  EXPECT_EQ(gpuPackingScore(node, podInfo(1000, 0, 0)), 0);     // CPU pods: 0
}

TEST(BestFit, RawScoreAndIntegerMinMax) {
  const auto pod = podInfo(8000, 1, 1000);
  const auto tight = NodeBuilder().gpus(8, "G2").cpu(96000, 80000).used({1000, 1000, 1000, 1000, 1000, 1000}).build();
  const auto loose = NodeBuilder().gpus(8, "G2").cpu(96000).build();
  // s = ½·(16000−8000)/128000 + ½·(2000−1000)/8000 = 0.09375 → raw 90.
  EXPECT_EQ(bestFitRawScore(tight, pod), 90);
  // s = ½·88000/128000 + ½·7000/8000 = 0.78125 → raw 21.
  EXPECT_EQ(bestFitRawScore(loose, pod), 21);
  std::vector<int32_t> scores = {90, 21, 55};
  minMaxNormalize(scores);
  EXPECT_EQ(scores, (std::vector<int32_t>{100, 0, 49}));  // (55-21)*100/69 = 49
  std::vector<int32_t> equal = {40, 40};
  minMaxNormalize(equal);
  EXPECT_EQ(equal, (std::vector<int32_t>{0, 0}));
}

TEST(DotProduct, SmallProductWins) {
  const auto pod = podInfo(16000, 2, 1000);
  const auto node = NodeBuilder().gpus(8, "G2").cpu(96000, 32000).used({1000, 1000, 1000, 1000}).build();
  // u = (64000/128000, 4000/8000), v = (16000/128000, 2000/8000): d = (0.0625 + 0.125) / 2.
  EXPECT_EQ(dotProductScore(node, pod), 90);
  EXPECT_EQ(dotProductScore(NodeBuilder().gpus(8, "G2").cpu(8000).build(), pod), 0);  // CPU does not fit
}

TEST(GpuClustering, TiersBySameShape) {
  const auto oneGpu = podInfo(1000, 1, 1000);
  const uint32_t bit1 = gpuPodShapeBit(oneGpu);
  const uint32_t shareBit = gpuPodShapeBit(podInfo(1000, 1, 500));
  // 4000 milli idle of 8000: b = 25 * 4000 / 8000 = 12.
  const auto base = NodeBuilder().gpus(8, "G2").cpu(96000).used({1000, 1000, 1000, 1000});
  EXPECT_EQ(gpuClusteringScore(NodeBuilder(base).shapes(bit1).build(), oneGpu), 87);
  EXPECT_EQ(gpuClusteringScore(NodeBuilder(base).shapes(bit1 | shareBit).build(), oneGpu), 62);
  EXPECT_EQ(gpuClusteringScore(NodeBuilder(base).shapes(shareBit).build(), oneGpu), 12);
  EXPECT_EQ(gpuClusteringScore(NodeBuilder().gpus(8, "G2").cpu(96000).build(), oneGpu), 25);
  EXPECT_EQ(gpuClusteringScore(NodeBuilder(base).build(), podInfo(1000, 0, 0)), 0);
}

TEST(TypicalPods, KeepsClassesUntilNinetyFivePercent) {
  TypicalPods t;
  t.observe({1000, 0, 0, ""}, 50);
  t.observe({2000, 1000, 1, ""}, 30);
  t.observe({4000, 500, 1, ""}, 15);
  t.observe({8000, 1000, 8, ""}, 5);
  const auto c = t.classes();
  ASSERT_EQ(c.size(), 3u);  // 50 + 30 + 15 = 95 reaches the cut; the 5 % class is dropped
  EXPECT_EQ(c[0].pod.milliCpu, 1000);
  EXPECT_DOUBLE_EQ(c[0].popularity, 50.0 / 95);
  EXPECT_DOUBLE_EQ(c[1].popularity, 30.0 / 95);
  EXPECT_DOUBLE_EQ(c[2].popularity, 15.0 / 95);
}

TEST(TypicalPods, TiesPutLargerClassFirstAndModelStringIsPartOfTheKey) {
  TypicalPods t;
  t.observe({1000, 1000, 1, "V100M16|V100M32"}, 10);
  t.observe({1000, 1000, 1, "V100M16|V100M32|V100M32"}, 10);
  t.observe({2000, 500, 1, ""}, 10);
  const auto c = t.classes();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].pod.milliCpu, 2000);                     // larger CPU first
  EXPECT_EQ(c[1].pod.models, "V100M16|V100M32|V100M32");  // then the larger model string
  EXPECT_EQ(c[2].pod.models, "V100M16|V100M32");
}

// Fleet's classes split FGD's by memory: the cut and each shape's weight stay FGD's, so FGD's
// published classes are what kLeftOut returns whatever memory the pods ask for.
TEST(TypicalPods, MemorySplitsTheKeptClassesWithoutMovingTheCut) {
  constexpr int64_t GiB = int64_t{1} << 30;
  TypicalPods t;
  t.observe({1000, 0, 0, "", 2 * GiB}, 30);
  t.observe({1000, 0, 0, "", 64 * GiB}, 20);  // one CPU-only shape: 50 pods
  t.observe({2000, 1000, 1, "", 8 * GiB}, 30);
  t.observe({4000, 500, 1, "", 4 * GiB}, 6);  // one shared shape: 15 pods in three pieces
  t.observe({4000, 500, 1, "", 1 * GiB}, 5);
  t.observe({4000, 500, 1, "", 16 * GiB}, 4);
  t.observe({8000, 1000, 8, "", 32 * GiB}, 5);  // the 5 % the cut drops
  const auto blind = t.classes(-1, ClassMemory::kLeftOut);
  ASSERT_EQ(blind.size(), 3u);
  for (const auto& c : blind) EXPECT_EQ(c.pod.memory, 0);
  EXPECT_DOUBLE_EQ(blind[2].popularity, 15.0 / 95);

  const auto split = t.classes(-1, ClassMemory::kCounted);
  ASSERT_EQ(split.size(), 6u);  // pieces of the three kept shapes; the 8-GPU shape stays out
  const int64_t memory[] = {2 * GiB, 64 * GiB, 8 * GiB, 1 * GiB, 4 * GiB, 16 * GiB};
  const double popularity[] = {30.0 / 95, 20.0 / 95, 30.0 / 95, 5.0 / 95, 6.0 / 95, 4.0 / 95};
  for (size_t i = 0; i < split.size(); ++i) {
    EXPECT_EQ(split[i].pod.memory, memory[i]) << i;
    EXPECT_DOUBLE_EQ(split[i].popularity, popularity[i]) << i;
    EXPECT_EQ(split[i].pod.gpuCount, blind[i < 2 ? 0 : i < 3 ? 1 : 2].pod.gpuCount) << i;
  }
  EXPECT_FALSE(FragModel(blind).countsMemory());
  EXPECT_TRUE(FragModel(split).countsMemory());
}

// A node out of memory strands its idle GPUs as one out of CPU does, for a model that counts
// memory; a model that leaves it out does not see it.
TEST(Fgd, MemoryShortNodeStrandsItsIdleGpusWhenTheModelCountsMemory) {
  constexpr int64_t GiB = int64_t{1} << 30;
  TypicalPods t;
  t.observe({1000, 500, 1, "", 8 * GiB}, 1);
  t.observe({1000, 1000, 1, "", 8 * GiB}, 1);
  const FragModel counted(t.classes(-1, ClassMemory::kCounted));
  const FragModel blind(t.classes(-1, ClassMemory::kLeftOut));
  const auto access = counted.accessFor("A");
  const int32_t free[] = {1000, 600};
  EXPECT_DOUBLE_EQ(counted.fragmentation(access.data(), 10000, free, 16 * GiB), 300);  // as FGD
  EXPECT_DOUBLE_EQ(counted.fragmentation(access.data(), 10000, free, 4 * GiB), 1600);  // all idle
  EXPECT_DOUBLE_EQ(blind.fragmentation(access.data(), 10000, free, 4 * GiB), 300);

  // Through the cache: the pod that would leave the node 4 GiB scores that loss; FGD's does not.
  FragCache countedCache(std::make_shared<FragModel>(counted));
  FragCache blindCache(std::make_shared<FragModel>(blind));
  const auto node = NodeBuilder().gpus(2, "A").cpu(11000).memory(20 * GiB).used({0, 400}).build();
  const auto pod = podInfo(1000, 1, 500, 16 * GiB);
  // Free (1000, 100) after GPU 1: F = ½·100 + ½·100 = 100 with memory to spare, 1100 without.
  EXPECT_DOUBLE_EQ(blindCache.bestDelta(blindCache.stateOf(node), blindCache.podClassOf(pod)), 300 - 100);
  EXPECT_DOUBLE_EQ(countedCache.bestDelta(countedCache.stateOf(node), countedCache.podClassOf(pod)), 300 - 1100);
}

// Two equally popular classes: a half-GPU task and a whole-GPU task.
std::shared_ptr<const FragModel> twoClassModel() {
  TypicalPods t;
  t.observe({1000, 500, 1, ""}, 1);
  t.observe({1000, 1000, 1, ""}, 1);
  return std::make_shared<FragModel>(t.classes());
}

TEST(Fgd, FragmentationOfKnownNode) {
  const auto model = twoClassModel();
  const auto access = model->accessFor("A");
  const int32_t free[] = {1000, 600};
  // Half-GPU task fits, nothing below 500: 0. Whole-GPU task fits, 600 is too small: 600.
  EXPECT_DOUBLE_EQ(model->fragmentation(access.data(), 10000, free), 300);
  // CPU short for both: all 1600 idle is fragment.
  EXPECT_DOUBLE_EQ(model->fragmentation(access.data(), 500, free), 1600);
}

TEST(Fgd, SharedPodDeltaAndGpuChoice) {
  const auto model = twoClassModel();
  FragCache cache(model);
  const auto node = NodeBuilder().gpus(2, "A").cpu(11000, 1000).used({0, 400}).build();
  const auto pod = podInfo(1000, 1, 500);
  // On GPU 0: free (500, 600), F = ½·0 + ½·1100 = 550, Δ = −250.
  // On GPU 1: free (1000, 100), F = ½·100 + ½·100 = 100, Δ = +200 (the best).
  EXPECT_DOUBLE_EQ(cache.deltaOn(node, pod, 0), -250);
  EXPECT_DOUBLE_EQ(cache.deltaOn(node, pod, 1), 200);
  EXPECT_DOUBLE_EQ(cache.bestDelta(cache.stateOf(node), cache.podClassOf(pod)), 200);
  EXPECT_EQ(fgdScoreOfDelta(200), 54);   // ⌊100·σ(0.2)⌋
  EXPECT_EQ(fgdScoreOfDelta(0), 50);
  EXPECT_EQ(fgdScoreOfDelta(-250), 43);  // ⌊100·σ(−0.25)⌋

  auto fgd = createFgdPolicy({model});
  CycleState state;
  state.pod = pod;
  NoCluster cluster;
  ASSERT_TRUE(fgd->preFilter(state, cluster, 0).ok());  // readies the cycle's memo
  const NodeInfo* nodes[] = {&node};
  int32_t score = -1;
  fgd->score(state, 0, batchOf(nodes), {&score, 1});
  EXPECT_EQ(score, 54);
  GpuAssignment gpus;
  ASSERT_TRUE(fgd->selectGpus(state, 0, node, gpus));
  ASSERT_EQ(gpus.count, 1);
  EXPECT_EQ(gpus.index[0], 1);
  EXPECT_EQ(gpus.milliEach, 500);
}

TEST(Fgd, ModelConstraintMakesNodeNoAccess) {
  TypicalPods t;
  t.observe({1000, 1000, 1, "B|C"}, 1);
  const FragModel model(t.classes());
  const int32_t free[] = {1000};
  EXPECT_DOUBLE_EQ(model.fragmentation(model.accessFor("A").data(), 8000, free), 1000);  // no access: all idle
  EXPECT_DOUBLE_EQ(model.fragmentation(model.accessFor("C").data(), 8000, free), 0);
}

TEST(BestFitGpus, SharedPodTakesTightestGpuWholePodsLowestFree) {
  const auto node = NodeBuilder().gpus(4, "T4").cpu(96000).used({0, 600, 300, 600}).build();
  GpuAssignment g;
  ASSERT_TRUE(selectGpus(podInfo(1000, 1, 400), node, g));
  EXPECT_EQ(g.index[0], 1);  // 400 free on GPUs 1 and 3: lowest index wins the tie
  ASSERT_TRUE(selectGpus(podInfo(1000, 1, 1000), node, g));
  EXPECT_EQ(g.index[0], 0);
  EXPECT_FALSE(selectGpus(podInfo(1000, 2, 1000), node, g));
}

TEST(Registry, EveryNamedPolicyIsCreatable) {
  for (auto name : policyNames()) {
    std::string error;
    EXPECT_NE(createPolicy(name, {42, twoClassModel()}, &error), nullptr) << name << ": " << error;
  }
  std::string error;
  EXPECT_EQ(createPolicy("nope", {}, &error), nullptr);
  EXPECT_NE(error.find("unknown policy"), std::string::npos);
}

TEST(Random, SameSeedAndPodSameNode) {
  std::vector<NodeInfo> nodes(50);
  std::vector<const NodeInfo*> ptrs;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    nodes[i] = NodeBuilder().id(i).gpus(2, "T4").cpu(96000).build();
    ptrs.push_back(&nodes[i]);
  }
  codec::Pod pod;
  pod.name = "pod-1";
  auto pick = [&](uint64_t seed) {
    auto plugin = createPolicy("random", {seed, nullptr}, nullptr);
    CycleState state;
    state.pod.pod = &pod;
    struct : ClusterState {
      uint32_t zoneCount() const override { return 1; }
      void workloadZoneCounts(std::string_view, std::span<uint32_t>) const override {}
    } cluster;
    plugin->preScore(state, cluster, 0, batchOf(ptrs));
    std::vector<int32_t> scores(ptrs.size());
    plugin->score(state, 0, batchOf(ptrs), scores);
    int winners = 0, at = -1;
    for (size_t i = 0; i < scores.size(); ++i) {
      if (scores[i] == kMaxNodeScore) ++winners, at = static_cast<int>(i);
    }
    EXPECT_EQ(winners, 1);
    return at;
  };
  EXPECT_EQ(pick(42), pick(42));
  int differs = 0;
  for (uint64_t s = 43; s < 53; ++s) differs += pick(s) != pick(42);
  EXPECT_GT(differs, 0);
}

}  // namespace
}  // namespace fleetsched::plugins::policies

namespace fleetsched::plugins::policies {
namespace {

TEST(RegistryTable, PoliciesAreRegisteredByPluginName) {
  for (const char* name : {"Random", "DotProduct", "GpuClustering", "GpuPacking", "BestFit", "FGD", "Fleet"}) {
    std::string error;
    auto p = createPlugin(name, YAML::Node(), error);
    ASSERT_NE(p, nullptr) << name << ": " << error;
    EXPECT_EQ(p->name(), name);
    EXPECT_TRUE(p->scores());
  }
  std::string error;
  EXPECT_EQ(createPlugin("FGD", YAML::Load("{typicalPods: 3}"), error), nullptr);
  EXPECT_NE(error.find("typicalPods"), std::string::npos) << error;
  EXPECT_NE(createPlugin("Random", YAML::Load("{seed: 7}"), error), nullptr) << error;
}

TEST(FgdOnline, LearnsTypicalPodsFromThePodsItSees) {
  std::string error;
  auto fgd = createPlugin("FGD", YAML::Node(), error);
  ASSERT_NE(fgd, nullptr) << error;
  NoCluster cluster;
  // Whole-GPU pods only: a node whose free GPU is split is fragmented for them.
  const auto whole = NodeBuilder().id(0).gpus(2, "A").cpu(64000).used({1000, 0}).build();
  const auto split = NodeBuilder().id(1).gpus(2, "A").cpu(64000).used({500, 500}).build();
  const NodeInfo* nodes[] = {&whole, &split};
  CycleState state;
  for (int i = 0; i < 8; ++i) {
    state.reset();
    state.pod = podInfo(4000, 1, 1000);
    ASSERT_TRUE(fgd->preFilter(state, cluster, 0).ok());
  }
  // A 500 pod: on `split` it closes a fragment (Δ > 0); on `whole` it breaks the free GPU.
  state.reset();
  state.pod = podInfo(1000, 1, 500);
  ASSERT_TRUE(fgd->preFilter(state, cluster, 0).ok());
  int32_t scores[2] = {-1, -1};
  fgd->score(state, 0, batchOf(nodes), scores);
  EXPECT_GT(scores[1], scores[0]);
  EXPECT_GT(scores[1], 50);
}

// Fleet ranks a whole-GPU pod by Δ with an 80-milli tolerance, the smallest name winning among
// the nodes within it; FGD ranks by its score alone. Typical pods: 5 % need 4 CPUs and a GPU,
// 95 % a GPU and little CPU. The pod takes 2 CPUs and a GPU: on a node left with 5 CPUs it
// strands the big class (Δ = −50 with two GPUs, −150 with four); with room it changes nothing.
TEST(Fleet, WholeGpuPodTakesTheFirstNameWithinTheTolerance) {
  auto model = std::make_shared<FragModel>(std::vector<TypicalClass>{
      {{4000, 1000, 1, ""}, 5, 0.05}, {{100, 1000, 1, ""}, 95, 0.95}});
  NoCluster cluster;
  const auto far = NodeBuilder().id(0).name("node-0").gpus(4, "A").cpu(5000).build();     // Δ −150
  const auto near = NodeBuilder().id(1).name("node-a").gpus(2, "A").cpu(5000).build();    // Δ −50
  const auto roomy = NodeBuilder().id(2).name("node-b").gpus(2, "A").cpu(64000).build();  // Δ 0
  const NodeInfo* nodes[] = {&roomy, &far, &near};
  auto winner = [&](std::unique_ptr<Plugin> p) {
    CycleState state;
    state.pod = podInfo(2000, 1, 1000);
    EXPECT_TRUE(p->preFilter(state, cluster, 0).ok());
    int32_t scores[3] = {-1, -1, -1};
    p->score(state, 0, batchOf(nodes), scores);
    p->normalizeScore(state, 0, batchOf(nodes), scores);
    const auto top = std::max_element(scores, scores + 3);
    EXPECT_EQ(std::count(scores, scores + 3, *top), 1);
    return std::string(nodes[top - scores]->name);
  };
  EXPECT_EQ(winner(createFleetPolicy({model})), "node-a");
  EXPECT_EQ(winner(createFgdPolicy({model})), "node-b");
}

// A pod of several GPUs ties no nodes: it takes the best Δ even when a smaller name is within
// the one-GPU tolerance. Typical pods: 3 % need 4 CPUs and a GPU. The pod takes 2 CPUs and 2
// GPUs: on node-0 (5 CPUs) it strands the big class on the 2 GPUs left (Δ = −60); on node-b,
// with room, it changes nothing.
TEST(Fleet, MultiGpuPodTakesTheBestDelta) {
  auto model = std::make_shared<FragModel>(std::vector<TypicalClass>{
      {{4000, 1000, 1, ""}, 3, 0.03}, {{100, 1000, 1, ""}, 97, 0.97}});
  NoCluster cluster;
  const auto tight = NodeBuilder().id(0).name("node-0").gpus(4, "A").cpu(5000).build();   // Δ −60
  const auto roomy = NodeBuilder().id(1).name("node-b").gpus(4, "A").cpu(64000).build();  // Δ 0
  const NodeInfo* nodes[] = {&roomy, &tight};
  auto fleet = createFleetPolicy({model});
  CycleState state;
  state.pod = podInfo(2000, 2, 1000);
  ASSERT_TRUE(fleet->preFilter(state, cluster, 0).ok());
  int32_t scores[2] = {-1, -1};
  fleet->score(state, 0, batchOf(nodes), scores);
  fleet->normalizeScore(state, 0, batchOf(nodes), scores);
  EXPECT_EQ(scores[0], kMaxNodeScore);
  EXPECT_LT(scores[1], kMaxNodeScore);
}

// Inside the node, Fleet picks a shared pod's GPU by the rule that picked the node (within 10
// milli of the best Δ, the lowest index), FGD by its binned score. Typical pods: 95 % need a whole
// GPU, 5 % 350 milli. A 60-milli pod on GPU 0 (370 free) leaves 310, too small for the 350 class
// (Δ = 0.95·60 − 0.05·310 = 41.5); on GPU 1 (500 free) it leaves 440 (Δ = 57). Both Δ fall in
// FGD's bin 51, so FGD takes GPU 0; GPU 0 is 15.5 below the best, so Fleet takes GPU 1.
TEST(Fleet, SharedPodTakesItsGpuByTheRuleThatTookTheNode) {
  auto model = std::make_shared<FragModel>(std::vector<TypicalClass>{
      {{100, 1000, 1, ""}, 95, 0.95}, {{100, 350, 1, ""}, 5, 0.05}});
  const auto node = NodeBuilder().id(0).name("node-a").gpus(2, "A").cpu(64000).used({630, 500}).build();
  CycleState state;
  state.pod = podInfo(100, 1, 60);
  FragCache cache(model);
  EXPECT_DOUBLE_EQ(cache.deltaOn(node, state.pod, 0), 41.5);
  EXPECT_DOUBLE_EQ(cache.deltaOn(node, state.pod, 1), 57);
  EXPECT_EQ(fgdScoreOfDelta(41.5), fgdScoreOfDelta(57));
  NoCluster cluster;
  auto gpuOf = [&](std::unique_ptr<Plugin> p) {
    EXPECT_TRUE(p->preFilter(state, cluster, 0).ok());
    GpuAssignment gpus;
    EXPECT_TRUE(p->selectGpus(state, 0, node, gpus));
    EXPECT_EQ(gpus.count, 1);
    EXPECT_EQ(gpus.milliEach, 60);
    return gpus.index[0];
  };
  EXPECT_EQ(gpuOf(createFgdPolicy({model})), 0);
  EXPECT_EQ(gpuOf(createFleetPolicy({model})), 1);
}

// A CPU-only pod that changes no node's fragmentation goes where the GPUs are used up.
TEST(Fleet, CpuPodTakesTheNodeWithTheLeastIdleGpu) {
  auto model = std::make_shared<FragModel>(std::vector<TypicalClass>{{{1000, 1000, 1, ""}, 1, 1.0}});
  NoCluster cluster;
  const auto idle = NodeBuilder().id(0).name("node-a").gpus(2, "A").cpu(64000).build();
  const auto busy = NodeBuilder().id(1).name("node-b").gpus(2, "A").cpu(64000).used({1000, 0}).build();
  const NodeInfo* nodes[] = {&idle, &busy};
  auto fleet = createFleetPolicy({model});
  CycleState state;
  state.pod = podInfo(1000, 0, 0);
  ASSERT_TRUE(fleet->preFilter(state, cluster, 0).ok());
  int32_t scores[2] = {-1, -1};
  fleet->score(state, 0, batchOf(nodes), scores);
  EXPECT_EQ(scores[0], scores[1]);  // Δ = 0 on both
  fleet->normalizeScore(state, 0, batchOf(nodes), scores);
  EXPECT_EQ(scores[1], kMaxNodeScore);
  EXPECT_LT(scores[0], kMaxNodeScore);
}

// kube-scheduler picks at random among equal scores; FGD's ranking means the smallest name, so
// the plugin leaves exactly one node on top.
TEST(Fgd, OneNodeKeepsTheTopScoreTheSmallestName) {
  std::string error;
  auto fgd = createPlugin("FGD", YAML::Node(), error);
  ASSERT_NE(fgd, nullptr) << error;
  NoCluster cluster;
  const auto b = NodeBuilder().id(0).name("node-b").gpus(2, "A").cpu(64000).build();
  const auto a = NodeBuilder().id(1).name("node-a").gpus(2, "A").cpu(64000).build();
  const auto c = NodeBuilder().id(2).name("node-c").gpus(2, "A").cpu(64000).build();
  const NodeInfo* nodes[] = {&b, &a, &c};
  CycleState state;
  state.pod = podInfo(1000, 1, 1000);
  ASSERT_TRUE(fgd->preFilter(state, cluster, 0).ok());
  int32_t scores[3] = {-1, -1, -1};
  fgd->score(state, 0, batchOf(nodes), scores);
  ASSERT_EQ(scores[0], scores[1]);  // the same node state: the same score
  ASSERT_EQ(scores[1], scores[2]);
  const int32_t top = scores[0];
  fgd->normalizeScore(state, 0, batchOf(nodes), scores);
  EXPECT_EQ(scores[1], top);  // node-a
  EXPECT_EQ(scores[0], top - 1);
  EXPECT_EQ(scores[2], top - 1);
}

TEST(KeepFirstNameOnTop, LiftsTheFirstWhenEveryNodeScoresZero) {
  const auto x = NodeBuilder().name("x").build();
  const auto w = NodeBuilder().name("w").build();
  const NodeInfo* nodes[] = {&x, &w};
  int32_t scores[2] = {0, 0};
  keepFirstNameOnTop(nodes, scores);
  EXPECT_EQ(scores[0], 0);
  EXPECT_EQ(scores[1], 1);
}

}  // namespace
}  // namespace fleetsched::plugins::policies
