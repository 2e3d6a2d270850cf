#include "cache/cache.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "cache/demo_fleet.h"
#include "cache/snapshot_rows.h"
#include "plugins/zone/zone_plugin.h"
#include "tests/cache/fixtures.h"

namespace fleetsched::cache {
namespace {

using codec::PodPhase;
using testing::NodeMaker;
using testing::PodMaker;
using testing::Strings;

constexpr int64_t kGi = int64_t{1} << 30;

// "prefix<i>"; spelled out because GCC 12 -O3 warns (-Wrestrict, a false positive) on
// `"literal" + std::to_string(i)`.
std::string numbered(std::string_view prefix, int i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

class CacheTest : public ::testing::Test {
 protected:
  CacheTest() : reader_(cache_) {
    cache_.upsertNode(NodeMaker(s_, "gpu-a").zone("z1").gpus(4).build());
    cache_.upsertNode(NodeMaker(s_, "gpu-b").zone("z2").gpus(8).build());
    cache_.upsertNode(NodeMaker(s_, "cpu-c").zone("z1").build());
  }

  // A copy of the node's current record (so the snapshot can be dropped at once).
  plugins::NodeInfo node(std::string_view name) {
    Snapshot snap = reader_.acquire();
    const plugins::NodeInfo* n = snap.find(name);
    EXPECT_NE(n, nullptr) << name;
    return n != nullptr ? *n : plugins::NodeInfo{};
  }
  std::vector<uint16_t> gpus(std::string_view name) {
    const plugins::NodeInfo n = node(name);
    return {n.gpuUsedMilli.begin(), n.gpuUsedMilli.begin() + n.gpuCount};
  }
  std::vector<uint32_t> zoneCounts(std::string_view workload) {
    Snapshot snap = reader_.acquire();
    std::vector<uint32_t> out(snap.zoneCount(), 0);
    snap.workloadZoneCounts(workload, out);
    return out;
  }
  uint32_t zoneId(std::string_view nodeName) { return node(nodeName).zone; }

  Strings s_;
  Cache cache_;
  Reader reader_;
};

TEST_F(CacheTest, FindsAndIteratesNodes) {
  Snapshot snap = reader_.acquire();
  EXPECT_EQ(snap.nodeCount(), 3U);
  ASSERT_NE(snap.find("gpu-b"), nullptr);
  EXPECT_EQ(snap.find("gpu-b")->gpuCount, 8);
  EXPECT_EQ(snap.find("nope"), nullptr);
  std::set<std::string_view> names;
  snap.forEachNode([&](const plugins::NodeInfo& n) {
    names.insert(n.name);
    EXPECT_EQ(snap.node(n.id), &n);
  });
  EXPECT_EQ(names, (std::set<std::string_view>{"gpu-a", "gpu-b", "cpu-c"}));
  std::vector<const plugins::NodeInfo*> all;
  snap.collect(all);
  EXPECT_EQ(all.size(), 3U);
  EXPECT_EQ(snap.zoneCount(), 3U);  // none, z1, z2
}

TEST_F(CacheTest, ManyNodesAcrossChunksAndDeletes) {
  for (int i = 0; i < 300; ++i) cache_.upsertNode(NodeMaker(s_, numbered("n", i)).build());
  for (int i = 0; i < 300; i += 3) EXPECT_TRUE(cache_.deleteNode(numbered("n", i)));
  EXPECT_FALSE(cache_.deleteNode("n0"));
  Snapshot snap = reader_.acquire();
  EXPECT_EQ(snap.nodeCount(), 203U);
  for (int i = 0; i < 300; ++i) {
    const auto* n = snap.find(numbered("n", i));
    if (i % 3 == 0) {
      EXPECT_EQ(n, nullptr) << i;
    } else {
      ASSERT_NE(n, nullptr) << i;
      EXPECT_EQ(n->name, numbered("n", i));
    }
  }
  // Freed ids are reused, and the index still finds everything after re-adding.
  for (int i = 0; i < 300; i += 3) cache_.upsertNode(NodeMaker(s_, numbered("m", i)).build());
  Snapshot after = reader_.acquire();
  EXPECT_EQ(after.nodeCount(), 303U);
  EXPECT_LE(after.idLimit(), 303U);
  for (int i = 0; i < 300; i += 3) EXPECT_NE(after.find(numbered("m", i)), nullptr);
}

// Per-node-set work (the extender's codec::NodeNameTable) is kept while nameSetVersion() stays:
// it must change when a node comes or goes, and only then.
TEST_F(CacheTest, NameSetVersionChangesWhenNodesComeAndGoNotForPodEvents) {
  const uint64_t before = reader_.acquire().nameSetVersion();
  cache_.upsertPod(PodMaker(s_, "p1").on("gpu-a").cpu(100).build());
  cache_.upsertNode(NodeMaker(s_, "gpu-a").zone("z1").gpus(4).cpu(64000).build());  // changed, not new
  {
    Snapshot snap = reader_.acquire();
    EXPECT_EQ(snap.nameSetVersion(), before);
  }
  ASSERT_TRUE(cache_.deleteNode("cpu-c"));
  const uint64_t afterDelete = reader_.acquire().nameSetVersion();
  EXPECT_NE(afterDelete, before);
  cache_.upsertNode(NodeMaker(s_, "cpu-d").build());  // may reuse the freed id
  EXPECT_NE(reader_.acquire().nameSetVersion(), afterDelete);
}

TEST_F(CacheTest, SnapshotDoesNotChangeWhileWriterPublishes) {
  Snapshot before = reader_.acquire();
  const plugins::NodeInfo* a = before.find("gpu-a");
  ASSERT_NE(a, nullptr);
  cache_.upsertPod(PodMaker(s_, "p1").on("gpu-a").cpu(1000).memory(2 * kGi).gpus(2).build());
  cache_.upsertNode(NodeMaker(s_, "late").build());
  cache_.deleteNode("cpu-c");
  EXPECT_EQ(a->usedMilliCpu, 0);
  EXPECT_EQ(a->gpuUsedMilli[0], 0);
  EXPECT_EQ(before.find("late"), nullptr);
  EXPECT_NE(before.find("cpu-c"), nullptr);
  EXPECT_EQ(before.nodeCount(), 3U);

  Snapshot after = reader_.acquire();
  EXPECT_GT(after.version(), before.version());
  EXPECT_EQ(after.find("gpu-a")->usedMilliCpu, 1000);
  EXPECT_NE(after.find("late"), nullptr);
  EXPECT_EQ(after.find("cpu-c"), nullptr);
}

TEST_F(CacheTest, WriterBatchIsInvisibleUntilPublished) {
  const uint64_t v0 = reader_.acquire().version();
  {
    auto w = cache_.write();
    for (int i = 0; i < 10; ++i) w.upsertPod(PodMaker(s_, numbered("b", i)).on("gpu-b").cpu(100).build());
    EXPECT_EQ(node("gpu-b").usedPods, 0);
    w.publish();
    EXPECT_EQ(node("gpu-b").usedPods, 10);
  }
  EXPECT_EQ(reader_.acquire().version(), v0 + 1);  // one publish for the whole batch
}

TEST_F(CacheTest, BoundPodIsChargedAndReleased) {
  cache_.upsertPod(PodMaker(s_, "p1").on("gpu-a").cpu(1500).memory(4 * kGi).gpus(2).build());
  plugins::NodeInfo n = node("gpu-a");
  EXPECT_EQ(n.usedMilliCpu, 1500);
  EXPECT_EQ(n.usedMemory, 4 * kGi);
  EXPECT_EQ(n.usedPods, 1);
  EXPECT_EQ(n.scalar("nvidia.com/gpu")->used, 2);
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{1000, 1000, 0, 0}));
  EXPECT_EQ(cache_.stats().boundPods, 1U);

