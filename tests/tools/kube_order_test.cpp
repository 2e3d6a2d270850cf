// The load generator's model of kube-scheduler's node order. The expected numbers of the first
// two tests are upstream's own test tables (k8s.io/kubernetes v1.36.3:
// pkg/scheduler/framework/parallelize/parallelism_test.go TestChunkSizeFor and
// pkg/scheduler/schedule_one_test.go TestNumFeasibleNodesToFind), not values computed here.
#include "tools/loadgen/kube_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace fleetsched::tools::loadgen {
namespace {

TEST(KubeOrder, ChunkSizeFollowsUpstreamTable) {
  EXPECT_EQ(kubeChunkSize(32, 16), 3u);
  EXPECT_EQ(kubeChunkSize(16, 16), 2u);
  EXPECT_EQ(kubeChunkSize(1, 16), 1u);
  EXPECT_EQ(kubeChunkSize(0, 16), 1u);
  EXPECT_EQ(kubeChunkSize(5000, 16), 70u);  // ⌊√5000⌋; 5000/16 + 1 = 313 is larger
}

TEST(KubeOrder, NodesToFindFollowsUpstreamTable) {
  EXPECT_EQ(kubeNodesToFind(10, 0), 10u);
  EXPECT_EQ(kubeNodesToFind(10, 40), 10u);
  EXPECT_EQ(kubeNodesToFind(1000, 0), 420u);
  EXPECT_EQ(kubeNodesToFind(1000, 40), 400u);
  EXPECT_EQ(kubeNodesToFind(6000, 0), 300u);
  EXPECT_EQ(kubeNodesToFind(6000, 40), 2400u);
  EXPECT_EQ(kubeNodesToFind(5000, 100), 5000u);
}

TEST(KubeOrder, EveryNodeOnceInAnInterleavedOrder) {
  std::mt19937_64 rng(1);
  const size_t n = 5000, chunk = kubeChunkSize(n, 16);
  const std::vector<uint32_t> order = kubeFilterOrder(n, 0, n, 16, rng);
  ASSERT_EQ(order.size(), n);
  EXPECT_EQ(std::set<uint32_t>(order.begin(), order.end()).size(), n);
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
  // The 16 goroutines run at once: the first 32 nodes come from most of the first 16 chunks.
  std::set<uint32_t> chunks;
  for (size_t i = 0; i < 32; ++i) chunks.insert(order[i] / static_cast<uint32_t>(chunk));
  EXPECT_GE(chunks.size(), 12u);
  EXPECT_LE(*chunks.rbegin(), 15u);
  // Within one chunk the goroutine goes in order.
  std::vector<uint32_t> firstChunk;
  for (uint32_t p : order) {
    if (p < chunk) firstChunk.push_back(p);
  }
  EXPECT_TRUE(std::is_sorted(firstChunk.begin(), firstChunk.end()));
}

TEST(KubeOrder, EachCycleDiffersAndStartsWhereTheLastStopped) {
  std::mt19937_64 rng(7);
  const size_t n = 1000, found = kubeNodesToFind(n, 0);
  const std::vector<uint32_t> a = kubeFilterOrder(n, 0, found, 16, rng);
  const std::vector<uint32_t> b = kubeFilterOrder(n, 0, found, 16, rng);
  EXPECT_NE(a, b);
  const std::vector<uint32_t> c = kubeFilterOrder(n, 900, found, 16, rng);
  ASSERT_EQ(c.size(), found);
  // Checked from 900 on, wrapping: the 420 found lie in [900, 1000) ∪ [0, 320 + a chunk).
  for (uint32_t p : c) EXPECT_TRUE(p >= 900 || p < 320 + kubeChunkSize(n, 16) * 16) << p;
  EXPECT_EQ(std::set<uint32_t>(c.begin(), c.end()).size(), found);
}

TEST(KubeOrder, ZonesAreTakenRoundRobin) {
  EXPECT_EQ(kubeZoneRoundRobin({"a", "a", "b", "c", "b", "a"}), (std::vector<uint32_t>{0, 2, 3, 1, 4, 5}));
  EXPECT_EQ(kubeZoneRoundRobin({}), std::vector<uint32_t>{});
}

}  // namespace
}  // namespace fleetsched::tools::loadgen
