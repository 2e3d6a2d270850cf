// The incremental FGD cache must agree with a from-scratch computation however nodes change.
#include "plugins/gpu_select.h"
#include "plugins/policies/fgd/frag_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "plugins/policies/fgd/online_typical.h"
#include "plugins/policies/policy_common.h"
#include "tests/replay/node_builder.h"

namespace fleetsched::plugins::policies {
namespace {

using testing::NodeBuilder;
using testing::podInfo;

constexpr int64_t GiB = int64_t{1} << 30;

// Classes of several memory sizes; Fleet's model counts it, FGD's leaves it out.
std::shared_ptr<const FragModel> mixedModel(ClassMemory memory) {
  TypicalPods t;
  t.observe({2000, 0, 0, "", 4 * GiB}, 6);
  t.observe({2000, 0, 0, "", 48 * GiB}, 4);
  t.observe({4000, 250, 1, "", 8 * GiB}, 20);
  t.observe({8000, 500, 1, "", 16 * GiB}, 15);
  t.observe({6000, 810, 1, "", 24 * GiB}, 12);
  t.observe({12000, 1000, 1, "", 32 * GiB}, 20);
  t.observe({12000, 1000, 1, "", 96 * GiB}, 10);
  t.observe({24000, 1000, 2, "A|B", 64 * GiB}, 8);
  t.observe({64000, 1000, 8, "", 256 * GiB}, 5);
  return std::make_shared<FragModel>(t.classes(-1, memory));
}

// max over the candidate GPUs of F(x) − F(x ⊕ p), computed with nothing cached.
double deltaFromScratch(const FragModel& model, const NodeInfo& node, const PodInfo& pod) {
  const auto access = model.accessFor(node.gpuModelName);
  std::vector<int32_t> free(node.gpuCount);
  for (int i = 0; i < node.gpuCount; ++i) free[i] = node.gpuFreeMilli(i);
  const int64_t cpu = cpuLeft(node);
  const int64_t memory = node.allocMemory - node.usedMemory;
  const int64_t memoryAfter = memory - pod.memory;
  const double before = model.fragmentation(access.data(), cpu, free, memory);
  if (!pod.wantsGpu()) return before - model.fragmentation(access.data(), cpu - pod.milliCpu, free, memoryAfter);
  if (isSharedGpuPod(pod)) {
    double best = FragCache::kNoFit;
    for (int j = 0; j < node.gpuCount; ++j) {
      if (free[j] < pod.gpuMilli) continue;
      auto after = free;
      after[j] -= pod.gpuMilli;
      best = std::max(best, before - model.fragmentation(access.data(), cpu - pod.milliCpu, after, memoryAfter));
    }
    return best;
  }
  GpuAssignment g;
  if (!pickPackedGpus(node, pod.gpuCount, pod.gpuMilli, g)) return FragCache::kNoFit;
  auto after = free;
  for (int i = 0; i < g.count; ++i) after[g.index[i]] -= pod.gpuMilli;
  return before - model.fragmentation(access.data(), cpu - pod.milliCpu, after, memoryAfter);
}

class FragCacheIncremental : public ::testing::TestWithParam<ClassMemory> {};

TEST_P(FragCacheIncremental, EqualsFromScratchAfterRandomPlacements) {
  const auto model = mixedModel(GetParam());
  ASSERT_EQ(model->countsMemory(), GetParam() == ClassMemory::kCounted);
  FragCache cache(model);
  const char* models[] = {"A", "B", "C"};
  std::vector<NodeInfo> nodes;
  for (uint32_t i = 0; i < 40; ++i) {
    const int gpus = (i % 4 == 0) ? 8 : (i % 4 == 1) ? 4 : (i % 4 == 2) ? 2 : 1;
    nodes.push_back(NodeBuilder().id(i).gpus(gpus, models[i % 3]).cpu(96000).memory(384 * GiB).build());
  }
  const std::vector<PodInfo> pods = {
      podInfo(2000, 0, 0, 4 * GiB),     podInfo(4000, 1, 250, 8 * GiB),    podInfo(8000, 1, 500, 16 * GiB),
      podInfo(6000, 1, 810, 24 * GiB),  podInfo(12000, 1, 1000, 32 * GiB), podInfo(24000, 2, 1000, 64 * GiB),
      podInfo(3000, 1, 460, 40 * GiB),  podInfo(64000, 8, 1000, 256 * GiB), podInfo(2000, 0, 0, 48 * GiB)};
  std::mt19937 rng(7);
  int placed = 0;
  for (int step = 0; step < 3000; ++step) {
    const PodInfo& pod = pods[rng() % pods.size()];
    NodeInfo& node = nodes[rng() % nodes.size()];
    // Scoring first (fills the memo), then checking every node against a fresh computation.
    const uint32_t cls = cache.podClassOf(pod);
    if (step % 50 == 0) {
      for (const auto& n : nodes) {
        ASSERT_DOUBLE_EQ(cache.fragmentationOf(cache.stateOf(n)), cache.fragmentationFromScratch(n));
        if (cpuLeft(n) < pod.milliCpu || n.allocMemory - n.usedMemory < pod.memory) continue;
        const double want = deltaFromScratch(*model, n, pod);
        const double got = cache.bestDelta(cache.stateOf(n), cls);
        if (want == FragCache::kNoFit) {
          ASSERT_EQ(got, FragCache::kNoFit);
        } else {
          ASSERT_NEAR(got, want, 1e-9) << "step " << step << " node " << n.id;
        }
      }
    } else {
      cache.bestDelta(cache.stateOf(node), cls);
    }
    // Place the pod where it fits, like Reserve would.
    GpuAssignment g;
    if (cpuLeft(node) < pod.milliCpu || node.allocMemory - node.usedMemory < pod.memory ||
        (pod.wantsGpu() && !selectGpus(pod, node, g))) {
      continue;
    }
    node.usedMilliCpu += pod.milliCpu;
    node.usedMemory += pod.memory;
    for (int i = 0; i < g.count; ++i) node.gpuUsedMilli[g.index[i]] = static_cast<uint16_t>(node.gpuUsedMilli[g.index[i]] + g.milliEach);
    ++placed;
  }
  EXPECT_GT(placed, 100);
  EXPECT_GT(cache.stateCount(), 50u);
}

INSTANTIATE_TEST_SUITE_P(Memory, FragCacheIncremental,
                         ::testing::Values(ClassMemory::kLeftOut, ClassMemory::kCounted),
                         [](const auto& info) { return info.param == ClassMemory::kCounted ? "Counted" : "LeftOut"; });

// kube-scheduler asks about a pod in filter, in prioritize and on every retry: it is one pod of
// the workload, so online learning counts it once. Pods without a UID (replay) count each time.
TEST(OnlineTypicalPods, CountsAPodOncePerUid) {
  OnlineTypicalPods online(95, ClassMemory::kLeftOut);
  codec::Pod a, b, anonymous;
  a.uid = "uid-a";
  b.uid = "uid-b";
  for (const codec::Pod* p : {&a, &a, &b, &a, &anonymous, &anonymous}) {
    PodInfo info;
    info.pod = p;
    info.milliCpu = 1000;
    ASSERT_NE(online.observe(info), nullptr);
  }
  EXPECT_EQ(online.observed(), 4u);  // a, b, and the anonymous pod twice
}

// The server's Fleet learns classes with memory, its FGD the published ones without.
TEST(OnlineTypicalPods, CountsMemoryOnlyWhenAsked) {
  PodInfo info;
  info.milliCpu = 1000;
  info.memory = 4 * GiB;
  OnlineTypicalPods fleet(95, ClassMemory::kCounted), fgd(95, ClassMemory::kLeftOut);
  EXPECT_TRUE(fleet.observe(info)->countsMemory());
  EXPECT_FALSE(fgd.observe(info)->countsMemory());
}

TEST(FragCache, BucketsSumToIdleGpu) {
  const auto model = mixedModel(ClassMemory::kCounted);
  FragCache cache(model);
  const auto node =
      NodeBuilder().gpus(8, "A").cpu(96000, 90000).memory(384 * GiB, 360 * GiB).used({1000, 810, 500, 250}).build();
  const auto b = cache.bucketsOf(node);
  double sum = 0;
  for (double v : b) sum += v;
  EXPECT_NEAR(sum, idleGpuMilli(node), 1e-9);  // popularities sum to 1
  EXPECT_NEAR(sum - b[kQ3Satisfied], cache.fragmentationFromScratch(node), 1e-9);
}

}  // namespace
}  // namespace fleetsched::plugins::policies