  EXPECT_TRUE(cache_.deletePod("p1"));
  n = node("gpu-a");
  EXPECT_EQ(n.usedMilliCpu, 0);
  EXPECT_EQ(n.usedMemory, 0);
  EXPECT_EQ(n.usedPods, 0);
  EXPECT_EQ(n.scalar("nvidia.com/gpu")->used, 0);
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{0, 0, 0, 0}));
  EXPECT_EQ(cache_.stats().boundPods, 0U);
}

TEST_F(CacheTest, GpuIndexAnnotationPlacesTheCharge) {
  cache_.upsertPod(PodMaker(s_, "shared").on("gpu-a").gpus(1).gpuIndex("1").gpuMilli("250").build());
  cache_.upsertPod(PodMaker(s_, "pair").on("gpu-a").gpus(2).gpuIndex("2-3").build());
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{0, 250, 1000, 1000}));
  // Without the annotation: the lowest-index GPUs with room, deterministic.
  cache_.upsertPod(PodMaker(s_, "auto-share").on("gpu-a").gpus(1).gpuMilli("500").build());
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{500, 250, 1000, 1000}));
  cache_.upsertPod(PodMaker(s_, "auto-share2").on("gpu-a").gpus(1).gpuMilli("700").build());
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{500, 950, 1000, 1000}));
  cache_.deletePod("pair");
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{500, 950, 0, 0}));
  cache_.upsertPod(PodMaker(s_, "whole").on("gpu-a").gpus(1).build());
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{500, 950, 1000, 0}));
  // Malformed annotations fall back: an invalid index list is ignored, an invalid share is 1000.
  cache_.upsertPod(PodMaker(s_, "bad").on("gpu-b").gpus(1).gpuIndex("1-x").gpuMilli("0").build());
  EXPECT_EQ(gpus("gpu-b")[0], 1000);
}

