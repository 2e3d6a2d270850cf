// NodeColumns: what a row holds of its node's record, and which rows share a shape.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fixtures.h"
#include "plugins/node_columns.h"

namespace fleetsched::plugins {
namespace {

using testing::NodeBuilder;
using testing::Nodes;

// A fleet with every shape the GPU and Spot filters tell apart: CPU-only nodes with and without
// a GPU scalar, per-GPU nodes of several models (and one unknown model id 0), memory sizes,
// whole and shared use, spot and on-demand, scalar units fewer than the ledger's free GPUs.
Nodes fleet(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const char* models[] = {"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "Tesla-T4"};
  Nodes nodes;
  for (int i = 0; i < count; ++i) {
    NodeBuilder b;
    b.name("node-" + std::to_string(i));
    b.capacity(pick(4) == 0 ? CapacityType::Spot : CapacityType::OnDemand);
    b.zone(static_cast<uint16_t>(pick(4)));  // 0: no zone
    b.cpu(64000, 1000 * pick(60));
    const int kind = pick(10);
    if (kind == 0) {
      // CPU only.
    } else if (kind == 1) {
      b.scalar("nvidia.com/gpu", pick(3), 0);  // a scalar but no per-GPU ledger
    } else {
      const int gpus = 1 + pick(8);
      b.gpus(gpus, pick(5) == 0 ? 16384 : 81920);
      if (pick(8) != 0) {
        b.model(models[pick(3)]);
      }
      std::vector<int> used;
      for (int g = 0; g < gpus; ++g) {
        const int u = pick(4);
        used.push_back(u == 0 ? 1000 : u == 1 ? 250 * pick(4) : 0);
      }
      NodeInfo n = b.build();
      for (int g = 0; g < gpus; ++g) n.gpuUsedMilli[g] = static_cast<uint16_t>(used[g]);
      int freeWhole = 0;
      for (int u : used) freeWhole += u == 0;
      if (pick(3) != 0) {
        // kube-scheduler's count: usually matches, sometimes fewer units free than the ledger.
        const int usedUnits = gpus - freeWhole + (pick(4) == 0 ? pick(3) : 0);
        n.scalars[n.scalarCount++] = {testing::intern("nvidia.com/gpu"), gpus, usedUnits};
      }
      nodes.add(n);
      continue;
    }
    nodes.add(b.build());
  }
  return nodes;
}

NodeColumns columnsOf(const Nodes& nodes, std::string_view primary) {
  NodeColumns c;
  GpuResourceConfig resources;
  resources.resourceNames = {std::string(primary)};
  c.reset(static_cast<uint32_t>(nodes.size()), resources);
  for (size_t i = 0; i < nodes.size(); ++i) c.set(nodes[i].id, nodes[i]);
  return c;
}

// Rows share a shape exactly when a GPU filter's node-only checks see the same node: equal
// GPU count, model, memory, and whether the primary resource is a scalar (not free GPUs, zone,
// capacity type); rows without a live node have none.
TEST(NodeColumns, ShapesGroupNodesTheGpuChecksCannotTellApart) {
  const Nodes nodes = fleet(5, 600);
  NodeColumns columns = columnsOf(nodes, "nvidia.com/gpu");
  std::map<uint16_t, std::tuple<int32_t, uint16_t, uint8_t, bool>> seen;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeColumns::Row& r = columns.row(nodes[i].id);
    ASSERT_NE(r.shape, NodeColumns::kNoShape);
    ASSERT_LT(r.shape, columns.shapeCount());
    const auto key = std::make_tuple(r.gpuMemoryMiB, r.gpuModel, r.gpuCount, r.unitsFree == NodeColumns::kNoUnits);
    auto [it, added] = seen.emplace(r.shape, key);
    EXPECT_EQ(it->second, key) << "node " << i;
  }
  std::set<std::tuple<int32_t, uint16_t, uint8_t, bool>> keys;
  for (const auto& [shape, key] : seen) keys.insert(key);
  EXPECT_EQ(keys.size(), seen.size()) << "one shape per distinct key";
  EXPECT_GT(seen.size(), 5u);
  columns.clear(nodes[0].id, nodes[0].id + 1);
  EXPECT_EQ(columns.row(nodes[0].id).shape, NodeColumns::kNoShape);
}

TEST(NodeColumns, RowsSummariseTheLedger) {
  Nodes nodes;
  nodes.add(NodeBuilder().gpus(4, 40960).used({1000, 250, 0, 600}).model("Tesla-T4").scalar("nvidia.com/gpu", 4, 3).build());
  nodes.add(NodeBuilder().build());
  const NodeColumns c = columnsOf(nodes, "nvidia.com/gpu");
  const NodeColumns::Row& r = c.row(0);
  EXPECT_EQ(r.flags, NodeColumns::kLive | NodeColumns::kHasGpu);
  EXPECT_EQ(r.gpuCount, 4);
  EXPECT_EQ(r.freeWhole, 1);
  EXPECT_EQ(r.maxFreeMilli, 1000);
  EXPECT_EQ(r.usedMilli, 1850);
  EXPECT_EQ(r.unitsFree, 1);
  EXPECT_EQ(r.gpuMemoryMiB, 40960);
  EXPECT_EQ(r.gpuModel, nodes[0].gpuModel);
  EXPECT_EQ(c.row(1).unitsFree, NodeColumns::kNoUnits);
  EXPECT_EQ(c.row(1).gpuCount, 0);
}

}  // namespace
}  // namespace fleetsched::plugins
