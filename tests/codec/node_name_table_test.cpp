// NodeNameTable: ranks follow Go's bytewise map-key order for awkward names, encoded names are
// exactly what JsonWriter::string writes, ids with holes and reused ids keep their own names,
// and find() answers what a plain map of the names answers.
#include "codec/node_name_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "codec/json_writer.h"

namespace fleetsched::codec {
namespace {

std::string goEscaped(std::string_view s) {
  std::string out;
  {
    JsonWriter w(out);
    w.string(s);
  }
  return out;
}

// Names chosen to trip a comparison on its first 16 bytes, on signedness and on escaping.
const std::vector<std::string> kOddNames = {
    "b",
    "a",
    "a-",
    "a-b",
    "a.b",
    "a0",
    "aa",
    "Z-upper-sorts-first",
    "gpu-node-0000000000-a",  // equal in the first 16 bytes to the next ones
    "gpu-node-0000000000-b",
    "gpu-node-0000000000",
    "gpu-node-00000000001",
    "\xc3\xbc-utf8-after-ascii",
    "\xff-invalid-utf8",
    "x<y&z>",
    "quote\"back\\slash",
    "tab\there",
    "line\xe2\x80\xa8sep",
};

// A node set as the cache numbers it: names by id, "" for a hole.
struct NodeSet {
  std::vector<std::string> byId;

  void build(NodeNameTable& table, uint64_t tag) const {
    std::vector<uint32_t> ids;
    std::vector<std::string_view> names;
    for (uint32_t id = 0; id < byId.size(); ++id) {
      if (byId[id].empty()) continue;
      ids.push_back(id);
      names.push_back(byId[id]);
    }
    table.build(tag, static_cast<uint32_t>(byId.size()), ids, names);
  }
  uint32_t idOf(std::string_view name) const {
    auto it = std::find(byId.begin(), byId.end(), name);
    return it == byId.end() ? NodeNameTable::kNoId : static_cast<uint32_t>(it - byId.begin());
  }
};

// The table's names in rank order.
std::vector<std::string> byRank(const NodeNameTable& table) {
  std::vector<std::string> out;
  for (uint32_t r = 0; r < table.size(); ++r) out.emplace_back(table.name(table.idAt(r)));
  return out;
}

TEST(NodeNameTable, RanksFollowBytewiseOrderAndNamesAreEncodedLikeGo) {
  NodeSet set{kOddNames};
  set.byId.insert(set.byId.begin() + 3, "");  // a hole
  NodeNameTable table;
  EXPECT_FALSE(table.describes(7));
  set.build(table, 7);
  EXPECT_TRUE(table.describes(7));
  EXPECT_FALSE(table.describes(8));
  std::vector<std::string> want = kOddNames;
  std::sort(want.begin(), want.end());  // std::string compares bytes as unsigned char, like Go
  EXPECT_EQ(byRank(table), want);
  for (uint32_t r = 0; r < table.size(); ++r) {
    const uint32_t id = table.idAt(r);
    EXPECT_EQ(table.rank(id), r);
    EXPECT_EQ(table.name(id), set.byId[id]);
    EXPECT_EQ(table.quoted(id), goEscaped(set.byId[id]));
    EXPECT_EQ(table.quotedAtRank(r), table.quoted(id));
    EXPECT_EQ(table.hostScorePrefix(id), R"({"Host":)" + goEscaped(set.byId[id]) + R"(,"Score":)");
    EXPECT_LE(table.quoted(id).size(), table.maxQuotedSize());
  }
  EXPECT_EQ(table.quoted(set.idOf("x<y&z>")), R"("x\u003cy\u0026z\u003e")");
  EXPECT_EQ(table.quoted(set.idOf("quote\"back\\slash")), R"("quote\"back\\slash")");
  EXPECT_EQ(table.quoted(set.idOf("\xff-invalid-utf8")), R"("\ufffd-invalid-utf8")");
}

TEST(NodeNameTable, RebuildsForANewNodeSet) {
  NodeSet set{kOddNames};
  NodeNameTable table;
  set.build(table, 1);
  // A node leaves: its id becomes a hole.
  const uint32_t gone = set.idOf("a-b");
  set.byId[gone].clear();
  set.build(table, 2);
  std::vector<std::string> want = kOddNames;
  std::erase(want, "a-b");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(byRank(table), want);
  EXPECT_EQ(table.find("a-b"), NodeNameTable::kNoId);

  // A new node may reuse the freed id: its rank and encoding must be its own.
  set.byId[gone] = "0-first";
  set.build(table, 3);
  EXPECT_EQ(table.find("0-first"), gone);
  EXPECT_EQ(table.rank(gone), 0U);
  EXPECT_EQ(table.quoted(gone), "\"0-first\"");
  EXPECT_EQ(table.size(), kOddNames.size());
}

// find() answers what a map of the names answers, for every name, for prefixes and extensions
// of them, and for a name that is gone; findAll() answers name for name what find() does.
TEST(NodeNameTable, FindAgreesWithAMap) {
  NodeSet set{kOddNames};
  for (int i = 0; i < 3000; ++i) set.byId.push_back("ip-10-0-" + std::to_string(i) + ".ec2.internal");
  set.byId[set.idOf("a-b")].clear();
  NodeNameTable table;
  set.build(table, 1);
  std::map<std::string, uint32_t> ids;
  for (uint32_t id = 0; id < set.byId.size(); ++id) {
    if (!set.byId[id].empty()) ids[set.byId[id]] = id;
  }
  std::vector<std::string> probes = kOddNames;
  for (int i = 0; i < 3100; i += 7) probes.push_back("ip-10-0-" + std::to_string(i) + ".ec2.internal");
  for (size_t k = 0, n = probes.size(); k < n; ++k) {
    probes.push_back(probes[k] + "x");
    probes.push_back(probes[k].substr(0, probes[k].size() - 1));
  }
  probes.push_back("");
  for (const std::string& name : probes) {
    auto it = ids.find(name);
    EXPECT_EQ(table.find(name), it == ids.end() ? NodeNameTable::kNoId : it->second) << name;
  }
  EXPECT_EQ(table.find("a-b"), NodeNameTable::kNoId);
  std::vector<std::string_view> views(probes.begin(), probes.end());
  std::vector<uint32_t> found(views.size());
  table.findAll(views, found);
  for (size_t k = 0; k < views.size(); ++k) EXPECT_EQ(found[k], table.find(views[k])) << views[k];
}

TEST(NodeNameTable, Empty) {
  NodeNameTable table;
  EXPECT_EQ(table.find("anything"), NodeNameTable::kNoId);
  NodeSet{}.build(table, 1);
  EXPECT_EQ(table.size(), 0U);
  EXPECT_EQ(table.find("anything"), NodeNameTable::kNoId);
  NodeSet{{"only"}}.build(table, 2);
  ASSERT_EQ(table.size(), 1U);
  EXPECT_EQ(table.name(table.idAt(0)), "only");
}

}  // namespace
}  // namespace fleetsched::codec