TEST_F(CacheTest, StatusUpdatesDoNotRepublishAndKeepPickedGpus) {
  cache_.upsertPod(PodMaker(s_, "x").on("gpu-a").gpus(1).gpuMilli("500").build());
  cache_.upsertPod(PodMaker(s_, "y").on("gpu-a").gpus(1).build());
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{500, 1000, 0, 0}));
  const uint64_t v = reader_.acquire().version();
  cache_.upsertPod(PodMaker(s_, "x").on("gpu-a").gpus(1).gpuMilli("500").build());
  EXPECT_EQ(reader_.acquire().version(), v);
  // A resize re-charges; without an index annotation the pod keeps its GPU.
  cache_.upsertPod(PodMaker(s_, "x").on("gpu-a").cpu(2000).gpus(1).gpuMilli("500").build());
  EXPECT_EQ(node("gpu-a").usedMilliCpu, 2000);
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{500, 1000, 0, 0}));
}

TEST_F(CacheTest, TerminalPendingAndTerminatingPods) {
  // Pending (no node) holds nothing.
  cache_.upsertPod(PodMaker(s_, "pending").cpu(1000).build());
  EXPECT_EQ(node("gpu-a").usedPods + node("gpu-b").usedPods, 0);
  // A terminating pod holds its resources until deleted.
  cache_.upsertPod(PodMaker(s_, "t").on("gpu-a").cpu(1000).gpus(1).build());
  cache_.upsertPod(PodMaker(s_, "t").on("gpu-a").cpu(1000).gpus(1).terminating().build());
  EXPECT_EQ(node("gpu-a").usedMilliCpu, 1000);
  EXPECT_EQ(gpus("gpu-a")[0], 1000);
  // Succeeded / Failed hold nothing.
  cache_.upsertPod(PodMaker(s_, "t").on("gpu-a").cpu(1000).gpus(1).phase(PodPhase::Succeeded).build());
  EXPECT_EQ(node("gpu-a").usedMilliCpu, 0);
  EXPECT_EQ(gpus("gpu-a")[0], 0);
  // A terminal pod seen first is never charged, and its later deletion is a no-op.
  cache_.upsertPod(PodMaker(s_, "f").on("gpu-a").cpu(1000).phase(PodPhase::Failed).build());
  EXPECT_EQ(node("gpu-a").usedPods, 0);
  const uint64_t v = reader_.acquire().version();
  EXPECT_FALSE(cache_.deletePod("f"));
  EXPECT_FALSE(cache_.deletePod("never-seen"));
  EXPECT_EQ(reader_.acquire().version(), v);
}

TEST_F(CacheTest, PodMovingBetweenNodes) {
  cache_.upsertPod(PodMaker(s_, "m").on("gpu-a").cpu(500).gpus(1).build());
  cache_.upsertPod(PodMaker(s_, "m").on("gpu-b").cpu(500).gpus(1).build());
  EXPECT_EQ(node("gpu-a").usedPods, 0);
  EXPECT_EQ(gpus("gpu-a")[0], 0);
  EXPECT_EQ(node("gpu-b").usedPods, 1);
  EXPECT_EQ(gpus("gpu-b")[0], 1000);
}

TEST_F(CacheTest, PodsSeenBeforeTheirNodeAreChargedWhenItAppears) {
  cache_.upsertPod(PodMaker(s_, "early").on("gpu-new").cpu(700).gpus(2).gpuIndex("1-2").build());
  EXPECT_EQ(cache_.stats().waitingPods, 1U);
  EXPECT_EQ(cache_.stats().boundPods, 0U);
  cache_.upsertNode(NodeMaker(s_, "gpu-new").gpus(4).build());
  EXPECT_EQ(node("gpu-new").usedMilliCpu, 700);
  EXPECT_EQ(gpus("gpu-new"), (std::vector<uint16_t>{0, 1000, 1000, 0}));
  EXPECT_EQ(cache_.stats().waitingPods, 0U);
  EXPECT_EQ(cache_.stats().boundPods, 1U);
  // Deleting the node parks the pod again; re-adding charges it again.
  cache_.deleteNode("gpu-new");
  EXPECT_EQ(cache_.stats().waitingPods, 1U);
  cache_.upsertNode(NodeMaker(s_, "gpu-new").gpus(4).build());
  EXPECT_EQ(node("gpu-new").usedMilliCpu, 700);
  // A waiting pod deleted before its node exists leaves nothing behind.
  cache_.upsertPod(PodMaker(s_, "ghost").on("gpu-later").cpu(100).build());
  EXPECT_TRUE(cache_.deletePod("ghost"));
  cache_.upsertNode(NodeMaker(s_, "gpu-later").build());
  EXPECT_EQ(node("gpu-later").usedPods, 0);
  EXPECT_EQ(cache_.stats().waitingPods, 0U);
}

