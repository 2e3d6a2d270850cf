#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fixtures.h"
#include "plugins/gpu/gpu_plugin.h"
#include "plugins/spot/spot_plugin.h"

namespace fleetsched::plugins {
namespace {

using testing::FakeCluster;
using testing::NodeBuilder;
using testing::Nodes;
using testing::PodBuilder;

// A scripted plugin: rejects the named nodes with its own reason, scores from a table, and
// records which nodes Filter was shown.
class Scripted final : public Plugin {
 public:
  Scripted(std::string name, std::set<std::string> reject, std::map<std::string, int32_t> scores = {})
      : name_(std::move(name)), reject_(std::move(reject)), scores_(std::move(scores)) {}
  std::string_view name() const override { return name_; }
  bool filters() const override { return true; }
  bool scores() const override { return !scores_.empty(); }
  void filter(const CycleState&, int, const NodeBatch& nodes, std::span<Verdict> verdict,
              FailureCodes& failures) const override {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (verdict[i] != kPass) continue;
      seen.emplace_back(nodes[i]->name);
      if (reject_.count(std::string(nodes[i]->name))) verdict[i] = failures.code({Code::Unschedulable, name_});
    }
  }
  void score(const CycleState&, int, const NodeBatch& nodes, std::span<int32_t> out) const override {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = scores_.at(std::string(nodes[i]->name));
  }
  mutable std::vector<std::string> seen;

