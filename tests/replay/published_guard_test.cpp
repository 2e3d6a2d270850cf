// The CI guard on placement quality: the replay of the five public openb traces, every baseline
// policy and fleet, seeds 42-51, against the published table (replay/published_allocation.csv,
// the FGD paper's artifact). It fails when a baseline's mean lands more than 1.0 point from its
// published mean at 100 % or 130 % arrived workload, or when fleet's mean is below published
// FGD at either point. Skipped when the trace is not there (see tests/replay/openb.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "replay/published.h"
#include "replay/replay.h"
#include "tests/replay/openb.h"

namespace fleetsched::replay {
namespace {

constexpr double kBaselineTolerance = 1.0;  // points; the paper's own seed spread is 0.4-1.4

TEST(PublishedGuard, ReplayReproducesThePublishedTable) {
  if (!testing::haveOpenb()) GTEST_SKIP() << "openb trace not found in " << testing::openbDir();
  Options o;
  o.traceDir = testing::openbDir();
  o.progress = false;
  o = withDefaults(o);  // the five anchor traces, every policy, seeds 42-51, one job per core
  ASSERT_EQ(o.traces.size(), 5u);
  ASSERT_EQ(o.seeds.size(), 10u);
  std::string error;
  const auto results = runExperiments(o, error);
  ASSERT_TRUE(results) << error;
  const auto summary = summarise(*results);
  ASSERT_EQ(summary.size(), o.traces.size() * o.policies.size());

  std::printf("%-11s %-10s %7s %7s %7s %7s\n", "trace", "policy", "@100", "pub100", "@130", "pub130");
  int checkedBaselines = 0, checkedFleet = 0;
  for (const Summary& s : summary) {
    ASSERT_EQ(s.runs, 10u) << s.trace << " " << s.policy;
    const bool fleet = s.policy == "fleet";
    const PublishedAllocation* pub = findPublished(s.trace, fleet ? "fgd" : s.policy);
    ASSERT_NE(pub, nullptr) << "no published value for " << s.trace << " " << s.policy;
    std::printf("%-11s %-10s %7.2f %7.2f %7.2f %7.2f%s\n", s.trace.c_str(), s.policy.c_str(), s.at100, pub->at100,
                s.at130, pub->at130, fleet ? "  (fgd)" : "");
    if (fleet) {
      EXPECT_GE(s.at100, pub->at100) << s.trace << ": fleet below published FGD at 100 %";
      EXPECT_GE(s.at130, pub->at130) << s.trace << ": fleet below published FGD at 130 %";
      ++checkedFleet;
    } else {
      EXPECT_NEAR(s.at100, pub->at100, kBaselineTolerance) << s.trace << " " << s.policy << " at 100 %";
      EXPECT_NEAR(s.at130, pub->at130, kBaselineTolerance) << s.trace << " " << s.policy << " at 130 %";
      ++checkedBaselines;
    }
  }
  EXPECT_EQ(checkedBaselines, 5 * 6);
  EXPECT_EQ(checkedFleet, 5);
}

}  // namespace
}  // namespace fleetsched::replay