TEST_F(CacheTest, NodeUpdateKeepsUsageAndHeartbeatsDoNotRepublish) {
  cache_.upsertPod(PodMaker(s_, "p").on("gpu-b").cpu(300).gpus(3).build());
  const uint64_t v = reader_.acquire().version();
  cache_.upsertNode(NodeMaker(s_, "gpu-b").zone("z2").gpus(8).build());
  EXPECT_EQ(reader_.acquire().version(), v);
  cache_.upsertNode(NodeMaker(s_, "gpu-b").zone("z2").gpus(8).label("team", "ml").build());
  EXPECT_GT(reader_.acquire().version(), v);
  const plugins::NodeInfo n = node("gpu-b");
  EXPECT_EQ(n.usedMilliCpu, 300);
  EXPECT_EQ(n.scalar("nvidia.com/gpu")->used, 3);
  EXPECT_EQ(gpus("gpu-b"), (std::vector<uint16_t>{1000, 1000, 1000, 0, 0, 0, 0, 0}));
  ASSERT_TRUE(n.labels.hasData());
  EXPECT_EQ(n.labels.find("team"), std::optional<std::string_view>("ml"));
}

// Labels and taints are copied into the cache's compact form: same order and text, independent
// of the decoded object's buffer, and an old snapshot keeps the labels it saw after a relabel.
TEST_F(CacheTest, LabelsAndTaintsSurviveTheSourceAndRelabels) {
  {
    Strings tmp;
    cache_.upsertNode(NodeMaker(tmp, "gpu-x")
                          .zone("z1")
                          .gpus(2, "Tesla-T4")
                          .label("kubernetes.io/hostname", "gpu-x")
                          .taint("nvidia.com/gpu", "present")
                          .build());
  }  // the node's source strings are gone
  Snapshot before = reader_.acquire();
  const plugins::NodeInfo* n = before.find("gpu-x");
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->labels.size(), 3U);
  EXPECT_EQ(n->labels[0].key, "topology.kubernetes.io/zone");
  EXPECT_EQ(n->labels[0].value, "z1");
  EXPECT_EQ(n->labels[1].key, "nvidia.com/gpu.product");
  EXPECT_EQ(n->labels[1].value, "Tesla-T4");
  EXPECT_EQ(n->labels.find("kubernetes.io/hostname"), std::optional<std::string_view>("gpu-x"));
  EXPECT_EQ(n->labels.find("team"), std::nullopt);
  ASSERT_EQ(n->taints.size(), 1U);
  EXPECT_EQ(n->taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(n->taints[0].value, "present");
  EXPECT_EQ(n->taints[0].effect, codec::TaintEffect::NoSchedule);

  // Relabel, then delete and re-add under other labels (ids get freed and reused) while the old
  // snapshot is still held.
  {
    Strings tmp;
    cache_.upsertNode(NodeMaker(tmp, "gpu-x").zone("z2").gpus(2, "Tesla-T4").label("team", "ml").build());
    cache_.deleteNode("gpu-x");
    cache_.upsertNode(NodeMaker(tmp, "gpu-x").label("pool", "batch").build());
  }
  EXPECT_EQ(n->labels.find("kubernetes.io/hostname"), std::optional<std::string_view>("gpu-x"));
  EXPECT_EQ(n->labels[0].value, "z1");
  EXPECT_EQ(n->taints[0].value, "present");
  before = Snapshot();

  const plugins::NodeInfo now = node("gpu-x");
  ASSERT_EQ(now.labels.size(), 1U);
  EXPECT_EQ(now.labels[0].key, "pool");
  EXPECT_EQ(now.labels[0].value, "batch");
  EXPECT_EQ(now.taints.size(), 0U);
  EXPECT_EQ(now.name, "gpu-x");
}

// A watch mirror's relist: what the relist (or a watch event after it) upserted stays, the rest
// is deleted and uncharged; a reservation for a pod no upsert has shown survives the sweep.
TEST_F(CacheTest, RelistSweepDeletesWhatTheRelistDidNotUpsert) {
  cache_.upsertPod(PodMaker(s_, "kept").on("gpu-a").cpu(100).build());
  cache_.upsertPod(PodMaker(s_, "gone").on("gpu-a").cpu(200).build());
  cache_.upsertPod(PodMaker(s_, "waiting").on("later").cpu(50).build());
  ReservationRequest r;
  r.podUid = "fresh";
  r.node = "gpu-b";
  r.milliCpu = 400;
  ASSERT_EQ(cache_.reserve(r, Clock::now()), ReserveResult::Reserved);
  r.podUid = "pending-reserved";
  ASSERT_EQ(cache_.reserve(r, Clock::now()), ReserveResult::Reserved);
  // The watch shows that pod pending (the Binding is not visible yet): it is now known.
  cache_.upsertPod(PodMaker(s_, "pending-reserved").build());
  {
    auto w = cache_.write();
    w.beginPodRelist();
    w.beginNodeRelist();
    w.upsertNode(NodeMaker(s_, "gpu-a").zone("z1").gpus(4).build());
    w.upsertNode(NodeMaker(s_, "cpu-c").zone("z1").build());
    w.upsertPod(PodMaker(s_, "kept").on("gpu-a").cpu(100).build());
    EXPECT_EQ(w.sweepPods(), 3U);  // gone, waiting, pending-reserved
    EXPECT_EQ(w.sweepNodes(), 1U);  // gpu-b, with the fresh reservation on it
  }
  EXPECT_EQ(node("gpu-a").usedMilliCpu, 100);
  EXPECT_EQ(reader_.acquire().find("gpu-b"), nullptr);
  const CacheStats st = cache_.stats();
  EXPECT_EQ(st.boundPods, 1U);
  EXPECT_EQ(st.waitingPods, 0U);
  EXPECT_EQ(st.nodes, 2U);
  // A watch event after the relist belongs to its truth: a second sweep with the same mark keeps it.
  cache_.upsertPod(PodMaker(s_, "late").on("cpu-c").cpu(10).build());
  EXPECT_EQ(cache_.write().sweepPods(), 0U);
  EXPECT_EQ(node("cpu-c").usedMilliCpu, 10);
}

