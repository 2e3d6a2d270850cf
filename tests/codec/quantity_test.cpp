#include "codec/quantity.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <charconv>
#include <string>
#include <vector>

#include "tests/codec/test_data.h"

namespace fleetsched::codec {
namespace {

struct Case {
  const char* in;
  QuantityError err;
  int64_t value;
  int64_t milli;
};

// Hand-checked cases: the grammar's corners and the rounding rule (up, away from zero).
TEST(Quantity, Table) {
  const Case cases[] = {
      {"0", QuantityError::None, 0, 0},
      {"0.5", QuantityError::None, 1, 500},
      {"1500m", QuantityError::None, 2, 1500},
      {"1e3", QuantityError::None, 1000, 1000000},
      {"100Mi", QuantityError::None, 104857600, 104857600000},
      {"1.5Gi", QuantityError::None, 1610612736, 1610612736000},
      {"-1", QuantityError::None, -1, -1000},
      {"+2", QuantityError::None, 2, 2000},
      {".5", QuantityError::None, 1, 500},
      {"5.", QuantityError::None, 5, 5000},
      {"1E", QuantityError::None, 1000000000000000000, 0},  // E is exa; milli overflows (checked below)
      {"1Ki2", QuantityError::Suffix, 0, 0},
      {"1e", QuantityError::Suffix, 0, 0},
      {"abc", QuantityError::Syntax, 0, 0},
      {"", QuantityError::Empty, 0, 0},
      {"1 ", QuantityError::Syntax, 0, 0},
      {"0.1m", QuantityError::None, 1, 1},
      {"250u", QuantityError::None, 1, 1},
      {"3Ki", QuantityError::None, 3072, 3072000},
      {"1e-3", QuantityError::None, 1, 1},
      {"-1.5m", QuantityError::None, -1, -2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    Quantity q;
    ASSERT_EQ(q.parse(c.in), c.err);
    if (c.err != QuantityError::None) continue;
    int64_t v = 0;
    EXPECT_EQ(q.value(v), QuantityError::None);
    EXPECT_EQ(v, c.value);
    if (std::string_view(c.in) == "1E") {
      EXPECT_EQ(q.milliValue(v), QuantityError::OutOfRange);
    } else {
      EXPECT_EQ(q.milliValue(v), QuantityError::None);
      EXPECT_EQ(v, c.milli);
    }
  }
}

TEST(Quantity, OverflowIsAnErrorNotAWrappedNumber) {
  int64_t v = 0;
  EXPECT_EQ(parseQuantityValue("9223372036854775807", v), QuantityError::None);
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(parseQuantityValue("9223372036854775808", v), QuantityError::OutOfRange);
  EXPECT_EQ(parseQuantityMilli("9223372036854775807", v), QuantityError::OutOfRange);
  EXPECT_EQ(parseQuantityMilli("9223372036854775807m", v), QuantityError::None);
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(parseQuantityValue("1e100", v), QuantityError::OutOfRange);
  // ParseQuantity caps binary-suffixed amounts at 2^63-1 units.
  EXPECT_EQ(parseQuantityValue("16Ei", v), QuantityError::None);
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(parseQuantityValue(std::string(200, '1'), v), QuantityError::TooLong);
}

// Every row of quantities.json: what apimachinery's ParseQuantity accepts, and the exact
// rounded-up Value()/MilliValue() (computed in Go with big arithmetic).
TEST(Quantity, MatchesApimachinery) {
  std::string json = testing::readData("quantities.json");
  ASSERT_FALSE(json.empty());
  simdjson::dom::parser parser;
  simdjson::dom::array rows;
  ASSERT_EQ(parser.parse(json).get_array().get(rows), simdjson::SUCCESS);
  size_t n = 0;
  for (simdjson::dom::element row : rows) {
    std::string_view in;
    bool ok = false;
    ASSERT_EQ(row["in"].get_string().get(in), simdjson::SUCCESS);
    ASSERT_EQ(row["ok"].get_bool().get(ok), simdjson::SUCCESS);
    SCOPED_TRACE(std::string(in));
    Quantity q;
    QuantityError err = q.parse(in);
    ASSERT_EQ(err == QuantityError::None, ok) << quantityErrorText(err);
    ++n;
    if (!ok) continue;
    auto check = [&](const char* field, QuantityError got, int64_t v) {
      std::string_view want;
      ASSERT_EQ(row[field].get_string().get(want), simdjson::SUCCESS);
      if (want == "overflow") {
        EXPECT_EQ(got, QuantityError::OutOfRange) << field;
        return;
      }
      int64_t w = 0;
      std::from_chars(want.data(), want.data() + want.size(), w);
      EXPECT_EQ(got, QuantityError::None) << field;
      EXPECT_EQ(v, w) << field;
    };
    int64_t v = 0;
    QuantityError e = q.value(v);
    check("value", e, v);
    e = q.milliValue(v);
    check("milli", e, v);
  }
  EXPECT_GT(n, 90u);
}

// parseQuantityValue/Milli take a 64-bit shortcut for plain "<digits><suffix>" amounts (what
// nodes carry); it must agree with the general parser everywhere, overflow edges included.
TEST(Quantity, OneShotHelpersMatchTheGeneralParser) {
  std::vector<std::string> inputs = {"0", "00", "007", "8", "110", "95690m", "785476592Ki", "64Gi", "0m", "1m",
                                     "999m", "1000m", "1001m", "999999999999999999m", "9223372036854775807",
                                     "9223372036854775808", "922337203685477580", "922337203685477580k",
                                     "9223372036854775Ki", "8Ei", "7Ei", "16Ei", "9E", "1E", "8E", "10P", "1Mi2",
                                     "1ki", "1K", "1mi", "1.0", "-1", "+1", "1e3", "", "m", "Ki", "1 "};
  const char* suffixes[] = {"", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u"};
  std::string digits;
  for (int len = 1; len <= 20; ++len) {
    digits.push_back(static_cast<char>('0' + (len * 7) % 10));
    for (const char* suf : suffixes) {
      inputs.push_back(digits + suf);
      inputs.push_back(std::string(static_cast<size_t>(len), '9') + suf);
      std::string power(static_cast<size_t>(len), '0');
      power[0] = '1';
      inputs.push_back(power + suf);
    }
  }
  for (const std::string& in : inputs) {
    SCOPED_TRACE(in);
    Quantity q;
    QuantityError perr = q.parse(in);
    int64_t want = 0, got = 0;
    QuantityError wantErr = perr != QuantityError::None ? perr : q.value(want);
    EXPECT_EQ(parseQuantityValue(in, got), wantErr);
    if (wantErr == QuantityError::None) {
      EXPECT_EQ(got, want);
    }
    wantErr = perr != QuantityError::None ? perr : q.milliValue(want);
    EXPECT_EQ(parseQuantityMilli(in, got), wantErr);
    if (wantErr == QuantityError::None) {
      EXPECT_EQ(got, want);
    }
  }
}

}  // namespace
}  // namespace fleetsched::codec
