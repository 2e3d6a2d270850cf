#include <gtest/gtest.h>

#include "fixtures.h"

namespace fleetsched::plugins {
namespace {

using testing::Harness;
using testing::NodeBuilder;
using testing::PodBuilder;

struct FitCase {
  const char* desc;
  codec::Pod pod;
  NodeInfo node;
  Code code;
  const char* reason;
};

class FitFilter : public ::testing::TestWithParam<FitCase> {};

TEST_P(FitFilter, Verdict) {
  const auto& c = GetParam();
  auto h = Harness::single("Fit");
  const Status s = h.filterOne(c.pod, c.node);
  EXPECT_EQ(s.code, c.code) << c.desc;
  EXPECT_EQ(s.reason, c.reason) << c.desc;
}

constexpr int64_t kGi = int64_t{1} << 30;

INSTANTIATE_TEST_SUITE_P(
    Table, FitFilter,
    ::testing::Values(
        FitCase{"fits", PodBuilder().cpu(4000).memory(8 * kGi).build(),
                NodeBuilder().cpu(8000, 4000).mem(16 * kGi, 8 * kGi).build(), Code::Success, ""},
        FitCase{"cpu taken", PodBuilder().cpu(4000).build(), NodeBuilder().cpu(8000, 4001).build(), Code::Unschedulable,
                "Insufficient cpu"},
        FitCase{"cpu beyond allocatable", PodBuilder().cpu(9000).build(), NodeBuilder().cpu(8000, 0).build(),
                Code::UnschedulableAndUnresolvable, "Insufficient cpu"},
        FitCase{"memory taken", PodBuilder().memory(8 * kGi).build(), NodeBuilder().mem(16 * kGi, 9 * kGi).build(),
                Code::Unschedulable, "Insufficient memory"},
        FitCase{"pods full", PodBuilder().build(), NodeBuilder().pods(110, 110).build(), Code::Unschedulable,
                "Too many pods"},
        FitCase{"no pod limit recorded", PodBuilder().build(), NodeBuilder().pods(0, 3).build(), Code::Success, ""}));

}  // namespace
}  // namespace fleetsched::plugins