TEST_F(CacheTest, RelistSweepKeepsReservationsOfPodsNotShownYet) {
  ReservationRequest r;
  r.podUid = "fresh";
  r.node = "gpu-b";
  r.milliCpu = 400;
  ASSERT_EQ(cache_.reserve(r, Clock::now()), ReserveResult::Reserved);
  {
    auto w = cache_.write();
    w.beginPodRelist();
    EXPECT_EQ(w.sweepPods(), 0U);
  }
  EXPECT_EQ(node("gpu-b").usedMilliCpu, 400);
  EXPECT_EQ(cache_.stats().reservationsLive, 1U);
}

// The pod table stores API-server UIDs (canonical lowercase UUIDs) as 16 binary bytes and any
// other UID as text; every path that hands a UID back (replace, sweep, node deletion and
// return, reservations) must find the same pod again.
TEST_F(CacheTest, PodUidsOfEveryShapeRoundTrip) {
  const std::string uuid = "92292b8a-900e-4245-4618-d751e0aecbcf";
  const std::string upper = "A5F1D2A4-B911-4F39-E9A3-9B38EF7E354F";  // not canonical: kept as text
  const std::string longUid = "a-pod-uid-longer-than-sixteen-bytes";
  cache_.upsertPod(PodMaker(s_, uuid).on("gpu-a").cpu(1).gpus(1).build());
  cache_.upsertPod(PodMaker(s_, upper).on("gpu-a").cpu(10).build());
  cache_.upsertPod(PodMaker(s_, longUid).on("gpu-a").cpu(100).build());
  EXPECT_EQ(node("gpu-a").usedMilliCpu, 111);
  PodCharge charge;
  ASSERT_TRUE(cache_.podCharge(uuid, charge));
  EXPECT_EQ(charge.milliCpu, 1);
  EXPECT_EQ(charge.gpuMask, 1U);
  EXPECT_FALSE(cache_.podCharge("92292b8a-900e-4245-4618-d751e0aecbce", charge));  // one digit off
  EXPECT_FALSE(cache_.podCharge("92292B8A-900E-4245-4618-D751E0AECBCF", charge));  // other spelling

  // Node deletion parks the pods by UID; the node's return charges them again.
  cache_.deleteNode("gpu-a");
  EXPECT_EQ(cache_.stats().waitingPods, 3U);
  cache_.upsertNode(NodeMaker(s_, "gpu-a").zone("z1").gpus(4).build());
  EXPECT_EQ(cache_.stats().waitingPods, 0U);
  EXPECT_EQ(node("gpu-a").usedMilliCpu, 111);

  // replacePods and a relist sweep delete by the UIDs they read back from the table.
  {
    auto w = cache_.write();
    const std::vector<codec::Pod> keep{PodMaker(s_, upper).on("gpu-a").cpu(10).build()};
    w.replacePods(keep);
  }
  EXPECT_EQ(node("gpu-a").usedMilliCpu, 10);
  EXPECT_FALSE(cache_.podCharge(uuid, charge));
  cache_.upsertPod(PodMaker(s_, uuid).on("gpu-a").cpu(1).build());
  {
    auto w = cache_.write();
    w.beginPodRelist();
    w.upsertPod(PodMaker(s_, uuid).on("gpu-a").cpu(1).build());
    EXPECT_EQ(w.sweepPods(), 1U);
  }
  EXPECT_EQ(node("gpu-a").usedMilliCpu, 1);
  EXPECT_TRUE(cache_.deletePod(uuid));
  EXPECT_EQ(node("gpu-a").usedMilliCpu, 0);
  EXPECT_EQ(cache_.stats().boundPods, 0U);

  // Reservations under a UUID expire and leave nothing behind.
  ReservationRequest r;
  r.podUid = uuid;
  r.node = "gpu-b";
  r.milliCpu = 5;
  const auto now = Clock::now();
  ASSERT_EQ(cache_.reserve(r, now), ReserveResult::Reserved);
  EXPECT_EQ(cache_.expire(now + std::chrono::minutes(1)), 1U);
  EXPECT_EQ(node("gpu-b").usedMilliCpu, 0);
  EXPECT_FALSE(cache_.podCharge(uuid, charge));
}

