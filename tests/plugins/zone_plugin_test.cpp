#include <gtest/gtest.h>

#include "fixtures.h"
#include "plugins/zone/zone_plugin.h"

namespace fleetsched::plugins {
namespace {

using testing::Harness;
using testing::NodeBuilder;
using testing::Nodes;
using testing::PodBuilder;

Nodes threeZones() {
  return Nodes{NodeBuilder().zone(1).gpus(8).build(), NodeBuilder().zone(2).gpus(8).build(),
               NodeBuilder().zone(3).gpus(8).build(), NodeBuilder().gpus(8).build()};
}

TEST(ZonePlugin, SpreadPrefersZonesWithFewerPodsOfTheWorkload) {
  auto h = Harness::single("Zone");
  h.cluster.set("ns/StatefulSet/db", 1, 3);
  h.cluster.set("ns/StatefulSet/db", 2, 1);
  const auto t = h.totals(PodBuilder().owner("StatefulSet", "db").build(), threeZones());
  EXPECT_EQ(h.cluster.lastWorkload, "ns/StatefulSet/db");
  EXPECT_LT(t[0], t[1]);
  EXPECT_LT(t[1], t[2]);  // zone 3 has none
  EXPECT_EQ(t[2], kMaxNodeScore);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[3], kMaxNodeScore / 2);  // no zone: neutral
}

TEST(ZonePlugin, PackPrefersZonesWithMorePodsByArgOrAnnotation) {
  auto pack = Harness::single("Zone", "{policy: pack}");
  pack.cluster.set("ns/Job/train", 2, 4);
  auto t = pack.totals(PodBuilder().owner("Job", "train").build(), threeZones());
  EXPECT_GT(t[1], t[0]);
  EXPECT_EQ(t[0], t[2]);

  auto spread = Harness::single("Zone");
  spread.cluster.set("ns/Job/train", 2, 4);
  t = spread.totals(PodBuilder().owner("Job", "train").annotation("fleetsched.io/zone-policy", "pack").build(),
                    threeZones());
  EXPECT_GT(t[1], t[0]);
}

TEST(ZonePlugin, AnEmptyGangPacksWhereTheMostGpusAreFree) {
  auto h = Harness::single("Zone", "{policy: pack}");
  Nodes nodes{NodeBuilder().zone(1).gpus(8).usedWhole(6).build(), NodeBuilder().zone(1).gpus(8).usedWhole(6).build(),
              NodeBuilder().zone(2).gpus(8).usedWhole(2).build(), NodeBuilder().zone(3).gpus(8).usedWhole(8).build()};
  const auto t = h.totals(PodBuilder().gpu(1).label("fleetsched.io/workload", "gang").build(), nodes);
  EXPECT_GT(t[2], t[0]);  // zone 2: 6 free, zone 1: 4 free, zone 3: none
  EXPECT_EQ(t[0], t[1]);
  EXPECT_GT(t[0], t[3]);
}

TEST(ZonePlugin, NeutralWithoutWorkloadOrWhenCountsTie) {
  auto h = Harness::single("Zone");
  h.cluster.set("ns/label/a", 1, 2);
  auto t = h.totals(PodBuilder().build(), threeZones());
  for (auto v : t) EXPECT_EQ(v, kMaxNodeScore / 2);
  t = h.totals(PodBuilder().label("fleetsched.io/workload", "b").build(), threeZones());
  for (auto v : t) EXPECT_EQ(v, kMaxNodeScore / 2);
}

TEST(ZonePlugin, WorkloadLabelsArg) {
  auto h = Harness::single("Zone", "{workloadLabels: [app]}");
  h.cluster.set("ns/label/web", 1, 5);
  const auto t = h.totals(PodBuilder().label("app", "web").build(), threeZones());
  EXPECT_LT(t[0], t[1]);
}

TEST(ZonePlugin, InvalidPolicyAnnotationIsUnresolvable) {
  auto h = Harness::single("Zone");
  const Status s = h.preFilter(PodBuilder().annotation("fleetsched.io/zone-policy", "cluster").build());
  EXPECT_EQ(s.code, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(s.reason, "invalid annotation fleetsched.io/zone-policy: want spread or pack");
}

}  // namespace
}  // namespace fleetsched::plugins
