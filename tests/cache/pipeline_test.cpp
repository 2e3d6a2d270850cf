// The cache as the plugins see it: the default profile filtering the demo fleet through a
// Snapshot, a reservation changing the next pod's verdicts, and a cache built from a profile
// reading nodes and pods the way that profile's plugins do.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "cache/demo_fleet.h"
#include "plugins/config.h"
#include "tests/cache/fixtures.h"

namespace fleetsched::cache {
namespace {

using testing::NodeMaker;
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

// A user's profile for a fleet of AMD GPUs: what `serve --config` was given when the cache was
// built with the default reading and showed every node with 0 GPUs.
constexpr const char* kAmdProfile = R"(
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
    args: {resourceNames: [amd.com/gpu], productLabel: amd.com/gpu.product-name}
)";

TEST(ProfileReading, GpuResourceNamesReachTheCache) {
  std::string error;
  const auto config = plugins::loadConfig(kAmdProfile, error);
  ASSERT_TRUE(config) << error;
  Cache cache(config->interpretation());  // as serve builds it
  Strings s;
  for (const char* zone : {"zone-a", "zone-b", "zone-c", "zone-a"}) {
    const std::string name = "amd-" + std::to_string(cache.stats().nodes);
    cache.upsertNode(NodeMaker(s, name)
                         .zone(zone)
                         .scalar("amd.com/gpu", 8)
                         .label("amd.com/gpu.product-name", "AMD_Instinct_MI300X_OAM")
                         .cpu(96000)
                         .build());
  }
  Reader reader(cache);
  {
    Snapshot snap = reader.acquire();
    ASSERT_EQ(snap.nodeCount(), 4U);
    snap.forEachNode([](const plugins::NodeInfo& n) {
      EXPECT_EQ(n.gpuCount, 8) << n.name;
      ASSERT_GE(n.scalarCount, 1) << n.name;
      EXPECT_EQ(n.scalars[0].name, "amd.com/gpu") << n.name;
      EXPECT_EQ(n.scalars[0].allocatable, 8) << n.name;
      EXPECT_EQ(n.gpuModelName, "AMD_Instinct_MI300X_OAM") << n.name;
    });
  }

  // A pod asking for two AMD GPUs fits every node; the best one gives it two GPUs, and the
  // reservation the binder takes shows on that node.
  const codec::Pod pod = PodMaker(s, "train").cpu(4000).gpus(2, "amd.com/gpu").build();
  const plugins::Profile& profile = config->profileFor(pod);
  Snapshot snap = reader.acquire();
  std::vector<const plugins::NodeInfo*> nodes;
  snap.collect(nodes);
  std::vector<plugins::Status> verdicts(nodes.size());
  plugins::CycleState state;
  plugins::ProfileScratch scratch;
  const plugins::NodeSpan feasible = profile.runFilter(pod, state, snap, nodes, verdicts, scratch);
  for (size_t i = 0; i < nodes.size(); ++i)
    EXPECT_TRUE(verdicts[i].ok()) << nodes[i]->name << ": " << verdicts[i].reason;
  ASSERT_EQ(feasible.size(), 4U);
  const auto totals = profile.scoreTotals(state, snap, scratch.batch(feasible, profile.gpuResources()), scratch);
  const size_t best = static_cast<size_t>(std::max_element(totals.begin(), totals.end()) - totals.begin());
  const plugins::NodeInfo& chosen = *feasible[best];
  plugins::GpuAssignment gpus;
  ASSERT_TRUE(profile.selectGpus(state, chosen, gpus));
  ASSERT_EQ(gpus.count, 2);
  const std::string node(chosen.name);
  ReservationRequest r{.podUid = "train",
                       .node = node,
                       .milliCpu = 4000,
                       .gpuResource = "amd.com/gpu",
                       .gpuAmount = 2,
                       .gpus = gpus};
  snap = Snapshot();
  ASSERT_EQ(cache.reserve(r, Clock::now()), ReserveResult::Reserved);
  snap = reader.acquire();
  const plugins::NodeInfo* after = snap.find(node);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->scalars[0].used, 2);
  int taken = 0;
  for (int g = 0; g < after->gpuCount; ++g) taken += after->gpuUsedMilli[g] == plugins::kMilliPerGpu;
  EXPECT_EQ(taken, 2);
}