TEST_F(CacheTest, ReservationIsVisibleAndConfirmedWithoutDoubleCharge) {
  const auto now = Clock::now();
  ReservationRequest r;
  r.podUid = "r1";
  r.node = "gpu-b";
  r.milliCpu = 2000;
  r.memory = 8 * kGi;
  r.gpuResource = "nvidia.com/gpu";
  r.gpuAmount = 2;
  r.gpus.count = 2;
  r.gpus.index = {3, 5};
  r.gpus.milliEach = 1000;
  EXPECT_EQ(cache_.reserve(r, now), ReserveResult::Reserved);
  // The next filter sees it.
  plugins::NodeInfo n = node("gpu-b");
  EXPECT_EQ(n.usedMilliCpu, 2000);
  EXPECT_EQ(n.usedPods, 1);
  EXPECT_EQ(n.scalar("nvidia.com/gpu")->used, 2);
  EXPECT_EQ(gpus("gpu-b"), (std::vector<uint16_t>{0, 0, 0, 1000, 0, 1000, 0, 0}));
  EXPECT_EQ(cache_.stats().reservationsLive, 1U);

  // The watch shows the pod bound there, without an index annotation: confirmed, GPUs kept.
  cache_.upsertPod(PodMaker(s_, "r1").on("gpu-b").cpu(2000).memory(8 * kGi).gpus(2).build());
  n = node("gpu-b");
  EXPECT_EQ(n.usedMilliCpu, 2000);
  EXPECT_EQ(n.usedPods, 1);
  EXPECT_EQ(n.scalar("nvidia.com/gpu")->used, 2);
  EXPECT_EQ(gpus("gpu-b"), (std::vector<uint16_t>{0, 0, 0, 1000, 0, 1000, 0, 0}));
  CacheStats st = cache_.stats();
  EXPECT_EQ(st.reservationsLive, 0U);
  EXPECT_EQ(st.reservationsConfirmed, 1U);
  EXPECT_EQ(st.boundPods, 1U);
  // A confirmed pod is not reserved again, and expiry no longer touches it.
  EXPECT_EQ(cache_.reserve(r, now), ReserveResult::AlreadyBound);
  EXPECT_EQ(cache_.expire(now + std::chrono::hours(1)), 0U);
  EXPECT_EQ(node("gpu-b").usedPods, 1);
}

TEST_F(CacheTest, ReservationConfirmedByAnnotatedPodUsesTheAnnotation) {
  const auto now = Clock::now();
  ReservationRequest r{.podUid = "r2", .node = "gpu-a", .gpuResource = "nvidia.com/gpu", .gpuAmount = 1};
  r.gpus.count = 1;
  r.gpus.index = {2};
  r.gpus.milliEach = 1000;
  cache_.reserve(r, now);
  cache_.upsertPod(PodMaker(s_, "r2").on("gpu-a").gpus(1).gpuIndex("2").build());
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{0, 0, 1000, 0}));
  EXPECT_EQ(cache_.stats().reservationsConfirmed, 1U);
}

TEST_F(CacheTest, ReservationReleasedWhenPodLandsElsewhere) {
  const auto now = Clock::now();
  ReservationRequest r{.podUid = "r3", .node = "gpu-a", .milliCpu = 100};
  cache_.reserve(r, now);
  // Still pending in the watch: the reservation stays.
  cache_.upsertPod(PodMaker(s_, "r3").cpu(100).build());
  EXPECT_EQ(node("gpu-a").usedPods, 1);
  cache_.upsertPod(PodMaker(s_, "r3").on("gpu-b").cpu(100).build());
  EXPECT_EQ(node("gpu-a").usedPods, 0);
  EXPECT_EQ(node("gpu-b").usedPods, 1);
  EXPECT_EQ(cache_.stats().reservationsReleased, 1U);
  EXPECT_EQ(cache_.stats().reservationsConfirmed, 0U);
}

TEST_F(CacheTest, ReservationTtlExpiryUnreserveAndDeletion) {
  const auto now = Clock::now();
  ReservationRequest r{.podUid = "e1", .node = "gpu-a", .milliCpu = 100, .gpuResource = "nvidia.com/gpu",
                       .gpuAmount = 1, .ttl = std::chrono::seconds(10)};
  r.gpus.count = 1;
  r.gpus.index = {0};
  r.gpus.milliEach = 1000;
  EXPECT_EQ(cache_.reserve(r, now), ReserveResult::Reserved);
  r.podUid = "e2";
  r.gpus.index = {1};
  r.ttl = std::chrono::seconds(20);
  cache_.reserve(r, now);
  r.podUid = "u1";
  r.gpus.index = {2};
  cache_.reserve(r, now);
  r.podUid = "d1";
  r.gpus.index = {3};
  cache_.reserve(r, now);
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{1000, 1000, 1000, 1000}));

  EXPECT_EQ(cache_.expire(now + std::chrono::seconds(9)), 0U);
  EXPECT_EQ(cache_.expire(now + std::chrono::seconds(10)), 1U);
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{0, 1000, 1000, 1000}));
  EXPECT_TRUE(cache_.unreserve("u1"));
  EXPECT_FALSE(cache_.unreserve("u1"));
  EXPECT_TRUE(cache_.deletePod("d1"));
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{0, 1000, 0, 0}));
  EXPECT_EQ(cache_.expire(now + std::chrono::seconds(20)), 1U);
  EXPECT_EQ(gpus("gpu-a"), (std::vector<uint16_t>{0, 0, 0, 0}));
  const plugins::NodeInfo n = node("gpu-a");
  EXPECT_EQ(n.usedPods, 0);
  EXPECT_EQ(n.usedMilliCpu, 0);
  EXPECT_EQ(n.scalar("nvidia.com/gpu")->used, 0);
  const CacheStats st = cache_.stats();
  EXPECT_EQ(st.reservationsLive, 0U);
  EXPECT_EQ(st.reservationsExpired, 2U);
  EXPECT_EQ(st.reservationsReleased, 2U);
}

