#include "cache/node_builder.h"

#include <gtest/gtest.h>

#include "tests/cache/fixtures.h"

namespace fleetsched::cache {
namespace {

using plugins::CapacityType;
using plugins::parseGpuMemoryMiB;
using testing::NodeMaker;
using testing::Strings;

struct CapacityCase {
  std::vector<std::pair<std::string, std::string>> labels;
  CapacityType want;
};

class CapacityTypeTest : public ::testing::TestWithParam<CapacityCase> {};

TEST_P(CapacityTypeTest, MapsProviderLabels) {
  Strings s;
  NodeMaker m(s, "n");
  for (const auto& [k, v] : GetParam().labels) m.label(k, v);
  EXPECT_EQ(plugins::Interpretation{}.capacityType(m.build().labels), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Labels, CapacityTypeTest,
    ::testing::Values(
        CapacityCase{{{"eks.amazonaws.com/capacityType", "SPOT"}}, CapacityType::Spot},
        CapacityCase{{{"eks.amazonaws.com/capacityType", "ON_DEMAND"}}, CapacityType::OnDemand},
        CapacityCase{{{"eks.amazonaws.com/capacityType", "CAPACITY_BLOCK"}}, CapacityType::Reserved},
        CapacityCase{{{"karpenter.sh/capacity-type", "spot"}}, CapacityType::Spot},
        CapacityCase{{{"karpenter.sh/capacity-type", "on-demand"}}, CapacityType::OnDemand},
        CapacityCase{{{"karpenter.sh/capacity-type", "reserved"}}, CapacityType::Reserved},
        CapacityCase{{{"cloud.google.com/gke-spot", "true"}}, CapacityType::Spot},
        CapacityCase{{{"cloud.google.com/gke-spot", "false"}}, CapacityType::Unknown},
        CapacityCase{{{"cloud.google.com/gke-preemptible", "true"}}, CapacityType::Spot},
        CapacityCase{{{"kubernetes.azure.com/scalesetpriority", "spot"}}, CapacityType::Spot},
        CapacityCase{{{"kubernetes.azure.com/scalesetpriority", "regular"}}, CapacityType::OnDemand},
        // Values compare case-insensitively (Karpenter is lower case, EKS upper case).
        CapacityCase{{{"karpenter.sh/capacity-type", "SPOT"}}, CapacityType::Spot},
        // The first provider label in the table decides, whatever the order on the node.
        CapacityCase{{{"karpenter.sh/capacity-type", "spot"}, {"eks.amazonaws.com/capacityType", "ON_DEMAND"}},
                     CapacityType::OnDemand},
        // An unknown value of the deciding label does not fall through to a later one.
        CapacityCase{{{"eks.amazonaws.com/capacityType", "WEIRD"}, {"karpenter.sh/capacity-type", "spot"}},
                     CapacityType::Unknown},
        CapacityCase{{{"node.kubernetes.io/instance-type", "m5.large"}}, CapacityType::Unknown}));

TEST(ParseGpuMemory, AcceptsIntegersAndQuantities) {
  EXPECT_EQ(parseGpuMemoryMiB("81920"), 81920);
  EXPECT_EQ(parseGpuMemoryMiB("80Gi"), 81920);
  EXPECT_EQ(parseGpuMemoryMiB("16384Mi"), 16384);
  EXPECT_EQ(parseGpuMemoryMiB("16G"), 15258);
  EXPECT_EQ(parseGpuMemoryMiB(""), 0);
  EXPECT_EQ(parseGpuMemoryMiB("lots"), 0);
  EXPECT_EQ(parseGpuMemoryMiB("12Xi"), 0);
}

TEST(NodeBuilder, FillsHotFieldsFromLabelsAndAllocatable) {
  Strings s;
  codec::Node node = NodeMaker(s, "gpu-1")
                         .zone("us-west-2a")
                         .gpus(8, "NVIDIA-H100-80GB-HBM3")
                         .label("nvidia.com/gpu.memory", "81559")
                         .label("karpenter.sh/capacity-type", "spot")
                         .scalar("nvidia.com/mig-1g.10gb", 7)
                         .scalar("hugepages-2Mi", 1024)
                         .cpu(191000)
                         .build();
  node.unschedulable = true;
  NodeBuilder b;
  plugins::NodeInfo info;
  EXPECT_EQ(b.build(node, info), "nvidia.com/gpu");
  EXPECT_EQ(info.name, "gpu-1");
  EXPECT_EQ(info.zoneName, "us-west-2a");
  EXPECT_NE(info.zone, 0);
  EXPECT_EQ(info.gpuModelName, "NVIDIA-H100-80GB-HBM3");
  EXPECT_NE(info.gpuModel, 0);
  EXPECT_EQ(info.gpuMemoryMiB, 81559);
  EXPECT_EQ(info.capacityType, CapacityType::Spot);
  EXPECT_TRUE(info.unschedulable);
  EXPECT_EQ(info.allocMilliCpu, 191000);
  EXPECT_EQ(info.allocPods, 110);
  EXPECT_EQ(info.gpuCount, 8);
  // The per-GPU resource first, then other configured GPU resources; hugepages is not one.
  ASSERT_EQ(info.scalarCount, 2);
  EXPECT_EQ(info.scalars[0].name, "nvidia.com/gpu");
  EXPECT_EQ(info.scalars[0].allocatable, 8);
  EXPECT_EQ(info.scalars[1].name, "nvidia.com/mig-1g.10gb");
  EXPECT_EQ(info.scalars[1].allocatable, 7);
  EXPECT_EQ(info.labels, plugins::NodeLabels(&node.labels));  // the builder views the node
}

TEST(NodeBuilder, FallbackLabelsAndInterning) {
  Strings s;
  const codec::Node a = NodeMaker(s, "a")
                            .label("failure-domain.beta.kubernetes.io/zone", "zone-x")
                            .gpus(4, "Tesla-T4")
                            .label("gpu.nvidia.com/memory", "16Gi")
                            .build();
  const codec::Node b = NodeMaker(s, "b").zone("zone-x").gpus(4, "Tesla-T4").build();
  const codec::Node c = NodeMaker(s, "c").zone("zone-y").build();
  NodeBuilder builder;
  plugins::NodeInfo ia, ib, ic;
  builder.build(a, ia);
  builder.build(b, ib);
  EXPECT_EQ(builder.build(c, ic), "");
  EXPECT_EQ(ia.zoneName, "zone-x");
  EXPECT_EQ(ia.zone, ib.zone);
  EXPECT_NE(ia.zone, ic.zone);
  EXPECT_EQ(ia.gpuModel, ib.gpuModel);
  EXPECT_EQ(ia.gpuMemoryMiB, 16384);
  EXPECT_EQ(ib.gpuMemoryMiB, 0);
  EXPECT_EQ(ic.gpuCount, 0);
  EXPECT_EQ(ic.gpuModel, 0);
  EXPECT_EQ(ic.scalarCount, 0);
  EXPECT_EQ(builder.zoneCount(), 3U);  // none, zone-x, zone-y
}

TEST(NodeBuilder, GpuCountIsCappedAtTheRecordSize) {
  Strings s;
  const codec::Node n = NodeMaker(s, "big").gpus(32).build();
  NodeBuilder b;
  plugins::NodeInfo info;
  b.build(n, info);
  EXPECT_EQ(info.gpuCount, plugins::kMaxGpusPerNode);
  EXPECT_EQ(info.scalars[0].allocatable, 32);
}

}  // namespace
}  // namespace fleetsched::cache
