// Profile::filterColumns (rows + column filters, the extender's NodeNames path) against
// Profile::filter (the plugins' ordinary Filter): same verdicts, same reasons, same feasible
// nodes, over generated fleets and pods that take every branch of both, including the ones the
// column filters leave to Filter.
#include <gtest/gtest.h>

#include <algorithm>
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

using testing::Harness;
using testing::NodeBuilder;
using testing::Nodes;
using testing::PodBuilder;

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

std::vector<codec::Pod> pods() {
  std::vector<codec::Pod> p;
  p.push_back(PodBuilder().cpu(500).build());
  p.push_back(PodBuilder().gpu(1).build());
  p.push_back(PodBuilder().gpu(2).build());
  p.push_back(PodBuilder().gpu(4).spotTolerant().build());
  p.push_back(PodBuilder().gpu(8).build());
  p.push_back(PodBuilder().gpu(1).milli(250).build());
  p.push_back(PodBuilder().gpu(1).milli(800).spotTolerant().build());
  p.push_back(PodBuilder().gpu(2).models("NVIDIA-A100-SXM4-80GB|Tesla-T4").build());
  p.push_back(PodBuilder().gpu(1).model("NVIDIA-H100-80GB-HBM3").build());
  p.push_back(PodBuilder()
                  .gpu(2)
                  .affinity("nvidia.com/gpu.product", codec::SelectorOp::NotIn, {"Tesla-T4"})
                  .build());
  p.push_back(PodBuilder().gpu(1).minMemory("40000").build());
  p.push_back(PodBuilder().gpu(3).annotation("fleetsched.io/gpu-policy", "spread").build());
  p.push_back(PodBuilder().request("nvidia.com/mig-1g.10gb", 1).build());  // not per-GPU: Filter only
  p.push_back(PodBuilder().gpu(1).milli(5000).build());                    // PreFilter rejects it
  // Zone scoring: a workload with pods in the cluster, and a gang's first pod (pack by free).
  p.push_back(PodBuilder().gpu(1).owner("Job", "counted").build());
  p.push_back(PodBuilder().gpu(2).owner("Job", "first").annotation("fleetsched.io/zone-policy", "pack").build());
  p.push_back(PodBuilder().cpu(100).owner("Job", "first").annotation("fleetsched.io/zone-policy", "pack").build());
  p.push_back(PodBuilder().gpu(1).owner("Job", "counted").annotation("fleetsched.io/zone-policy", "pack").spotTolerant().build());
  return p;
}

NodeColumns columnsOf(const Nodes& nodes, std::string_view primary) {
  NodeColumns c;
  GpuResourceConfig resources;
  resources.resourceNames = {std::string(primary)};
  c.reset(static_cast<uint32_t>(nodes.size()), resources);
  for (size_t i = 0; i < nodes.size(); ++i) c.set(nodes[i]);
  return c;
}

std::vector<uint32_t> idsOf(const Nodes& nodes) {
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < nodes.size(); ++i) ids.push_back(nodes[i].id);
  return ids;
}

struct Result {
  std::vector<Status> statuses;
  std::vector<uint32_t> feasible;
};

Result runSlow(Harness& h, const codec::Pod& pod, const Nodes& nodes) {
  Result r;
  r.statuses.resize(nodes.size());
  h.profile().runFilter(pod, h.state, h.cluster, nodes.span(), r.statuses, h.scratch);
  r.feasible.assign(h.scratch.feasibleIndex().begin(), h.scratch.feasibleIndex().end());
  return r;
}

Result runColumns(Harness& h, const codec::Pod& pod, const Nodes& nodes, const NodeColumns& columns) {
  Result r;
  r.statuses.resize(nodes.size());
  const std::vector<uint32_t> ids = idsOf(nodes);
  NodeSpan feasible =
      h.profile().runFilterColumns(pod, h.state, h.cluster, nodes.span(), ids, columns, r.statuses, h.scratch);
  r.feasible.assign(h.scratch.feasibleIndex().begin(), h.scratch.feasibleIndex().end());
  EXPECT_EQ(feasible.size(), r.feasible.size());
  for (size_t k = 0; k < feasible.size(); ++k) EXPECT_EQ(feasible[k], &nodes[r.feasible[k]]);
  return r;
}

void expectSame(const Result& slow, const Result& fast, const std::string& what) {
  ASSERT_EQ(slow.statuses.size(), fast.statuses.size()) << what;
  for (size_t i = 0; i < slow.statuses.size(); ++i) {
    EXPECT_EQ(slow.statuses[i].code, fast.statuses[i].code) << what << " node " << i;
    EXPECT_EQ(slow.statuses[i].reason, fast.statuses[i].reason) << what << " node " << i;
  }
  EXPECT_EQ(slow.feasible, fast.feasible) << what;
}

Harness defaultHarness() { return Harness(defaultConfig()); }

TEST(NodeColumns, DefaultProfileUsesThem) {
  Harness h = defaultHarness();
  EXPECT_TRUE(h.profile().hasColumnFilters());
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

TEST(NodeColumns, FilterColumnsAgreesWithFilterOnGeneratedFleets) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const Nodes nodes = fleet(seed, 600);
    const NodeColumns columns = columnsOf(nodes, "nvidia.com/gpu");
    const std::vector<codec::Pod> all = pods();
    for (size_t p = 0; p < all.size(); ++p) {
      Harness slow = defaultHarness();
      Harness fast = defaultHarness();
      const Result a = runSlow(slow, all[p], nodes);
      const Result b = runColumns(fast, all[p], nodes, columns);
      expectSame(a, b, "seed " + std::to_string(seed) + " pod " + std::to_string(p));
    }
  }
}