 private:
  std::string name_;
  std::set<std::string> reject_;
  std::map<std::string, int32_t> scores_;
};

Nodes named(std::initializer_list<const char*> names) {
  Nodes n;
  for (const char* s : names) n.add(NodeBuilder().name(s).build());
  return n;
}

TEST(Profile, RejectedNodesKeepTheFirstFailingStatusAndSkipLaterPlugins) {
  auto a = std::make_unique<Scripted>("A", std::set<std::string>{"n1", "n2"});
  auto b = std::make_unique<Scripted>("B", std::set<std::string>{"n2", "n3"});
  const Scripted* bp = b.get();
  std::vector<Profile::Entry> entries;
  entries.push_back({std::move(a), 1});
  entries.push_back({std::move(b), 1});
  Profile profile("p", {}, std::move(entries));

  Nodes nodes = named({"n0", "n1", "n2", "n3", "n4"});
  const auto pod = PodBuilder().build();
  CycleState state;
  ProfileScratch scratch;
  FakeCluster cluster;
  std::vector<Status> out(nodes.size());
  const NodeSpan feasible = profile.runFilter(pod, state, cluster, nodes.span(), out, scratch);

  EXPECT_EQ(bp->seen, (std::vector<std::string>{"n0", "n3", "n4"}));
  EXPECT_TRUE(out[0].ok());
  EXPECT_EQ(out[1].reason, "A");
  EXPECT_EQ(out[2].reason, "A");  // B would reject it too; A's status stays
  EXPECT_EQ(out[3].reason, "B");
  EXPECT_TRUE(out[4].ok());
  ASSERT_EQ(feasible.size(), 2u);
  EXPECT_EQ(feasible[0]->name, "n0");
  EXPECT_EQ(feasible[1]->name, "n4");
  EXPECT_EQ(std::vector<uint32_t>(scratch.feasibleIndex().begin(), scratch.feasibleIndex().end()),
            (std::vector<uint32_t>{0, 4}));
}

TEST(Profile, RealPluginsInOrder) {
  // An intolerant GPU pod on a spot node without GPUs: whichever plugin runs first explains it.
  Nodes nodes{NodeBuilder().spot().build()};
  const auto pod = PodBuilder().gpu(1).build();
  for (bool spotFirst : {true, false}) {
    std::vector<Profile::Entry> e;
    e.push_back({gpu::create({}), 10});
    e.insert(spotFirst ? e.begin() : e.end(), Profile::Entry{spot::create({}), 5});
    Profile profile("p", {}, std::move(e));
    CycleState state;
    ProfileScratch scratch;
    FakeCluster cluster;
    std::vector<Status> out(1);
    profile.runFilter(pod, state, cluster, nodes.span(), out, scratch);
    EXPECT_EQ(out[0].reason, spotFirst ? spot::kNotTolerant : "node has no nvidia.com/gpu (Node does not have GPU)");
  }
}

TEST(Profile, PreFilterFailureRejectsEveryNode) {
  Config config = defaultConfig();
  Nodes nodes{NodeBuilder().gpus(8).build(), NodeBuilder().gpus(4).build()};
  const auto pod = PodBuilder().gpu(2).milli(300).build();
  CycleState state;
  ProfileScratch scratch;
  FakeCluster cluster;
  std::vector<Status> out(nodes.size());
  const auto feasible = config.profiles()[0].runFilter(pod, state, cluster, nodes.span(), out, scratch);
  EXPECT_TRUE(feasible.empty());
  for (const auto& s : out) {
    EXPECT_EQ(s.code, Code::UnschedulableAndUnresolvable);
    EXPECT_EQ(s.reason, "annotation fleetsched.io/gpu-milli needs a request of exactly 1 GPU");
  }
}

TEST(Profile, TotalsAreTheWeightedSumOfPluginScores) {
  std::vector<Profile::Entry> e;
  e.push_back({std::make_unique<Scripted>("A", std::set<std::string>{},
                                          std::map<std::string, int32_t>{{"x", 100}, {"y", 0}, {"z", 50}}),
               3});
  e.push_back({std::make_unique<Scripted>("B", std::set<std::string>{},
                                          std::map<std::string, int32_t>{{"x", 0}, {"y", 100}, {"z", 50}}),
               2});
  Profile profile("p", {}, std::move(e));
  Nodes nodes = named({"x", "y", "z"});
  const auto pod = PodBuilder().build();
  CycleState state;
  ProfileScratch scratch;
  FakeCluster cluster;
  ASSERT_TRUE(profile.preFilter(pod, state, cluster).ok());
  const NodeBatch batch = scratch.batch(nodes.span(), profile.gpuResources());
  const auto t = profile.scoreTotals(state, cluster, batch, scratch);
  EXPECT_EQ(std::vector<int64_t>(t.begin(), t.end()), (std::vector<int64_t>{300, 200, 250}));
  std::vector<int32_t> wire(3);
  profile.extenderScores(state, cluster, batch, wire, scratch);
  EXPECT_EQ(wire, (std::vector<int32_t>{10, 0, 5}));
}

// Weight 0 keeps a plugin's Filter and drops its Score: the GPU filter under a placement policy.
TEST(Profile, WeightZeroFiltersWithoutScoring) {
  std::vector<Profile::Entry> e;
  e.push_back({std::make_unique<Scripted>("A", std::set<std::string>{"y"},
                                          std::map<std::string, int32_t>{{"x", 100}, {"y", 100}, {"z", 0}}),
               0});
  e.push_back({std::make_unique<Scripted>("B", std::set<std::string>{},
                                          std::map<std::string, int32_t>{{"x", 0}, {"y", 100}, {"z", 50}}),
               2});
  Profile profile("p", {}, std::move(e));
  Nodes nodes = named({"x", "y", "z"});
  const auto pod = PodBuilder().build();
  CycleState state;
  ProfileScratch scratch;
  FakeCluster cluster;
  std::vector<Status> out(3);
  const auto feasible = profile.runFilter(pod, state, cluster, nodes.span(), out, scratch);
  ASSERT_EQ(feasible.size(), 2u);  // A still rejects y
  const auto t = profile.scoreTotals(state, cluster, scratch.batch(feasible, profile.gpuResources()), scratch);
  EXPECT_EQ(std::vector<int64_t>(t.begin(), t.end()), (std::vector<int64_t>{0, 100}));  // B's alone
}

// Always puts a pod on the node's last GPU.
class LastGpu final : public Plugin {
 public:
  std::string_view name() const override { return "LastGpu"; }
  bool filters() const override { return true; }
  bool selectGpus(const CycleState& state, int, const NodeInfo& node, GpuAssignment& out) const override {
    out.count = 1;
    out.index[0] = static_cast<uint8_t>(node.gpuCount - 1);
    out.milliEach = state.pod.gpuMilli;
    return true;
  }
};

TEST(Profile, WeightZeroPluginsDoNotChooseGpus) {
  Nodes nodes{NodeBuilder().gpus(4).build()};
  const auto pod = PodBuilder().gpu(1).build();
  for (int32_t weight : {0, 1}) {
    std::vector<Profile::Entry> e;
    e.push_back({std::make_unique<LastGpu>(), weight});
    Profile profile("p", {}, std::move(e));
    CycleState state;
    FakeCluster cluster;
    ASSERT_TRUE(profile.preFilter(pod, state, cluster).ok());
    GpuAssignment out;
    ASSERT_TRUE(profile.selectGpus(state, *nodes.span()[0], out));
    ASSERT_EQ(out.count, 1);
    EXPECT_EQ(out.index[0], weight == 0 ? 0 : 3) << "weight " << weight;  // 0: the best-fit default
  }
}

// Doubles its raw scores in NormalizeScore; the pipeline must weigh the normalized values.
class Doubling final : public Plugin {
 public:
  std::string_view name() const override { return "Doubling"; }
  bool scores() const override { return true; }
  void score(const CycleState&, int, const NodeBatch& nodes, std::span<int32_t> out) const override {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = static_cast<int32_t>(10 * i);
  }
  void normalizeScore(const CycleState&, int, const NodeBatch&, std::span<int32_t> scores) const override {
    for (auto& s : scores) s *= 2;
  }
};

TEST(Profile, WeightsApplyToNormalizedScores) {
  std::vector<Profile::Entry> e;
  e.push_back({std::make_unique<Doubling>(), 3});
  Profile profile("p", {}, std::move(e));
  Nodes nodes = named({"a", "b", "c"});
  const auto pod = PodBuilder().build();
  CycleState state;
  ProfileScratch scratch;
  FakeCluster cluster;
  ASSERT_TRUE(profile.preFilter(pod, state, cluster).ok());
  const auto t = profile.scoreTotals(state, cluster, scratch.batch(nodes.span(), profile.gpuResources()), scratch);
  EXPECT_EQ(std::vector<int64_t>(t.begin(), t.end()), (std::vector<int64_t>{0, 60, 120}));
}

TEST(Profile, ExtenderScoresKeepOrderRangeAndATopThatOnlyTheBestReach) {
  const std::vector<int64_t> totals{0, 1799, 1800, 900, 1795, 1800, 17};
  std::vector<int32_t> out(totals.size());
  Profile::toExtenderScores(totals, out);
  for (size_t i = 0; i < totals.size(); ++i) {
    EXPECT_GE(out[i], 0);
    EXPECT_LE(out[i], kMaxExtenderScore);
    for (size_t j = 0; j < totals.size(); ++j) {
      if (totals[i] < totals[j]) {
        EXPECT_LE(out[i], out[j]);
      }
    }
    EXPECT_EQ(out[i] == kMaxExtenderScore, totals[i] == 1800) << i;
  }
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[3], 5);