TEST_F(CacheTest, ReserveEdgeCases) {
  const auto now = Clock::now();
  ReservationRequest r{.podUid = "q", .node = "missing", .milliCpu = 100};
  EXPECT_EQ(cache_.reserve(r, now), ReserveResult::UnknownNode);
  r.node = "gpu-a";
  EXPECT_EQ(cache_.reserve(r, now), ReserveResult::Reserved);
  r.node = "gpu-b";
  EXPECT_EQ(cache_.reserve(r, now), ReserveResult::Replaced);
  EXPECT_EQ(node("gpu-a").usedPods, 0);
  EXPECT_EQ(node("gpu-b").usedPods, 1);
  cache_.upsertPod(PodMaker(s_, "bound").on("gpu-a").build());
  r.podUid = "bound";
  EXPECT_EQ(cache_.reserve(r, now), ReserveResult::AlreadyBound);
  EXPECT_EQ(node("gpu-b").usedPods, 1);
}

TEST_F(CacheTest, WorkloadZoneCounts) {
  const uint32_t z1 = zoneId("gpu-a");
  const uint32_t z2 = zoneId("gpu-b");
  cache_.upsertPod(PodMaker(s_, "w1").on("gpu-a").owner("Job", "train").build());
  cache_.upsertPod(PodMaker(s_, "w2").on("cpu-c").owner("Job", "train").build());
  cache_.upsertPod(PodMaker(s_, "w3").on("gpu-b").owner("Job", "train").build());
  cache_.upsertPod(PodMaker(s_, "l1").on("gpu-b").label("fleetsched.io/workload", "serving").build());
  cache_.upsertPod(PodMaker(s_, "other").on("gpu-b").owner("Job", "other").build());
  cache_.upsertPod(PodMaker(s_, "none").on("gpu-b").build());
  std::vector<uint32_t> c = zoneCounts("default/Job/train");
  EXPECT_EQ(c[z1], 2U);
  EXPECT_EQ(c[z2], 1U);
  EXPECT_EQ(zoneCounts("default/label/serving")[z2], 1U);
  EXPECT_EQ(zoneCounts("nobody"), std::vector<uint32_t>(3, 0));
  // The Zone plugin asks with the key it derives from the pod being scheduled.
  std::string key;
  ASSERT_TRUE(plugins::workloadKey(PodMaker(s_, "next").owner("Job", "train").build(),
                                   plugins::zone::Args{}.workloadLabels, key));
  EXPECT_EQ(zoneCounts(key), c);

  // Deletion, a terminal phase and a move all adjust the counts.
  cache_.deletePod("w1");
  cache_.upsertPod(PodMaker(s_, "w2").on("cpu-c").owner("Job", "train").phase(PodPhase::Succeeded).build());
  cache_.upsertPod(PodMaker(s_, "w3").on("gpu-a").owner("Job", "train").build());
  c = zoneCounts("default/Job/train");
  EXPECT_EQ(c[z1], 1U);
  EXPECT_EQ(c[z2], 0U);

  // Reservations count too.
  ReservationRequest r{.podUid = "wr", .node = "gpu-b", .workload = "default/Job/train"};
  cache_.reserve(r, Clock::now());
  EXPECT_EQ(zoneCounts("default/Job/train")[z2], 1U);
  cache_.unreserve("wr");
  EXPECT_EQ(zoneCounts("default/Job/train")[z2], 0U);

  // A new zone after the counts exist: the caller's span may be larger than the stored stride.
  cache_.upsertNode(NodeMaker(s_, "far").zone("z3").build());
  cache_.upsertPod(PodMaker(s_, "w9").on("far").owner("Job", "train").build());
  c = zoneCounts("default/Job/train");
  ASSERT_EQ(c.size(), 4U);
  EXPECT_EQ(c[zoneId("far")], 1U);
  EXPECT_EQ(c[z1], 1U);
}