TEST(NodeColumns, AgreesWhenOneCycleStateServesPodAfterPod) {
  // The extender reuses one CycleState: cached model verdicts and reasons must not leak.
  const Nodes nodes = fleet(7, 400);
  const NodeColumns columns = columnsOf(nodes, "nvidia.com/gpu");
  Harness slow = defaultHarness();
  Harness fast = defaultHarness();
  const std::vector<codec::Pod> all = pods();
  for (int round = 0; round < 2; ++round) {
    for (size_t p = 0; p < all.size(); ++p) {
      expectSame(runSlow(slow, all[p], nodes), runColumns(fast, all[p], nodes, columns), "pod " + std::to_string(p));
    }
  }
}

TEST(NodeColumns, AgreesWithoutCountingWholeDevicesAndOnASubsetInAnyOrder) {
  std::string error;
  auto config = loadConfig(testing::singlePluginYaml("GPU", "{countWholeDevices: false}"), error);
  ASSERT_TRUE(config) << error;
  const Nodes all = fleet(11, 300);
  // Request order is not id order, and names may repeat.
  Nodes nodes;
  for (size_t i = all.size(); i-- > 0;) {
    if (i % 3 != 0) continue;
    NodeInfo n = all[i];
    const uint32_t id = n.id;
    nodes.add(n);
    const_cast<NodeInfo&>(nodes[nodes.size() - 1]).id = id;  // keep the fleet's ids
  }
  nodes.add(all[5]);
  const_cast<NodeInfo&>(nodes[nodes.size() - 1]).id = all[5].id;
  const NodeColumns columns = columnsOf(all, "nvidia.com/gpu");
  const std::vector<codec::Pod> list = pods();
  for (size_t p = 0; p < list.size(); ++p) {
    Harness slow(*loadConfig(testing::singlePluginYaml("GPU", "{countWholeDevices: false}"), error));
    Harness fast(*loadConfig(testing::singlePluginYaml("GPU", "{countWholeDevices: false}"), error));
    expectSame(runSlow(slow, list[p], nodes), runColumns(fast, list[p], nodes, columns), "pod " + std::to_string(p));
  }
}

TEST(NodeColumns, DecidesFromTheRowsNotTheRecords) {
  // Rows describe one version of the nodes; a record changed since (which the extender never
  // does: it rebuilds per snapshot version) shows which path decided.
  Nodes nodes;
  nodes.add(NodeBuilder().name("free").gpus(8).capacity(CapacityType::OnDemand).build());
  const NodeColumns columns = columnsOf(nodes, "nvidia.com/gpu");
  const_cast<NodeInfo&>(nodes[0]).gpuUsedMilli.fill(kMilliPerGpu);
  Harness h = defaultHarness();
  const codec::Pod pod = PodBuilder().gpu(2).build();
  EXPECT_TRUE(runColumns(h, pod, nodes, columns).statuses[0].ok());
  EXPECT_EQ(runSlow(h, pod, nodes).statuses[0].code, Code::Unschedulable);
}

TEST(NodeColumns, ScoreTotalsColumnsAgreesWithScoreTotals) {
  for (uint32_t seed : {4u, 5u}) {
    const Nodes nodes = fleet(seed, 500);
    const NodeColumns columns = columnsOf(nodes, "nvidia.com/gpu");
    const std::vector<codec::Pod> all = pods();
    for (size_t p = 0; p < all.size(); ++p) {
      Harness h = defaultHarness();
      h.cluster.set("ns/Job/counted", 1, 3);
      h.cluster.set("ns/Job/counted", 2, 1);
      const std::string what = "seed " + std::to_string(seed) + " pod " + std::to_string(p);
      std::vector<Status> statuses(nodes.size());
      NodeSpan feasible = h.profile().runFilter(all[p], h.state, h.cluster, nodes.span(), statuses, h.scratch);
      std::vector<const NodeInfo*> kept(feasible.begin(), feasible.end());
      if (kept.empty()) continue;
      std::vector<uint32_t> ids;
      for (const NodeInfo* n : kept) ids.push_back(n->id);
      const auto slowSpan = h.profile().scoreTotals(h.state, h.cluster, kept, h.scratch);
      const std::vector<int64_t> slow(slowSpan.begin(), slowSpan.end());
      const auto fastSpan = h.profile().scoreTotalsColumns(h.state, h.cluster, kept, ids, columns, h.scratch);
      const std::vector<int64_t> fast(fastSpan.begin(), fastSpan.end());
      EXPECT_EQ(slow, fast) << what;
      EXPECT_NE(*std::max_element(slow.begin(), slow.end()), *std::min_element(slow.begin(), slow.end())) << what;
    }
  }
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
  EXPECT_EQ(c.modelName(r.gpuModel), "Tesla-T4");
  EXPECT_EQ(c.row(1).unitsFree, NodeColumns::kNoUnits);
  EXPECT_EQ(c.row(1).gpuCount, 0);
}

}  // namespace
}  // namespace fleetsched::plugins
