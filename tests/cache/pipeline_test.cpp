// The cache as the plugins see it: the default profile filtering the demo fleet through a
// Snapshot, and a reservation changing the next pod's verdicts.
#include <gtest/gtest.h>

#include <set>

#include "cache/cache.h"
#include "cache/demo_fleet.h"
#include "plugins/config.h"
#include "tests/cache/fixtures.h"

namespace fleetsched::cache {
namespace {

using testing::PodMaker;
using testing::Strings;

class PipelineTest : public ::testing::Test {
 protected:
  PipelineTest() : config_(plugins::defaultConfig()), reader_(cache_) {
    auto w = cache_.write();
    w.replaceNodes(demoFleet().nodes);
  }

  // Names of the nodes the default profile accepts for `pod`.
  std::set<std::string> feasible(const codec::Pod& pod) {
    Snapshot snap = reader_.acquire();
    std::vector<const plugins::NodeInfo*> nodes;
    snap.collect(nodes);
    std::vector<plugins::Status> verdicts(nodes.size());
    plugins::CycleState state;
    plugins::ProfileScratch scratch;
    const plugins::Profile& profile = config_.profileFor(pod);
    std::set<std::string> out;
    for (const plugins::NodeInfo* n : profile.runFilter(pod, state, snap, nodes, verdicts, scratch)) {
      out.emplace(n->name);
    }
    return out;
  }
  std::set<std::string> nodesWithModel(std::string_view model) {
    Snapshot snap = reader_.acquire();
    std::set<std::string> out;
    snap.forEachNode([&](const plugins::NodeInfo& n) {
      if (n.gpuModelName == model && n.capacityType != plugins::CapacityType::Spot) out.emplace(n.name);
    });
    return out;
  }

  Strings s_;
  plugins::Config config_;
  Cache cache_;
  Reader reader_;
};

TEST_F(PipelineTest, DemoFleetAnswersAnEightGpuPod) {
  const codec::Pod pod = PodMaker(s_, "train").cpu(8000).memory(int64_t{64} << 30).gpus(8).build();
  std::set<std::string> want = nodesWithModel("NVIDIA-A100-SXM4-80GB");
  want.merge(nodesWithModel("NVIDIA-H100-80GB-HBM3"));
  ASSERT_EQ(want.size(), 12U);
  EXPECT_EQ(feasible(pod), want);
}

TEST_F(PipelineTest, ReservationIsSeenByTheNextFilter) {
  const codec::Pod pod = PodMaker(s_, "train").cpu(8000).gpus(8).build();
  const std::set<std::string> before = feasible(pod);
  ASSERT_FALSE(before.empty());
  const std::string taken = *before.begin();
  ReservationRequest r{.podUid = "first", .node = taken, .milliCpu = 8000, .gpuResource = "nvidia.com/gpu",
                       .gpuAmount = 8};
  r.gpus.count = 8;
  for (uint8_t i = 0; i < 8; ++i) r.gpus.index[i] = i;
  r.gpus.milliEach = 1000;
  ASSERT_EQ(cache_.reserve(r, Clock::now()), ReserveResult::Reserved);
  std::set<std::string> after = feasible(pod);
  EXPECT_FALSE(after.contains(taken));
  EXPECT_EQ(after.size(), before.size() - 1);
  // Released by TTL: the node is back.
  cache_.expire(Clock::now() + std::chrono::hours(1));
  EXPECT_EQ(feasible(pod), before);
}

}  // namespace
}  // namespace fleetsched::cache