// Two profiles that name workloads differently, as in docs/configuration.md: every pod is counted
// under the key its own profile's Zone plugin asks about.
constexpr const char* kTrainingProfiles = R"(
apiVersion: fleetsched.io/v1alpha1
kind: FleetschedConfiguration
profiles:
- name: default
  plugins:
  - {name: GPU, weight: 10}
  - {name: Zone, weight: 3}
- name: training
  plugins:
  - {name: Zone, weight: 1}
  pluginConfig:
  - name: Zone
    args: {workloadLabels: [training.kubeflow.org/job-name, fleetsched.io/workload]}
)";

TEST(ProfileReading, WorkloadLabelsReachTheZoneCounts) {
  std::string error;
  const auto config = plugins::loadConfig(kTrainingProfiles, error);
  ASSERT_TRUE(config) << error;
  Cache cache(config->interpretation());  // as serve builds it
  Strings s;
  for (const char* zone : {"a", "b", "c"}) {
    cache.upsertNode(
        NodeMaker(s, std::string("gpu-") + zone).zone(std::string("zone-") + zone).gpus(8).build());
  }
  // Gang members of job "bert" (scheduled by the training profile) in zones a, a, b. They also
  // carry fleetsched.io/workload, which the training profile reads only after the job name.
  int uid = 0;
  for (const char* node : {"gpu-a", "gpu-a", "gpu-b"}) {
    cache.upsertPod(PodMaker(s, "bert-" + std::to_string(uid++))
                        .on(node)
                        .gpus(1)
                        .schedulerName("training")
                        .label("training.kubeflow.org/job-name", "bert")
                        .label("fleetsched.io/workload", "shared")
                        .build());
  }
  // Pods of the default profile are keyed by fleetsched.io/workload.
  cache.upsertPod(PodMaker(s, "web-0").on("gpu-c").gpus(1).label("fleetsched.io/workload", "shared").build());

  Reader reader(cache);
  Snapshot snap = reader.acquire();
  auto counts = [&](std::string_view key) {
    std::vector<uint32_t> perZone(snap.zoneCount(), 0);
    snap.workloadZoneCounts(key, perZone);
    return std::vector<uint32_t>{perZone[snap.find("gpu-a")->zone], perZone[snap.find("gpu-b")->zone],
                                 perZone[snap.find("gpu-c")->zone]};
  };
  EXPECT_EQ(counts("default/label/bert"), (std::vector<uint32_t>{2, 1, 0}));
  EXPECT_EQ(counts("default/label/shared"), (std::vector<uint32_t>{0, 0, 1}));

  // The next member of the gang: the training profile's Zone plugin spreads it to zone c.
  const codec::Pod next = PodMaker(s, "bert-next")
                              .gpus(1)
                              .schedulerName("training")
                              .label("training.kubeflow.org/job-name", "bert")
                              .build();
  const plugins::Profile& profile = config->profileFor(next);
  ASSERT_EQ(profile.name(), "training");
  std::vector<const plugins::NodeInfo*> nodes{snap.find("gpu-a"), snap.find("gpu-b"), snap.find("gpu-c")};
  plugins::CycleState state;
  plugins::ProfileScratch scratch;
  ASSERT_TRUE(profile.preFilter(next, state, snap).ok());
  const auto totals = profile.scoreTotals(state, snap, scratch.batch(nodes, profile.gpuResources()), scratch);
  EXPECT_EQ(std::vector<int64_t>(totals.begin(), totals.end()), (std::vector<int64_t>{0, 50, 100}));
}

}  // namespace
}  // namespace fleetsched::cache