  std::vector<int64_t> ties{42, 42};
  std::vector<int32_t> tieOut(2);
  Profile::toExtenderScores(ties, tieOut);
  EXPECT_EQ(tieOut, (std::vector<int32_t>{10, 10}));
}

__extension__ typedef __int128 Wide;

TEST(Profile, ExtenderScoresAreTheFlooredShareOfTheRange) {
  // Against the formula, over ranges small and large, ties at the ends and negative totals.
  uint64_t x = 42;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 17;
  };
  for (int64_t range : {int64_t{1}, int64_t{3}, int64_t{9}, int64_t{10}, int64_t{11}, int64_t{97}, int64_t{1800},
                        int64_t{1} << 40, INT64_MAX / 10, INT64_MAX / 3}) {
    for (int64_t base : {int64_t{0}, int64_t{-500}, int64_t{123456}}) {
      if (base > INT64_MAX - range) continue;
      std::vector<int64_t> totals{base, base + range};
      for (int i = 0; i < 200; ++i) totals.push_back(base + static_cast<int64_t>(next() % (static_cast<uint64_t>(range) + 1)));
      std::vector<int32_t> out(totals.size());
      Profile::toExtenderScores(totals, out);
      for (size_t i = 0; i < totals.size(); ++i) {
        const int64_t d = totals[i] - base;
        const auto want = d == range ? kMaxExtenderScore
                                     : static_cast<int32_t>(static_cast<Wide>(d) * kMaxExtenderScore / range);
        ASSERT_EQ(out[i], want) << "range " << range << " base " << base << " total " << totals[i];
      }
    }
  }
}

