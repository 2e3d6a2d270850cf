// plugins::Cycle, and the promise that lets several of them share one profile: plugins are
// immutable, so two threads deciding with the same profile at once, each through its own Cycle,
// decide what one thread decides. The learning policies (FGD and Fleet without a model learn the
// typical pods online) are the ones that kept state: their memo now lives in the cycle and their
// learner is locked inside. scripts/test.sh runs this under ThreadSanitizer, where a memo shared
// between threads is reported as a data race even when the decisions happen to agree.
#include "plugins/cycle.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/plugins/fixtures.h"

namespace fleetsched::plugins {
namespace {

using testing::FakeCluster;
using testing::NodeBuilder;
using testing::Nodes;
using testing::PodBuilder;

struct Decision {
  int node = -1;
  GpuAssignment gpus;
  bool operator==(const Decision& o) const {
    return node == o.node && gpus.count == o.gpus.count && gpus.index == o.gpus.index && gpus.milliEach == o.gpus.milliEach;
  }
};

// One pod's cycle as the replay runs it: the best total, the lowest index among equals, its GPUs.
Decision decide(Cycle& cycle, const Profile& profile, const codec::Pod& pod, const ClusterState& cluster,
                const Nodes& nodes) {
  Decision d;
  if (!cycle.begin(profile, pod, cluster).ok()) return d;
  const NodeBatch all = cycle.batch(nodes.span());
  cycle.filter(all);
  const NodeBatch feasible = cycle.feasible(all);
  if (feasible.empty()) return d;
  const auto totals = cycle.scoreTotals(feasible);
  size_t best = 0;
  for (size_t i = 1; i < feasible.size(); ++i) {
    if (totals[i] > totals[best]) best = i;
  }
  if (!cycle.selectGpus(*feasible[best], d.gpus)) return d;
  d.node = static_cast<int>(feasible[best]->id);
  return d;
}

Nodes fleet() {
  Nodes nodes;
  for (int i = 0; i < 48; ++i) {
    const int used = (i * 7) % 9;
    NodeBuilder b;
    b.name("node-" + std::to_string(100 + i)).gpus(8).model(i % 3 == 0 ? "A100" : "H100");
    b.cpu(96000, (i * 5000) % 90000);
    NodeInfo n = b.build();
    for (int g = 0; g < used && g < 8; ++g) n.gpuUsedMilli[g] = static_cast<uint16_t>(g % 2 == 0 ? 1000 : 250 * (g % 4));
    nodes.add(n);
  }
  return nodes;
}

// Pods of several shapes; `tag` keeps their UIDs apart between sets.
std::vector<codec::Pod> pods(const std::string& tag, int count) {
  std::vector<codec::Pod> out;
  for (int i = 0; i < count; ++i) {
    PodBuilder b;
    b.name(tag + "-" + std::to_string(i)).cpu(1000 + 1000 * (i % 6));
    switch (i % 4) {
      case 0: b.gpu(1).milli(250 * (1 + i % 3)); break;
      case 1: b.gpu(1); break;
      case 2: b.gpu(2 + 2 * (i % 2)); break;
      default: break;  // CPU only
    }
    codec::Pod p = b.build();
    p.uid = testing::intern("uid-" + tag + "-" + std::to_string(i));
    out.push_back(p);
  }
  return out;
}

class TwoThreads : public ::testing::TestWithParam<const char*> {};

TEST_P(TwoThreads, DecideWithOneProfileAsOneThreadDoes) {
  std::string error;
  auto config = loadConfig(testing::singlePluginYaml(GetParam(), ""), error);
  ASSERT_TRUE(config) << error;
  const Profile& profile = config->profiles().front();
  const Nodes nodes = fleet();
  const std::vector<codec::Pod> known = pods("known", 120);

  // Learn every pod once, then decide them on one thread: the reference. Seen UIDs are not
  // learned again, so the model stays what it is from here on.
  FakeCluster cluster;
  Cycle reference;
  for (const auto& pod : known) decide(reference, profile, pod, cluster, nodes);
  std::vector<Decision> expected;
  for (const auto& pod : known) expected.push_back(decide(reference, profile, pod, cluster, nodes));
  int placed = 0;
  for (const Decision& d : expected) placed += d.node >= 0;
  ASSERT_GT(placed, 60);

  // Two threads at once, each its own Cycle and cluster view: the same decisions, round after
  // round.
  std::vector<Decision> got[2];
  auto decider = [&](int t) {
    FakeCluster own;
    Cycle cycle;
    for (int round = 0; round < 3; ++round) {
      got[t].clear();
      for (const auto& pod : known) got[t].push_back(decide(cycle, profile, pod, own, nodes));
    }
  };
  std::thread a(decider, 0), b(decider, 1);
  a.join();
  b.join();
  for (int t = 0; t < 2; ++t) {
    ASSERT_EQ(got[t].size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_TRUE(got[t][i] == expected[i]) << GetParam() << " thread " << t << " pod " << known[i].name << ": node "
                                            << got[t][i].node << ", one thread chose " << expected[i].node;
    }
  }

  // Two threads learning new pods at once (the model is rebuilt under them): nothing to compare
  // with, but every pod is decided, and ThreadSanitizer sees the learner shared.
  int learnedPlaced[2] = {0, 0};
  const std::vector<codec::Pod> fresh[2] = {pods("fresh0", 300), pods("fresh1", 300)};  // interned here, not there
  auto learner = [&](int t) {
    FakeCluster own;
    Cycle cycle;
    for (const auto& pod : fresh[t]) {
      learnedPlaced[t] += decide(cycle, profile, pod, own, nodes).node >= 0;
    }
  };
  std::thread c(learner, 0), d(learner, 1);
  c.join();
  d.join();
  EXPECT_GT(learnedPlaced[0], 150);
  EXPECT_GT(learnedPlaced[1], 150);
}

INSTANTIATE_TEST_SUITE_P(LearningPolicies, TwoThreads, ::testing::Values("Fleet", "FGD"));

// A failed PreFilter is every node's verdict, with its reason; filterOne answers it too.
TEST(Cycle, APreFilterFailureIsEveryNodesVerdict) {
  std::string error;
  auto config = loadConfig(testing::singlePluginYaml("GPU", ""), error);
  ASSERT_TRUE(config) << error;
  const Nodes nodes{NodeBuilder().name("a").gpus(8).build(), NodeBuilder().name("b").gpus(8).build()};
  const codec::Pod pod = PodBuilder().gpu(1).annotation("fleetsched.io/gpu-milli", "lots").build();
  FakeCluster cluster;
  Cycle cycle;
  const Status s = cycle.begin(config->profiles().front(), pod, cluster);
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(cycle.admitted());
  const auto verdicts = cycle.filter(cycle.batch(nodes.span()));
  ASSERT_EQ(verdicts.size(), 2U);
  EXPECT_EQ(verdicts[0], verdicts[1]);
  EXPECT_NE(verdicts[0], kPass);
  EXPECT_EQ(cycle.failure(verdicts[0]).reason, s.reason);
  EXPECT_EQ(cycle.filterOne(nodes[0]).reason, s.reason);
}

}  // namespace
}  // namespace fleetsched::plugins
