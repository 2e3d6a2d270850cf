// The process logger: klog text and JSON lines, escaping, -v filtering.
#include "log/log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace fleetsched::log {
namespace {

using ::testing::HasSubstr;

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setSink([](std::string_view line, void* self) { static_cast<LogTest*>(self)->lines.emplace_back(line); }, this);
    setFormat(Format::kText);
    setVerbosity(0);
  }
  void TearDown() override {
    setSink(nullptr, nullptr);
    setFormat(Format::kText);
    setVerbosity(0);
  }
  std::vector<std::string> lines;
};

TEST_F(LogTest, TextLineIsKlogFormat) {
  FLOG_INFO("initial sync done").kv("nodes", 48).kv("source", std::string("the demo fleet")).kv("ok", true);
  ASSERT_EQ(lines.size(), 1u);
  // I1206 02:41:25.570554    3576 log_test.cpp:31] "message" key="value"
  static const std::regex kKlog(
      R"(^I\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ log_test\.cpp:\d+\] "initial sync done" nodes=48 source="the demo fleet" ok=true\n$)");
  EXPECT_TRUE(std::regex_match(lines[0], kKlog)) << lines[0];
  // The thread id field is right-aligned in 7 columns, as klog pads it.
  EXPECT_EQ(lines[0][21], ' ') << lines[0];
}

TEST_F(LogTest, SeverityLetters) {
  FLOG_WARNING("w");
  FLOG_ERROR("e").err("boom");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0][0], 'W');
  EXPECT_EQ(lines[1][0], 'E');
  EXPECT_THAT(lines[1], HasSubstr("] \"e\" err=\"boom\"\n"));
}

TEST_F(LogTest, TextEscapesQuotesNewlinesAndControlBytes) {
  FLOG_INFO("say \"hi\"\nnow").kv("v", std::string_view("a\"b\\c\nd\te\x01" "f\x7f\0", 13)).kv("utf8", "ü");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr(R"("say \"hi\"\nnow" v="a\"b\\c\nd\te\x01f\x7f\x00" utf8="ü")"));
  // One entry, one line: the only newline is the last byte.
  EXPECT_EQ(lines[0].find('\n'), lines[0].size() - 1);
}

TEST_F(LogTest, JsonLineIsOneObject) {
  setFormat(Format::kJson);
  FLOG_INFO("reloaded").kv("nodes", 3u).kv("pods", int64_t{-2}).kv("ratio", 0.5).kv("name", "x");
  FLOG_ERROR("audit failed").err("no \"pods\"");
  ASSERT_EQ(lines.size(), 2u);
  static const std::regex kJson(
      R"(^\{"ts":\d+\.\d{6},"caller":"log_test\.cpp:\d+","msg":"reloaded","v":0,"nodes":3,"pods":-2,"ratio":0\.5,"name":"x"\}\n$)");
  EXPECT_TRUE(std::regex_match(lines[0], kJson)) << lines[0];
  // Errors carry "err" and no "v", as klog's JSON format writes them.
  static const std::regex kError(
      R"(^\{"ts":\d+\.\d{6},"caller":"log_test\.cpp:\d+","msg":"audit failed","err":"no \\"pods\\""\}\n$)");
  EXPECT_TRUE(std::regex_match(lines[1], kError)) << lines[1];
}

TEST_F(LogTest, JsonEscapesControlBytesAndInvalidUtf8) {
  setFormat(Format::kJson);
  FLOG_INFO("m").kv("s", std::string_view("q\"\\\n\r\t\x01\x1f\x7f ü \xff\xc3", 15));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr(R"("s":"q\"\\\n\r\t\u0001\u001f\u007f ü \ufffd\ufffd"})"));
  EXPECT_EQ(lines[0].find('\n'), lines[0].size() - 1);
}

TEST_F(LogTest, KvJsonIsWrittenAsIs) {
  FLOG_INFO("filter").kvJson("reasons", R"({"spot node":3})");
  setFormat(Format::kJson);
  FLOG_INFO("filter").kvJson("reasons", R"({"spot node":3})");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr(R"( reasons={"spot node":3})"));
  EXPECT_THAT(lines[1], HasSubstr(R"(,"reasons":{"spot node":3}})"));
}

TEST_F(LogTest, VerbosityFiltersWithoutEvaluatingArguments) {
  int evaluated = 0;
  auto value = [&] {
    ++evaluated;
    return 1;
  };
  FLOG_V(4, "decision").kv("n", value());
  EXPECT_TRUE(lines.empty());
  EXPECT_EQ(evaluated, 0);  // skipped before the arguments are evaluated
  setVerbosity(3);
  FLOG_V(4, "decision").kv("n", value());
  EXPECT_TRUE(lines.empty());
  setVerbosity(4);
  FLOG_V(4, "decision").kv("n", value());
  FLOG_V(5, "finer").kv("n", value());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(evaluated, 1);
  EXPECT_THAT(lines[0], HasSubstr("\"decision\" n=1"));
  setFormat(Format::kJson);
  FLOG_V(2, "level two");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1], HasSubstr(R"("msg":"level two","v":2})"));
}

TEST_F(LogTest, FlogVInsideIfElseBindsAsWritten) {
  bool elseTaken = false;
  setVerbosity(0);
  if (lines.empty())
    FLOG_V(4, "hidden");
  else
    elseTaken = true;
  EXPECT_FALSE(elseTaken);
  EXPECT_TRUE(lines.empty());
}

TEST(LogFormat, Parse) {
  Format f = Format::kText;
  EXPECT_TRUE(parseFormat("json", f));
  EXPECT_EQ(f, Format::kJson);
  EXPECT_TRUE(parseFormat("text", f));
  EXPECT_EQ(f, Format::kText);
  EXPECT_FALSE(parseFormat("JSON", f));
  EXPECT_FALSE(parseFormat("", f));
}

}  // namespace
}  // namespace fleetsched::log

namespace fleetsched::log {
namespace {

TEST(LogFormat, PrintfIntoString) {
  EXPECT_EQ(format("reloaded %zu nodes, %d pods", size_t{3}, 5), "reloaded 3 nodes, 5 pods");
  const std::string longer(1000, 'x');
  EXPECT_EQ(format("%s!", longer.c_str()), longer + "!");
}

}  // namespace
}  // namespace fleetsched::log
