// NodeNameTable: ranks follow Go's bytewise map-key order for awkward names, encoded names are
// exactly what JsonWriter::string writes, and the table is rebuilt when (and only when) the node
// set changes.
#include "engine/service/node_name_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "codec/json_writer.h"
#include "tests/cache/fixtures.h"

namespace fleetsched::engine {
namespace {

using cache::testing::NodeMaker;
using cache::testing::PodMaker;
using cache::testing::Strings;

std::string goEscaped(std::string_view s) {
  std::string out;
  {
    codec::JsonWriter w(out);
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

class NodeNameTableTest : public ::testing::Test {
 protected:
  void addAll() {
    for (const std::string& n : kOddNames) cache_.upsertNode(NodeMaker(strings_, n).build());
  }
  // The table's names in rank order.
  std::vector<std::string> byRank() const {
    std::vector<std::string> out;
    for (uint32_t r = 0; r < table_.size(); ++r) out.emplace_back(table_.name(table_.idAt(r)));
    return out;
  }

  Strings strings_;
  cache::Cache cache_;
  cache::Reader reader_{cache_};
  NodeNameTable table_;
};

TEST_F(NodeNameTableTest, RanksFollowBytewiseOrderAndNamesAreEncodedLikeGo) {
  addAll();
  cache::Snapshot snap = reader_.acquire();
  EXPECT_TRUE(table_.refresh(snap));
  std::vector<std::string> want = kOddNames;
  std::sort(want.begin(), want.end());  // std::string compares bytes as unsigned char, like Go
  EXPECT_EQ(byRank(), want);
  for (uint32_t r = 0; r < table_.size(); ++r) {
    const uint32_t id = table_.idAt(r);
    EXPECT_EQ(table_.rank(id), r);
    const plugins::NodeInfo* n = snap.node(id);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(table_.name(id), n->name);
    EXPECT_EQ(table_.quoted(id), goEscaped(n->name));
  }
  const plugins::NodeInfo* html = snap.find("x<y&z>");
  ASSERT_NE(html, nullptr);
  EXPECT_EQ(table_.quoted(html->id), R"("x\u003cy\u0026z\u003e")");
  const plugins::NodeInfo* quote = snap.find("quote\"back\\slash");
  ASSERT_NE(quote, nullptr);
  EXPECT_EQ(table_.quoted(quote->id), R"("quote\"back\\slash")");
  const plugins::NodeInfo* bad = snap.find("\xff-invalid-utf8");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(table_.quoted(bad->id), R"("\ufffd-invalid-utf8")");
}

TEST_F(NodeNameTableTest, RebuildsWhenNodesComeAndGoNotForPodEvents) {
  addAll();
  {
    cache::Snapshot snap = reader_.acquire();
    EXPECT_TRUE(table_.refresh(snap));
    EXPECT_FALSE(table_.refresh(snap));
  }
  const uint64_t before = table_.nameSetVersion();
  // A pod bound to a node publishes a new snapshot with the same node set.
  cache_.upsertPod(PodMaker(strings_, "p1").on("a").cpu(100).build());
  cache_.upsertNode(NodeMaker(strings_, "a").cpu(64000).build());  // changed, not new
  {
    cache::Snapshot snap = reader_.acquire();
    EXPECT_GT(snap.version(), before);
    EXPECT_FALSE(table_.refresh(snap));
    EXPECT_EQ(table_.nameSetVersion(), before);
  }

  ASSERT_TRUE(cache_.deleteNode("a-b"));
  {
    cache::Snapshot snap = reader_.acquire();
    EXPECT_TRUE(table_.refresh(snap));
    std::vector<std::string> want = kOddNames;
    std::erase(want, "a-b");
    std::sort(want.begin(), want.end());
    EXPECT_EQ(byRank(), want);
  }

  // A new node may reuse the freed id: its rank and encoding must be its own.
  cache_.upsertNode(NodeMaker(strings_, "0-first").build());
  {
    cache::Snapshot snap = reader_.acquire();
    EXPECT_TRUE(table_.refresh(snap));
    const plugins::NodeInfo* n = snap.find("0-first");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(table_.rank(n->id), 0U);
    EXPECT_EQ(table_.quoted(n->id), "\"0-first\"");
    EXPECT_EQ(table_.size(), kOddNames.size());
  }
}

// find() answers what the cache's own index answers, for every live name, for prefixes and
// extensions of them, and after a node is gone.
TEST_F(NodeNameTableTest, FindAgreesWithTheCache) {
  addAll();
  for (int i = 0; i < 3000; ++i) cache_.upsertNode(NodeMaker(strings_, "ip-10-0-" + std::to_string(i) + ".ec2.internal").build());
  ASSERT_TRUE(cache_.deleteNode("a-b"));
  cache::Snapshot snap = reader_.acquire();
  table_.refresh(snap);
  std::vector<std::string> probes = kOddNames;
  for (int i = 0; i < 3100; i += 7) probes.push_back("ip-10-0-" + std::to_string(i) + ".ec2.internal");
  for (size_t k = 0, n = probes.size(); k < n; ++k) {
    probes.push_back(probes[k] + "x");
    probes.push_back(probes[k].substr(0, probes[k].size() - 1));
  }
  probes.push_back("");
  for (const std::string& name : probes) {
    const plugins::NodeInfo* n = snap.find(name);
    EXPECT_EQ(table_.find(name), n == nullptr ? cache::kNoNode : n->id) << name;
  }
  EXPECT_EQ(table_.find("a-b"), cache::kNoNode);
  // findAll, which serves requests, answers name for name what find() does.
  std::vector<std::string_view> views(probes.begin(), probes.end());
  std::vector<uint32_t> ids(views.size());
  table_.findAll(views, ids);
  for (size_t k = 0; k < views.size(); ++k) EXPECT_EQ(ids[k], table_.find(views[k])) << views[k];
}

TEST_F(NodeNameTableTest, EmptyCache) {
  cache::Snapshot snap = reader_.acquire();
  EXPECT_EQ(table_.find("anything"), cache::kNoNode);
  table_.refresh(snap);
  EXPECT_EQ(table_.size(), 0U);
  EXPECT_EQ(table_.find("anything"), cache::kNoNode);
  cache_.upsertNode(NodeMaker(strings_, "only").build());
  cache::Snapshot next = reader_.acquire();
  EXPECT_TRUE(table_.refresh(next));
  ASSERT_EQ(table_.size(), 1U);
  EXPECT_EQ(table_.name(table_.idAt(0)), "only");
}

}  // namespace
}  // namespace fleetsched::engine
