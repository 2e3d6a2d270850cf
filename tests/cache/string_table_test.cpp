#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cache/string_pool.h"

namespace fleetsched::cache {
namespace {

std::string numbered(std::string_view prefix, uint32_t i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

TEST(StringTable, EqualStringsShareOneIdUntilTheLastRelease) {
  StringTable t;
  const uint32_t a = t.acquire("nvidia.com/gpu.product");
  EXPECT_EQ(t.acquire(std::string("nvidia.com/gpu.product")), a);
  const uint32_t b = t.acquire("");
  EXPECT_NE(a, b);
  EXPECT_EQ(t.str(a), "nvidia.com/gpu.product");
  EXPECT_EQ(t.str(b), "");
  EXPECT_EQ(t.size(), 2U);
  const char* text = t.str(a).data();
  t.release(a);
  EXPECT_EQ(t.str(a).data(), text);  // one reference left: still there, not moved
  t.release(a);
  EXPECT_EQ(t.size(), 1U);
  // The freed id is reused for the next new string.
  EXPECT_EQ(t.acquire("zone"), a);
  EXPECT_EQ(t.str(a), "zone");
}

// Many strings across pages and index growth, half of them released in random order: every
// survivor keeps its id and text (backward-shift deletion must not lose probe runs).
TEST(StringTable, SurvivorsKeepTheirIdsThroughGrowthAndDeletion) {
  StringTable t;
  constexpr uint32_t kN = 3 * StringTable::kPageSize + 17;
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < kN; ++i) ids.push_back(t.acquire(numbered("label-", i)));
  std::vector<uint32_t> order(kN);
  for (uint32_t i = 0; i < kN; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  for (uint32_t k = 0; k < kN / 2; ++k) t.release(ids[order[k]]);
  EXPECT_EQ(t.size(), kN - kN / 2);
  for (uint32_t k = kN / 2; k < kN; ++k) {
    const uint32_t i = order[k];
    EXPECT_EQ(t.str(ids[i]), numbered("label-", i));
    EXPECT_EQ(t.acquire(numbered("label-", i)), ids[i]) << i;
  }
  // Released strings come back as new entries.
  const uint32_t again = t.acquire(numbered("label-", order[0]));
  EXPECT_EQ(t.str(again), numbered("label-", order[0]));
  EXPECT_EQ(t.size(), kN - kN / 2 + 1);
}

}  // namespace
}  // namespace fleetsched::cache