TEST_F(CacheTest, ReplaceNodesAndPodsIsOneVersion) {
  cache_.upsertPod(PodMaker(s_, "keep").on("gpu-a").cpu(100).build());
  cache_.upsertPod(PodMaker(s_, "drop").on("gpu-b").cpu(100).build());
  ReservationRequest r{.podUid = "inflight", .node = "gpu-a", .milliCpu = 50};
  cache_.reserve(r, Clock::now());
  Snapshot before = reader_.acquire();

  std::vector<codec::Node> nodes{NodeMaker(s_, "gpu-a").zone("z1").gpus(4).build(),
                                 NodeMaker(s_, "gpu-d").gpus(2).build()};
  std::vector<codec::Pod> pods{PodMaker(s_, "keep").on("gpu-a").cpu(100).build(),
                               PodMaker(s_, "new").on("gpu-d").cpu(100).build()};
  {
    auto w = cache_.write();
    w.replaceNodes(nodes);
    w.replacePods(pods);
  }
  Snapshot after = reader_.acquire();
  EXPECT_EQ(after.version(), before.version() + 1);
  EXPECT_EQ(after.nodeCount(), 2U);
  EXPECT_EQ(after.find("gpu-b"), nullptr);
  EXPECT_EQ(after.find("cpu-c"), nullptr);
  EXPECT_EQ(after.find("gpu-a")->usedMilliCpu, 150);  // "keep" plus the live reservation
  EXPECT_EQ(after.find("gpu-d")->usedMilliCpu, 100);
  EXPECT_EQ(cache_.stats().boundPods, 2U);
  EXPECT_EQ(cache_.stats().waitingPods, 0U);
  EXPECT_EQ(before.nodeCount(), 3U);
}

TEST(DemoFleet, IsAMixedDeterministicGpuFleet) {
  const DemoFleet& fleet = demoFleet();
  EXPECT_EQ(fleet.nodes.size(), 48U);
  Cache cache;
  Reader reader(cache);
  {
    auto w = cache.write();
    w.replaceNodes(fleet.nodes);
  }
  Snapshot snap = reader.acquire();
  EXPECT_EQ(snap.nodeCount(), 48U);
  EXPECT_EQ(snap.zoneCount(), 4U);
  std::set<std::string_view> models;
  std::map<plugins::CapacityType, int> caps;
  int gpus = 0;
  int cpuOnly = 0;
  snap.forEachNode([&](const plugins::NodeInfo& n) {
    if (n.gpuCount > 0) {
      models.insert(n.gpuModelName);
      EXPECT_GT(n.gpuMemoryMiB, 0) << n.name;
    } else {
      ++cpuOnly;
    }
    gpus += n.gpuCount;
    ++caps[n.capacityType];
    EXPECT_NE(n.zone, 0) << n.name;
    EXPECT_GT(n.allocMilliCpu, 0);
  });
  EXPECT_EQ(models, (std::set<std::string_view>{"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-L4",
                                                 "Tesla-T4", "NVIDIA-A10G"}));
  EXPECT_EQ(cpuOnly, 12);
  EXPECT_EQ(gpus, 6 * 8 + 6 * 8 + 9 * 4 + 9 * 4 + 6);
  EXPECT_GT(caps[plugins::CapacityType::Spot], 0);
  EXPECT_GT(caps[plugins::CapacityType::OnDemand], 0);
  EXPECT_GT(caps[plugins::CapacityType::Reserved], 0);
  EXPECT_EQ(caps[plugins::CapacityType::Unknown], 0);
  EXPECT_EQ(demoFleetJson(), demoFleetJson());
  EXPECT_NE(demoFleetJson().find(fleet.nodes[0].name), std::string::npos);
}

// SnapshotRows keeps a table per set of GPU resources: each follows the snapshots' changes, and
// asking for other resources neither moves nor rebuilds it.
TEST_F(CacheTest, SnapshotRowsKeepATablePerResourcesAndFollowChanges) {
  SnapshotRows rows;
  const plugins::GpuResourceConfig gpu;  // nvidia.com/gpu
  plugins::GpuResourceConfig other;
  other.resourceNames = {"example.com/gpu"};
  Snapshot before = reader_.acquire();
  const uint32_t a = before.find("gpu-a")->id;
  const plugins::NodeColumns& byGpu = rows.refresh(before, gpu);
  const plugins::NodeColumns& byOther = rows.refresh(before, other);
  EXPECT_NE(&byGpu, &byOther);
  EXPECT_EQ(byGpu.row(a).unitsFree, 4);
  EXPECT_EQ(byOther.row(a).unitsFree, plugins::NodeColumns::kNoUnits);
  EXPECT_EQ(byGpu.row(a).freeWhole, 4);

  cache_.upsertPod(PodMaker(s_, "p1").on("gpu-a").gpus(2).build());
  Snapshot after = reader_.acquire();
  EXPECT_EQ(&rows.refresh(after, gpu), &byGpu);
  EXPECT_EQ(byGpu.row(a).unitsFree, 2);
  EXPECT_EQ(byGpu.row(a).freeWhole, 2);
  EXPECT_EQ(byGpu.row(before.find("gpu-b")->id).freeWhole, 8);
  EXPECT_EQ(&rows.refresh(after, other), &byOther);
  EXPECT_EQ(byOther.row(a).freeWhole, 2);
}

}  // namespace
}  // namespace fleetsched::cache
