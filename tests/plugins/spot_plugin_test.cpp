#include <gtest/gtest.h>

#include "fixtures.h"
#include "plugins/spot/spot_plugin.h"

namespace fleetsched::plugins {
namespace {

using testing::Harness;
using testing::NodeBuilder;
using testing::Nodes;
using testing::PodBuilder;

struct ToleranceCase {
  const char* desc;
  codec::Pod pod;
  bool tolerant;
};

class SpotTolerance : public ::testing::TestWithParam<ToleranceCase> {};

// A spot node rejects exactly the pods that do not declare tolerance; other nodes take all.
TEST_P(SpotTolerance, FilterVerdicts) {
  const auto& c = GetParam();
  auto h = Harness::single("Spot");
  Nodes nodes{NodeBuilder().spot().build(), NodeBuilder().capacity(CapacityType::OnDemand).build(),
              NodeBuilder().build(), NodeBuilder().capacity(CapacityType::Reserved).build()};
  const auto out = h.filter(c.pod, nodes);
  if (c.tolerant) {
    EXPECT_TRUE(out[0].ok()) << c.desc;
  } else {
    EXPECT_EQ(out[0].code, Code::UnschedulableAndUnresolvable) << c.desc;
    EXPECT_EQ(out[0].reason, "node is spot capacity; pod is not spot-tolerant");
  }
  EXPECT_TRUE(out[1].ok() && out[2].ok() && out[3].ok()) << c.desc;
}

INSTANTIATE_TEST_SUITE_P(
    Table, SpotTolerance,
    ::testing::Values(
        ToleranceCase{"plain pod", PodBuilder().build(), false},
        ToleranceCase{"annotation true", PodBuilder().spotTolerant().build(), true},
        ToleranceCase{"annotation false", PodBuilder().annotation("fleetsched.io/spot-tolerant", "false").build(),
                      false},
        ToleranceCase{"fleetsched toleration", PodBuilder().toleration("fleetsched.io/spot").build(), true},
        ToleranceCase{"azure toleration", PodBuilder().toleration("kubernetes.azure.com/scalesetpriority", false, "spot")
                                              .build(),
                      true},
        ToleranceCase{"gke toleration", PodBuilder().toleration("cloud.google.com/gke-spot", false, "true").build(),
                      true},
        ToleranceCase{"tolerates everything", PodBuilder().toleration("").build(), true},
        ToleranceCase{"unrelated toleration", PodBuilder().toleration("nvidia.com/gpu").build(), false}));

TEST(SpotPlugin, TolerationKeysArgReplacesTheDefaults) {
  auto h = Harness::single("Spot", "{tolerationKeys: [example.com/preemptible]}");
  Nodes nodes{NodeBuilder().spot().build()};
  EXPECT_TRUE(h.filter(PodBuilder().toleration("example.com/preemptible").build(), nodes)[0].ok());
  EXPECT_FALSE(h.filter(PodBuilder().toleration("fleetsched.io/spot").build(), nodes)[0].ok());
}

TEST(SpotPlugin, TolerantPodsPreferSpotByDefaultOrOnDemandWhenAsked) {
  Nodes nodes{NodeBuilder().spot().build(), NodeBuilder().capacity(CapacityType::OnDemand).build(),
              NodeBuilder().build()};
  auto prefer = Harness::single("Spot");
  auto t = prefer.totals(PodBuilder().spotTolerant().build(), nodes);
  EXPECT_GT(t[0], t[1]);
  EXPECT_EQ(t[1], t[2]);  // unknown counts as on-demand

  auto drain = Harness::single("Spot", "{preferSpot: false}");
  t = drain.totals(PodBuilder().spotTolerant().build(), nodes);
  EXPECT_LT(t[0], t[1]);
  EXPECT_EQ(t[1], t[2]);
}

TEST(SpotPlugin, IntolerantPodsScoreNeutrally) {
  Nodes nodes{NodeBuilder().capacity(CapacityType::OnDemand).build(), NodeBuilder().build(),
              NodeBuilder().capacity(CapacityType::Reserved).build()};
  auto h = Harness::single("Spot");
  const auto t = h.totals(PodBuilder().build(), nodes);
  EXPECT_EQ(t[0], t[1]);
  EXPECT_EQ(t[1], t[2]);
}

}  // namespace
}  // namespace fleetsched::plugins
