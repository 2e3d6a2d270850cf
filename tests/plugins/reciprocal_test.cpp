// Reciprocal must give exactly what integer division gives: the GPU scorer's column path relies
// on it to score like score() does, node for node.
#include "plugins/reciprocal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace fleetsched::plugins {
namespace {

TEST(Reciprocal, DividesExactlyAtTheEdgesOfEveryQuotient) {
  std::vector<uint32_t> divisors = {1, 2, 3, 7, 10, 20, 80, 160, 1000, 2550, 40960, 81920, 1u << 20,
                                    20'000'000, (1u << 31) - 1, 1u << 31, UINT32_MAX - 1, UINT32_MAX};
  for (uint32_t g = 1; g < 256; ++g) divisors.push_back(10 * g);
  std::mt19937 rng(7);
  for (uint32_t d = 1; d < 3000; d += 1 + rng() % 13) divisors.push_back(d);
  for (uint32_t d : divisors) {
    const Reciprocal r(d);
    auto check = [&](uint64_t n) {
      if (n > UINT32_MAX) return;
      const auto v = static_cast<uint32_t>(n);
      ASSERT_EQ(r.divide(v), v / d) << v << " / " << d;
    };
    check(0);
    check(UINT32_MAX);
    for (uint64_t k : {uint64_t{1}, uint64_t{2}, uint64_t{99}, uint64_t{100}, uint64_t{UINT32_MAX} / d}) {
      check(k * d - 1);
      check(k * d);
      check(k * d + 1);
    }
    for (int i = 0; i < 2000; ++i) check(rng());
  }
}

TEST(Reciprocal, DefaultDividesByOne) {
  EXPECT_EQ(Reciprocal().divide(12345), 12345u);
  EXPECT_EQ(Reciprocal(1).divide(UINT32_MAX), UINT32_MAX);
}

}  // namespace
}  // namespace fleetsched::plugins
