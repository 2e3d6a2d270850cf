#include <gtest/gtest.h>

#include "fixtures.h"
#include "plugins/gpu/gpu_plugin.h"
#include "plugins/gpu_select.h"
#include "plugins/profile.h"

namespace fleetsched::plugins {
namespace {

using testing::Harness;
using testing::NodeBuilder;
using testing::Nodes;
using testing::PodBuilder;

struct FilterCase {
  const char* desc;
  const char* args;  // GPU plugin args, YAML flow
  codec::Pod pod;
  NodeInfo node;
  Code code;
  const char* reason;  // exact; empty when the node passes
};

class GpuFilter : public ::testing::TestWithParam<FilterCase> {};

TEST_P(GpuFilter, Verdict) {
  const FilterCase& c = GetParam();
  auto h = Harness::single("GPU", c.args);
  const Status s = h.filterOne(c.pod, c.node);
  EXPECT_EQ(s.code, c.code) << c.desc << ": " << s.reason;
  EXPECT_EQ(s.reason, c.reason) << c.desc;
}

const auto a100 = [] { return NodeBuilder().gpus(8, 81920).model("NVIDIA-A100-SXM4-80GB"); };

INSTANTIATE_TEST_SUITE_P(
    Table, GpuFilter,
    ::testing::Values(
        FilterCase{"cpu pod on cpu node", "", PodBuilder().cpu(1000).build(), NodeBuilder().build(), Code::Success, ""},
        FilterCase{"cpu pod on gpu node", "", PodBuilder().cpu(1000).build(), a100().build(), Code::Success, ""},
        FilterCase{"gpu pod on cpu node", "", PodBuilder().gpu(1).build(), NodeBuilder().build(),
                   Code::UnschedulableAndUnresolvable, "node has no nvidia.com/gpu (Node does not have GPU)"},
        FilterCase{"fits in the free gpus", "", PodBuilder().gpu(2).build(), a100().usedWhole(6).build(), Code::Success,
                   ""},
        FilterCase{"not enough free right now", "", PodBuilder().gpu(4).build(), a100().usedWhole(6).build(),
                   Code::Unschedulable, "2 of 8 nvidia.com/gpu free, pod needs 4"},
        FilterCase{"a partly used gpu is not free for a whole-gpu pod", "", PodBuilder().gpu(2).build(),
                   NodeBuilder().gpus(2).used({0, 1}).build(), Code::Unschedulable,
                   "1 of 2 nvidia.com/gpu free, pod needs 2"},
        FilterCase{"more gpus than the node has", "", PodBuilder().gpu(16).build(), a100().build(),
                   Code::UnschedulableAndUnresolvable, "node has 8 nvidia.com/gpu, pod needs 16"},
        FilterCase{"model by nodeSelector, wrong", "", PodBuilder().gpu(1).model("NVIDIA-A100-SXM4-80GB").build(),
                   NodeBuilder().gpus(4, 15360).model("Tesla-T4").build(), Code::UnschedulableAndUnresolvable,
                   "GPU model Tesla-T4 not allowed"},
        FilterCase{"model by nodeSelector, right", "", PodBuilder().gpu(1).model("NVIDIA-A100-SXM4-80GB").build(),
                   a100().build(), Code::Success, ""},
        FilterCase{"model by annotation list", "", PodBuilder().gpu(1).models("V100M32|Tesla-T4").build(),
                   NodeBuilder().gpus(4, 15360).model("Tesla-T4").build(), Code::Success, ""},
        FilterCase{"model by annotation list, wrong", "", PodBuilder().gpu(1).models("V100M32|Tesla-T4").build(),
                   a100().build(), Code::UnschedulableAndUnresolvable, "GPU model NVIDIA-A100-SXM4-80GB not allowed"},
        FilterCase{"model by affinity In", "",
                   PodBuilder().gpu(1).affinity("nvidia.com/gpu.product", codec::SelectorOp::In, {"H100", "Tesla-T4"})
                       .build(),
                   NodeBuilder().gpus(4, 15360).model("Tesla-T4").build(), Code::Success, ""},
        FilterCase{"model by affinity NotIn", "",
                   PodBuilder().gpu(1).affinity("nvidia.com/gpu.product", codec::SelectorOp::NotIn, {"Tesla-T4"})
                       .build(),
                   NodeBuilder().gpus(4, 15360).model("Tesla-T4").build(), Code::UnschedulableAndUnresolvable,
                   "GPU model Tesla-T4 not allowed"},
        FilterCase{"unknown model with a model constraint", "", PodBuilder().gpu(1).models("H100").build(),
                   NodeBuilder().gpus(4).build(), Code::UnschedulableAndUnresolvable, "GPU model unknown not allowed"},
        FilterCase{"custom product label", "{productLabel: example.com/gpu-model}",
                   PodBuilder().gpu(1).model("Tesla-T4").build(), a100().build(), Code::Success, ""},
        FilterCase{"too little gpu memory", "", PodBuilder().gpu(1).minMemory("40000").build(),
                   NodeBuilder().gpus(4, 16384).build(), Code::UnschedulableAndUnresolvable,
                   "GPU memory 16384 MiB < required 40000 MiB"},
        FilterCase{"enough gpu memory", "", PodBuilder().gpu(1).minMemory("40000").build(), a100().build(),
                   Code::Success, ""},
        FilterCase{"shared gpu, a card has room", "", PodBuilder().gpu(1).milli(250).build(),
                   NodeBuilder().gpus(2).used({800, 700}).build(), Code::Success, ""},
        FilterCase{"shared gpu, no card has room", "", PodBuilder().gpu(1).milli(250).build(),
                   NodeBuilder().gpus(2).used({800, 900}).build(), Code::Unschedulable,
                   "0 of 2 nvidia.com/gpu have 250 milli free, pod needs 1"},
        FilterCase{"mig by prefix, enough", "{resourceNames: [nvidia.com/gpu, nvidia.com/mig-]}",
                   PodBuilder().request("nvidia.com/mig-1g.5gb", 2).build(),
                   NodeBuilder().scalar("nvidia.com/mig-1g.5gb", 7, 5).build(), Code::Success, ""},
        FilterCase{"mig by prefix, not enough", "{resourceNames: [nvidia.com/gpu, nvidia.com/mig-]}",
                   PodBuilder().request("nvidia.com/mig-1g.5gb", 2).build(),
                   NodeBuilder().scalar("nvidia.com/mig-1g.5gb", 7, 6).build(), Code::Unschedulable,
                   "1 of 7 nvidia.com/mig-1g.5gb free, pod needs 2"},
        FilterCase{"mig on a node without that profile", "{resourceNames: [nvidia.com/gpu, nvidia.com/mig-]}",
                   PodBuilder().request("nvidia.com/mig-1g.5gb", 1).build(),
                   NodeBuilder().gpus(8).scalar("nvidia.com/mig-3g.20gb", 2, 0).build(),
                   Code::UnschedulableAndUnresolvable, "node has no nvidia.com/mig-1g.5gb (Node does not have GPU)"},
        FilterCase{"count only, no per-gpu ledger", "", PodBuilder().gpu(4).build(),
                   NodeBuilder().scalar("nvidia.com/gpu", 8, 6).build(), Code::Unschedulable,
                   "2 of 8 nvidia.com/gpu free, pod needs 4"},
        FilterCase{"count only, enough", "", PodBuilder().gpu(2).build(),
                   NodeBuilder().scalar("nvidia.com/gpu", 8, 6).build(), Code::Success, ""},
        // Three shared pods sit on GPU 0; kube-scheduler counts each as a whole nvidia.com/gpu.
        FilterCase{"shared pods use up whole units", "", PodBuilder().gpu(1).milli(100).build(),
                   NodeBuilder().gpus(4).used({600}).scalar("nvidia.com/gpu", 4, 4).build(), Code::Unschedulable,
                   "0 of 4 nvidia.com/gpu units free as kube-scheduler counts them, pod needs 1"},
        FilterCase{"whole units not counted when fleetsched is the only judge", "{countWholeDevices: false}",
                   PodBuilder().gpu(1).milli(100).build(),
                   NodeBuilder().gpus(4).used({600}).scalar("nvidia.com/gpu", 4, 4).build(), Code::Success, ""},
        FilterCase{"resource not configured is not a gpu", "", PodBuilder().request("nvidia.com/mig-1g.5gb", 1).build(),
                   NodeBuilder().build(), Code::Success, ""}));

TEST(GpuPlugin, InvalidAnnotationsRejectEveryNode) {
  struct Case {
    codec::Pod pod;
    std::string_view reason;
  };
  const Case cases[] = {
      {PodBuilder().gpu(1).models(" | ").build(),
       "invalid annotation fleetsched.io/gpu-models: want model names separated by '|'"},
      {PodBuilder().gpu(1).minMemory("40GB").build(),
       "invalid annotation fleetsched.io/gpu-min-memory: want a positive integer (MiB)"},
      {PodBuilder().gpu(1).annotation("fleetsched.io/gpu-policy", "pack").build(),
       "invalid annotation fleetsched.io/gpu-policy: want binpack or spread"},
  };
  for (const auto& c : cases) {
    auto h = Harness::single("GPU");
    Nodes nodes{NodeBuilder().gpus(8).build(), NodeBuilder().gpus(4).build()};
    for (const Status& s : h.filter(c.pod, nodes)) {
      EXPECT_EQ(s.code, Code::UnschedulableAndUnresolvable);
      EXPECT_EQ(s.reason, c.reason);
    }
  }
}

TEST(GpuPlugin, ReasonsAreSharedAcrossNodesWithTheSameNumbers) {
  auto h = Harness::single("GPU");
  Nodes nodes;
  for (int i = 0; i < 100; ++i) nodes.add(NodeBuilder().gpus(8).usedWhole(7).build());
  const auto out = h.filter(PodBuilder().gpu(2).build(), nodes);
  for (const auto& s : out) {
    EXPECT_EQ(s.reason, "1 of 8 nvidia.com/gpu free, pod needs 2");
    EXPECT_EQ(s.reason.data(), out[0].reason.data());  // formatted once per cycle
  }
}

TEST(GpuPlugin, BinpackPrefersTheBusierNode) {
  auto h = Harness::single("GPU", "{memoryWeight: 0}");
  Nodes nodes{NodeBuilder().gpus(8).build(), NodeBuilder().gpus(8).usedWhole(4).build(),
              NodeBuilder().gpus(8).usedWhole(6).build()};
  const auto t = h.totals(PodBuilder().gpu(2).build(), nodes);
  EXPECT_LT(t[0], t[1]);
  EXPECT_LT(t[1], t[2]);
  EXPECT_EQ(t[2], kMaxNodeScore);  // the pod fills node 2 exactly
}

TEST(GpuPlugin, SpreadPrefersTheFreerNodeByArgOrAnnotation) {
  Nodes nodes{NodeBuilder().gpus(8).build(), NodeBuilder().gpus(8).usedWhole(6).build()};
  auto spread = Harness::single("GPU", "{policy: spread, memoryWeight: 0}");
  auto t = spread.totals(PodBuilder().gpu(2).build(), nodes);
  EXPECT_GT(t[0], t[1]);

  auto binpack = Harness::single("GPU", "{memoryWeight: 0}");
  t = binpack.totals(PodBuilder().gpu(2).annotation("fleetsched.io/gpu-policy", "spread").build(), nodes);
  EXPECT_GT(t[0], t[1]);
}

TEST(GpuPlugin, MoreMemoryPerGpuScoresHigherAtEqualUse) {
  auto h = Harness::single("GPU");
  Nodes nodes{NodeBuilder().gpus(8, 40960).usedWhole(2).build(), NodeBuilder().gpus(8, 81920).usedWhole(2).build(),
              NodeBuilder().gpus(8, 0).usedWhole(2).build()};
  const auto t = h.totals(PodBuilder().gpu(1).build(), nodes);
  EXPECT_LT(t[0], t[1]);
  EXPECT_LT(t[2], t[0]);  // unknown memory ranks last
}

TEST(GpuPlugin, CpuPodsAreSteeredOffGpuNodesUnlessDisabled) {
  Nodes nodes{NodeBuilder().gpus(8).build(), NodeBuilder().build(),
              NodeBuilder().scalar("nvidia.com/gpu", 4, 0).build()};
  auto h = Harness::single("GPU");
  auto t = h.totals(PodBuilder().cpu(2000).build(), nodes);
  EXPECT_GT(t[1], t[0]);
  EXPECT_GT(t[1], t[2]);

  auto off = Harness::single("GPU", "{steerCpuPods: false}");
  t = off.totals(PodBuilder().cpu(2000).build(), nodes);
  EXPECT_EQ(t[0], t[1]);
  EXPECT_EQ(t[1], t[2]);
}

TEST(GpuSelect, SharedPodGetsTheTightestFitLowestIndexOnTies) {
  const PodInfo pod{.gpuResource = "nvidia.com/gpu", .gpuCount = 1, .gpuMilli = 250};
  GpuAssignment a;
  auto n = NodeBuilder().gpus(4).used({900, 600, 700, 0}).build();  // free 100, 400, 300, 1000
  ASSERT_TRUE(selectGpus(pod, n, a));
  EXPECT_EQ(a.count, 1);
  EXPECT_EQ(a.index[0], 2);
  EXPECT_EQ(a.milliEach, 250);

  n = NodeBuilder().gpus(4).used({0, 700, 700, 0}).build();
  ASSERT_TRUE(selectGpus(pod, n, a));
  EXPECT_EQ(a.index[0], 1);

  n = NodeBuilder().gpus(4).used({900, 600, 700, 0}).build();
  ASSERT_TRUE(selectGpus(pod, n, a, GpuChoice::MostFree));
  EXPECT_EQ(a.index[0], 3);

  n = NodeBuilder().gpus(2).used({900, 800}).build();
  EXPECT_FALSE(selectGpus(pod, n, a));
  EXPECT_EQ(a.count, 0);
}

TEST(GpuSelect, WholeGpusAreTheLowestIndexFreeOnes) {
  const PodInfo pod{.gpuResource = "nvidia.com/gpu", .gpuCount = 2, .gpuMilli = 1000};
  GpuAssignment a;
  auto n = NodeBuilder().gpus(4).used({0, 500, 0, 0}).build();
  ASSERT_TRUE(selectGpus(pod, n, a));
  ASSERT_EQ(a.count, 2);
  EXPECT_EQ(a.index[0], 0);
  EXPECT_EQ(a.index[1], 2);
  EXPECT_EQ(a.milliEach, 1000);

  n = NodeBuilder().gpus(4).used({1000, 500, 0, 1000}).build();
  EXPECT_FALSE(selectGpus(pod, n, a));
  EXPECT_EQ(a.count, 0);
}

TEST(GpuPlugin, SelectGpusFollowsThePolicy) {
  auto n = NodeBuilder().gpus(4).used({900, 600, 700, 0}).build();
  GpuAssignment a;
  auto binpack = Harness::single("GPU");
  ASSERT_TRUE(binpack.preFilter(PodBuilder().gpu(1).milli(250).build()).ok());
  ASSERT_TRUE(binpack.profile().selectGpus(binpack.state, n, a));
  EXPECT_EQ(a.index[0], 2);

  auto spread = Harness::single("GPU", "{policy: spread}");
  ASSERT_TRUE(spread.preFilter(PodBuilder().gpu(1).milli(250).build()).ok());
  ASSERT_TRUE(spread.profile().selectGpus(spread.state, n, a));
  EXPECT_EQ(a.index[0], 3);
}

// Rows are built for the profile's GPU resources; a GPU plugin with other resources reads what
// the rows count for their own primary resource (units free, having a GPU) from the record.
TEST(GpuPlugin, RowsOfOtherResourcesLeaveUnitsAndPresenceToTheRecord) {
  gpu::Args args;
  args.resources.resourceNames = {"example.com/gpu"};
  GpuResourceConfig rowsFor;
  rowsFor.resourceNames = {"nvidia.com/gpu", "example.com/gpu"};
  std::vector<Profile::Entry> e;
  e.push_back({gpu::create(args), 1});
  const Profile profile("p", rowsFor, std::move(e));
  // The rows' units (nvidia.com/gpu) say the opposite of the plugin's (example.com/gpu).
  Nodes nodes{NodeBuilder().gpus(4).scalar("example.com/gpu", 4, 4).build(),
              NodeBuilder().gpus(4).scalar("example.com/gpu", 4, 1).scalar("nvidia.com/gpu", 4, 4).build()};
  const codec::Pod pod = PodBuilder().request("example.com/gpu", 2).build();
  CycleState state;
  ProfileScratch scratch;
  testing::FakeCluster cluster;
  std::vector<Status> out(nodes.size());
  profile.runFilter(pod, state, cluster, nodes.span(), out, scratch);
  EXPECT_EQ(out[0].code, Code::Unschedulable);
  EXPECT_EQ(out[0].reason, "0 of 4 example.com/gpu units free as kube-scheduler counts them, pod needs 2");
  EXPECT_TRUE(out[1].ok()) << out[1].reason;

  // Steering a CPU pod: only the plugin's resources make a GPU node.
  std::vector<Profile::Entry> steer;
  steer.push_back({gpu::create(args), 1});
  const Profile nvidiaRows("q", GpuResourceConfig{}, std::move(steer));
  Nodes cpuOrNot{NodeBuilder().scalar("example.com/gpu", 2, 0).build(), NodeBuilder().build()};
  const codec::Pod cpuPod = PodBuilder().cpu(100).build();
  ASSERT_TRUE(nvidiaRows.preFilter(cpuPod, state, cluster).ok());
  const auto totals = nvidiaRows.scoreTotals(state, cluster, scratch.batch(cpuOrNot.span(), GpuResourceConfig{}), scratch);
  EXPECT_EQ(std::vector<int64_t>(totals.begin(), totals.end()), (std::vector<int64_t>{0, kMaxNodeScore}));
}

}  // namespace
}  // namespace fleetsched::plugins