TEST(Profile, ExtenderScoresFindTheExtremesAnywhere) {
  // The lowest total scores 0 and the highest 10 wherever they sit: every position of a list
  // of each length up to 11, so every lane of the min/max scan and its tail.
  for (size_t n = 2; n <= 11; ++n) {
    for (size_t lowAt = 0; lowAt < n; ++lowAt) {
      for (size_t highAt = 0; highAt < n; ++highAt) {
        if (lowAt == highAt) continue;
        std::vector<int64_t> totals(n, 500);
        totals[lowAt] = -7;
        totals[highAt] = 1003;
        std::vector<int32_t> out(n);
        Profile::toExtenderScores(totals, out);
        for (size_t i = 0; i < n; ++i) {
          const int32_t want = i == lowAt ? 0 : i == highAt ? kMaxExtenderScore : 5;  // ⌊507·10/1010⌋
          ASSERT_EQ(out[i], want) << "n " << n << " low " << lowAt << " high " << highAt << " at " << i;
        }
      }
    }
  }
}

TEST(Profile, DefaultProfilePlacesATwoGpuPodOnTheBusiestFittingOnDemandNode) {
  Config config = defaultConfig();
  const Profile& profile = config.profiles()[0];
  Nodes nodes{
      NodeBuilder().name("free-a100").gpus(8, 81920).zone(1).build(),
      NodeBuilder().name("busy-a100").gpus(8, 81920).usedWhole(6).zone(1).build(),
      NodeBuilder().name("full-a100").gpus(8, 81920).usedWhole(7).zone(2).build(),
      NodeBuilder().name("spot-a100").gpus(8, 81920).usedWhole(6).spot().zone(2).build(),
      NodeBuilder().name("half-t4").gpus(4, 15360).usedWhole(2).zone(2).build(),
      NodeBuilder().name("cpu").build(),
  };
  const auto pod = PodBuilder().gpu(2).build();
  CycleState state;
  ProfileScratch scratch;
  FakeCluster cluster;
  std::vector<Status> out(nodes.size());
  const NodeSpan feasible = profile.runFilter(pod, state, cluster, nodes.span(), out, scratch);
  ASSERT_EQ(feasible.size(), 3u);
  EXPECT_EQ(out[2].code, Code::Unschedulable);
  EXPECT_EQ(out[3].code, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(out[5].code, Code::UnschedulableAndUnresolvable);
  std::vector<int32_t> wire(feasible.size());
  profile.extenderScores(state, cluster, scratch.batch(feasible, profile.gpuResources()), wire, scratch);
  EXPECT_EQ(feasible[0]->name, "free-a100");
  EXPECT_EQ(feasible[1]->name, "busy-a100");
  EXPECT_EQ(wire[1], kMaxExtenderScore);
  EXPECT_LT(wire[0], kMaxExtenderScore);
  EXPECT_LT(wire[2], kMaxExtenderScore);

  GpuAssignment a;
  ASSERT_TRUE(profile.selectGpus(state, *feasible[1], a));
  ASSERT_EQ(a.count, 2);
  EXPECT_EQ(a.index[0], 6);
  EXPECT_EQ(a.index[1], 7);
}

TEST(Profile, SelectGpusFallsBackToBestFitAndSkipsNonPrimaryResources) {
  std::vector<Profile::Entry> e;
  e.push_back({spot::create({}), 1});
  Profile profile("p", GpuResourceConfig{{"nvidia.com/gpu", "nvidia.com/mig-"}}, std::move(e));
  CycleState state;
  FakeCluster cluster;
  auto node = NodeBuilder().gpus(4).used({900, 600, 700, 0}).build();
  GpuAssignment a;

  const auto shared = PodBuilder().gpu(1).milli(350).build();
  ASSERT_TRUE(profile.preFilter(shared, state, cluster).ok());
  ASSERT_TRUE(profile.selectGpus(state, node, a));
  EXPECT_EQ(a.count, 1);
  EXPECT_EQ(a.index[0], 1);  // free 400 is the tightest that holds 350

  const auto mig = PodBuilder().request("nvidia.com/mig-1g.5gb", 1).build();
  ASSERT_TRUE(profile.preFilter(mig, state, cluster).ok());
  ASSERT_TRUE(profile.selectGpus(state, node, a));
  EXPECT_EQ(a.count, 0);

  const auto big = PodBuilder().gpu(2).build();
  ASSERT_TRUE(profile.preFilter(big, state, cluster).ok());
  EXPECT_FALSE(profile.selectGpus(state, node, a));
}

TEST(Profile, ACycleStateMovesBetweenProfiles) {
  // Slot 0 holds the GPU plugin's state in one profile and Spot's in the other.
  std::vector<Profile::Entry> e1, e2;
  e1.push_back({gpu::create({}), 1});
  e2.push_back({spot::create({}), 1});
  Profile p1("p1", {}, std::move(e1)), p2("p2", {}, std::move(e2));
  Nodes nodes{NodeBuilder().gpus(8).spot().build()};
  CycleState state;
  ProfileScratch scratch;
  FakeCluster cluster;
  std::vector<Status> out(1);
  const auto pod = PodBuilder().gpu(1).build();
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(p1.runFilter(pod, state, cluster, nodes.span(), out, scratch).size(), 1u);
    EXPECT_EQ(p2.runFilter(pod, state, cluster, nodes.span(), out, scratch).size(), 0u);
    EXPECT_EQ(out[0].reason, spot::kNotTolerant);
  }
}

// A code per distinct (code, reason bytes), the same code again for an equal failure however
// its reason is stored, past the newest few and the index alike; clear() starts over.
TEST(FailureCodes, NumberEachDistinctFailureOnce) {
  FailureCodes codes;
  std::vector<std::string> reasons;
  for (int i = 0; i < 100; ++i) reasons.push_back("reason " + std::to_string(i));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(codes.code({Code::Unschedulable, reasons[i]}), Verdict(i + 1));
  for (int i = 0; i < 100; ++i) {
    const std::string copy = reasons[i];  // other bytes' address, same text
    EXPECT_EQ(codes.code({Code::Unschedulable, copy}), Verdict(i + 1)) << i;
  }
  EXPECT_EQ(codes.code({Code::UnschedulableAndUnresolvable, reasons[3]}), 101u);
  EXPECT_EQ(codes.status(101).code, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(codes.status(4).reason, "reason 3");
  const uint64_t epoch = codes.epoch();
  codes.clear();
  EXPECT_NE(codes.epoch(), epoch);
  EXPECT_EQ(codes.size(), 0u);
  EXPECT_EQ(codes.code({Code::Unschedulable, reasons[50]}), 1u);
}

}  // namespace
}  // namespace fleetsched::plugins
