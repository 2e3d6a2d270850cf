#include "apiclient/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetsched::apiclient {
namespace {

std::vector<std::string> feedAll(LineSplitter& s, const std::vector<std::string>& chunks, bool* ok = nullptr) {
  std::vector<std::string> lines;
  bool good = true;
  for (const auto& c : chunks) {
    good = s.feed(c, [&](std::string_view line) {
      lines.emplace_back(line);
      // The padding promise: kPadding readable bytes after the line.
      EXPECT_EQ(line.data()[line.size()], '\0');
      EXPECT_EQ(line.data()[line.size() + LineSplitter::kPadding - 1], '\0');
    }) && good;
  }
  if (ok) *ok = good;
  return lines;
}

TEST(LineSplitter, EventsCutAnywhereComeOutWhole) {
  std::string stream = "{\"type\":\"ADDED\"}\n{\"type\":\"MODIFIED\"}\n{\"type\":\"BOOKMARK\"}\n";
  for (size_t cut = 1; cut < stream.size(); ++cut) {
    LineSplitter s;
    auto lines = feedAll(s, {stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(lines.size(), 3u) << "cut at " << cut;
    EXPECT_EQ(lines[1], "{\"type\":\"MODIFIED\"}");
    EXPECT_EQ(s.pending(), 0u);
  }
}

TEST(LineSplitter, ByteByByte) {
  std::string stream = "{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":";
  LineSplitter s;
  std::vector<std::string> chunks;
  for (char c : stream) chunks.emplace_back(1, c);
  auto lines = feedAll(s, chunks);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "{\"a\":1}");  // CR dropped, empty line skipped
  EXPECT_EQ(lines[1], "{\"b\":2}");
  EXPECT_EQ(s.pending(), 5u);  // the incomplete third event waits
}

TEST(LineSplitter, RunawayLineIsAnError) {
  LineSplitter s(16);
  bool ok = true;
  auto lines = feedAll(s, {"0123456789", "0123456789", "\n{}\n"}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(s.pending(), 0u);
}

}  // namespace
}  // namespace fleetsched::apiclient
