// The pipeline's allocation promise: with a warm CycleState and ProfileScratch, a cycle over
// passing nodes allocates nothing, and failing nodes cost allocations per distinct reason, not
// per node. Counts every operator new in this test binary.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "fixtures.h"

namespace {
std::atomic<long> gAllocations{0};
}  // namespace

void* operator new(size_t n) {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace fleetsched::plugins {
namespace {

using testing::FakeCluster;
using testing::NodeBuilder;
using testing::Nodes;
using testing::PodBuilder;

long cycleAllocations(const Profile& profile, const codec::Pod& pod, const Nodes& nodes, const ClusterState& cluster,
                      CycleState& state, ProfileScratch& scratch) {
  std::vector<Status> out(nodes.size());
  std::vector<int32_t> scores(nodes.size());
  const long before = gAllocations.load();
  const NodeSpan feasible = profile.runFilter(pod, state, cluster, nodes.span(), out, scratch);
  profile.extenderScores(state, cluster, scratch.batch(feasible, profile.gpuResources()),
                         std::span<int32_t>(scores.data(), feasible.size()), scratch);
  GpuAssignment a;
  if (!feasible.empty()) profile.selectGpus(state, *feasible[0], a);
  return gAllocations.load() - before;
}

TEST(Allocation, WarmCycleOverPassingNodesAllocatesNothing) {
  const Config config = defaultConfig();
  FakeCluster cluster;
  cluster.set("ml/Job/train", 1, 2);
  Nodes nodes;
  for (int i = 0; i < 500; ++i) {
    nodes.add(NodeBuilder().gpus(8).usedWhole(i % 6).zone(static_cast<uint16_t>(1 + i % 3)).build());
  }
  const auto pod = PodBuilder().ns("ml").owner("Job", "train").gpu(2).build();
  CycleState state;
  ProfileScratch scratch;
  // The first cycle grows the scratch and fills the plugin slots (and proves the counter works).
  EXPECT_GT(cycleAllocations(config.profiles()[0], pod, nodes, cluster, state, scratch), 0);
  EXPECT_EQ(cycleAllocations(config.profiles()[0], pod, nodes, cluster, state, scratch), 0);
  // A different pod through the same state and scratch: still nothing.
  const auto shared = PodBuilder().ns("ml").label("fleetsched.io/workload", "svc").gpu(1).milli(500).build();
  cycleAllocations(config.profiles()[0], shared, nodes, cluster, state, scratch);
  EXPECT_EQ(cycleAllocations(config.profiles()[0], shared, nodes, cluster, state, scratch), 0);
}

TEST(Allocation, FailingNodesAllocatePerDistinctReason) {
  const Config config = defaultConfig();
  FakeCluster cluster;
  Nodes nodes;
  for (int i = 0; i < 1000; ++i) {
    nodes.add(i % 2 ? NodeBuilder().gpus(8).usedWhole(7).build() : NodeBuilder().gpus(4).usedWhole(4).build());
  }
  const auto pod = PodBuilder().gpu(2).build();
  CycleState state;
  ProfileScratch scratch;
  cycleAllocations(config.profiles()[0], pod, nodes, cluster, state, scratch);
  // Two distinct reasons, a few allocations each (the string, the deque block), not 1000.
  const long n = cycleAllocations(config.profiles()[0], pod, nodes, cluster, state, scratch);
  EXPECT_GT(n, 0);
  EXPECT_LE(n, 8);
}

}  // namespace
}  // namespace fleetsched::plugins
