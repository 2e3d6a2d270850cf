// Encoders against Go: the same values Go marshalled in tests/tools/goldens, byte for byte.
#include "codec/encoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codec/decoder.h"
#include "codec/json_writer.h"
#include "tests/codec/test_data.h"

namespace fleetsched::codec {
namespace {

using testing::readData;

// Must match reasonTricky in tests/tools/goldens/main.go.
const std::string kReasonTricky =
    "need <4> GPUs & \"fast\" \\ net\n\ttab\b\f\x01\x1f\x7f \u2028\u2029 \xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xff\xc3( end";

std::string golden(const char* name) {
  std::string g = readData(name);
  EXPECT_FALSE(g.empty()) << name;
  return g;
}

// A table of `names` (ids in their order) with one verdict code per name.
struct NamesFixture {
  std::vector<std::string> names;
  NodeNameTable table;
  std::vector<uint32_t> ids;

  explicit NamesFixture(std::vector<std::string> list) : names(std::move(list)) {
    std::vector<std::string_view> views(names.begin(), names.end());
    for (uint32_t id = 0; id < names.size(); ++id) ids.push_back(id);
    table.build(1, static_cast<uint32_t>(names.size()), ids, views);
  }
};

TEST(Encoder, NodeNamesFilterMatchesGo) {
  // Listed unsorted on purpose: Go writes map keys sorted bytewise.
  NamesFixture f({"gpu-b", "gpu-a", "gpu-a.x", "gpu-a-1", "Gpu-Z", "cpu-1"});
  const FilterReason reasons[] = {{},
                                  {},
                                  {"only 1 free nvidia.com/gpu, need 4", FailedMap::Failed},
                                  {"x", FailedMap::Failed},
                                  {kReasonTricky, FailedMap::Failed},
                                  {"zone", FailedMap::Failed},
                                  {"node(s) had no nvidia.com/gpu", FailedMap::Unresolvable}};
  const uint8_t codes[] = {2, 1, 3, 4, 5, 6};
  const uint32_t passed[] = {1};
  Buffer out;
  encodeNodeNamesFilter(f.table, NodeNamesVerdicts<uint8_t>{f.ids, codes, reasons, passed, {}, {}}, out);
  EXPECT_EQ(out.view(), golden("filter_result_names.golden.json"));

  // The same with wide codes, and with the nodes listed in another order.
  const uint32_t wide[] = {2, 1, 3, 4, 5, 6};
  Buffer again = std::string_view("keep:");
  encodeNodeNamesFilter(f.table, NodeNamesVerdicts<uint32_t>{f.ids, wide, reasons, passed, {}, {}}, again);
  EXPECT_EQ(again.view(), "keep:" + std::string(golden("filter_result_names.golden.json")));
  const uint32_t reversedIds[] = {5, 4, 3, 2, 1, 0};
  const uint8_t reversedCodes[] = {6, 5, 4, 3, 1, 2};
  out.clear();
  encodeNodeNamesFilter(f.table, NodeNamesVerdicts<uint8_t>{reversedIds, reversedCodes, reasons, passed, {}, {}}, out);
  EXPECT_EQ(out.view(), golden("filter_result_names.golden.json"));
}

TEST(Encoder, NodeNamesFilterEmptyIsAListNotNull) {
  NamesFixture f({});
  Buffer out;
  encodeNodeNamesFilter(f.table, NodeNamesVerdicts<uint8_t>{}, out);
  EXPECT_EQ(out.view(), golden("filter_result_empty.golden.json"));
  EXPECT_NE(out.view().find(R"("NodeNames":[])"), std::string::npos);
}

// Names the table lacks join FailedNodes where their name sorts them (once each, escaped);
// table nodes the request does not list are left out; a node listed twice has one entry.
TEST(Encoder, NodeNamesFilterMergesUnknownNames) {
  NamesFixture f({"m-1", "a<b", "m-3", "zz", "unlisted"});
  const FilterReason reasons[] = {{}, {}, {"full", FailedMap::Failed}, {"no gpu", FailedMap::Unresolvable}};
  const uint32_t ids[] = {0, 1, 2, 3, 0};
  const uint8_t codes[] = {2, 3, 2, 1, 2};
  const uint32_t passed[] = {3};
  const std::string_view unknown[] = {"n>2", "0", "n>2", "zzz"};
  Buffer out;
  encodeNodeNamesFilter(f.table, NodeNamesVerdicts<uint8_t>{ids, codes, reasons, passed, unknown, "not found"}, out);
  EXPECT_EQ(out.view(), R"({"Nodes":null,"NodeNames":["zz"],"FailedNodes":{"0":"not found","m-1":"full",)"
                        R"("m-3":"full","n\u003e2":"not found","zzz":"not found"},)"
                        R"("FailedAndUnresolvableNodes":{"a\u003cb":"no gpu"},"Error":""})");
}

TEST(Encoder, FilterResultErrorIsGoZeroValue) {
  FilterResult r;
  r.nodesRaw = {"{}"};
  r.error = "decode: Pod: missing";
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), golden("filter_result_error.golden.json"));
}

TEST(Encoder, FilterResultNodesEchoesInputBytes) {
  std::string body = readData("extender_args_nodes.json");
  PaddedBuffer buf(body);
  Decoder d;
  ExtenderArgs args;
  ASSERT_TRUE(d.decodeExtenderArgs(buf.view(), args)) << d.errorMessage();
  ASSERT_EQ(args.nodes.size(), 3u);
  FilterResult r;
  r.nodesRaw = {args.nodes[0].raw, args.nodes[2].raw};
  r.failedNodes = {{"gpu-b", "spot not tolerated"}};
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), golden("filter_result_nodes.golden.json"));

  FilterResult none;
  none.failedAndUnresolvableNodes = {{"gpu-b", "b"}, {"cpu-1", "c"}, {"gpu-a", "a"}};
  out.clear();
  encodeFilterResult(none, out);
  EXPECT_EQ(out.view(), golden("filter_result_nodes_empty.golden.json"));
}

TEST(Encoder, NullInputNodeStaysValidJson) {
  PaddedBuffer buf(R"({"Pod":{},"Nodes":{"items":[null,{"metadata":{"name":"a"}}]}})");
  Decoder d;
  ExtenderArgs args;
  ASSERT_TRUE(d.decodeExtenderArgs(buf.view(), args)) << d.errorMessage();
  ASSERT_EQ(args.nodes.size(), 2u);
  FilterResult r;
  r.nodesRaw = {args.nodes[0].raw, args.nodes[1].raw};
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), R"({"Nodes":{"metadata":{},"items":[null,{"metadata":{"name":"a"}}]},"NodeNames":null,)"
                 R"("FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})");
}

TEST(Encoder, DuplicateFailedNodeKeepsLastLikeAMapAssignment) {
  FilterResult r;
  r.failedNodes = {{"n1", "first"}, {"n0", "x"}, {"n1", "second"}};
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), R"({"Nodes":{"metadata":{},"items":[]},"NodeNames":null,"FailedNodes":{"n0":"x","n1":"second"},)"
                 R"("FailedAndUnresolvableNodes":{},"Error":""})");
}

TEST(Encoder, HostPriorityListMatchesGo) {
  const HostPriority list[] = {{"gpu-b", 10}, {"gpu-a", 3}, {"cpu-1", 0}};
  Buffer out;
  encodeHostPriorityList(list, out);
  EXPECT_EQ(out.view(), golden("host_priority_list.golden.json"));
  out.clear();
  encodeHostPriorityList({}, out);
  EXPECT_EQ(out.view(), golden("host_priority_list_empty.golden.json"));
}

std::string escaped(std::string_view s) {
  std::string out;
  JsonWriter w(out);
  w.string(s);
  w.finish();
  return out;
}

// Reasons are escaped once per map and copied after: equal views, equal bytes at different
// addresses, and more distinct reasons than the memo holds must all come out right.
TEST(Encoder, RepeatedReasonsAreWrittenInFull) {
  std::vector<std::string> reasons;
  for (int i = 0; i < 12; ++i) {
    std::string reason = "r<";
    reason.append(std::to_string(i)).append(">\"");
    reasons.push_back(reason);
  }
  const std::string sameBytes = reasons[3];
  FilterResult r;
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back(std::string(1, 'n').append(std::to_string(100 + i)));
  std::string want = R"({"Nodes":{"metadata":{},"items":[]},"NodeNames":null,"FailedNodes":{)";
  for (int i = 0; i < 40; ++i) {
    std::string_view reason = i % 5 == 4 ? std::string_view(sameBytes) : std::string_view(reasons[(i * 7) % 12]);
    r.failedNodes.push_back({names[i], reason});
    if (i != 0) want += ',';
    want.append(escaped(names[i])).append(":").append(escaped(reason));
  }
  want += R"(},"FailedAndUnresolvableNodes":{},"Error":""})";
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), want);
}

// Prefixes from the table copied in fixed-size blocks, short and long hosts, scores in and out
// of 0..10: the same bytes as the field-by-field encoder.
TEST(Encoder, HostScoresMatchTheListEncoder) {
  NamesFixture f({"a", "ip-10-79-170-153.us-west-2.compute.internal", "x<y", std::string(90, 'n'), "gpu-b"});
  const std::vector<int32_t> scores = {10, 0, 7, 123, -4};
  const std::vector<uint32_t> ids = {4, 1, 2, 3, 0};
  std::vector<HostPriority> list;
  for (size_t i = 0; i < ids.size(); ++i) list.push_back({f.names[ids[i]], scores[i]});
  Buffer want, got = std::string_view("keep:");
  encodeHostPriorityList(list, want);
  encodeHostScores(f.table, ids, scores, got);
  EXPECT_EQ(got.view(), "keep:" + want.str());
  EXPECT_NE(want.view().find(R"({"Host":"x\u003cy","Score":7})"), std::string::npos) << want.view();
  Buffer empty;
  encodeHostScores(f.table, {}, {}, empty);
  EXPECT_EQ(empty.view(), "[]");
}

TEST(Encoder, BindingResultMatchesGo) {
  Buffer out;
  encodeBindingResult("", out);
  EXPECT_EQ(out.view(), golden("binding_result_ok.golden.json"));
  out.clear();
  encodeBindingResult("pod ml/train-llama-0 is already assigned to node \"gpu-a\"", out);
  EXPECT_EQ(out.view(), golden("binding_result_error.golden.json"));
}

TEST(Encoder, PreemptionResultMatchesGo) {
  NodeVictims v[2];
  v[0].node = "gpu-b";
  v[0].uids = {"dddddddd-0000-4000-8000-000000000003"};
  v[1].node = "gpu-a";
  v[1].uids = {"b0b0b0b0-0000-4000-8000-000000000002", "c1d2e3f4-0000-4000-8000-000000000001"};
  v[1].numPdbViolations = 1;
  Buffer out;
  encodePreemptionResult(v, out);
  EXPECT_EQ(out.view(), golden("preemption_result.golden.json"));
  out.clear();
  encodePreemptionResult({}, out);
  EXPECT_EQ(out.view(), golden("preemption_result_empty.golden.json"));
}

// Go's escaping rules one by one (the golden above covers them together).
// A full-Nodes request node without metadata.name fails every filter under the name "": its
// view is empty with no bytes behind it, which the writer must not hand to memcpy (undefined
// behaviour, caught by UBSan in the sanitizer suite; issue 26 item 7: fuzz_service_replies).
TEST(Encoder, EmptyViewsWithoutBytesAreWritten) {
  FilterResult r;
  r.failedNodes = {{std::string_view(), std::string_view()}};
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), R"({"Nodes":{"metadata":{},"items":[]},"NodeNames":null,"FailedNodes":{"":""},)"
                 R"("FailedAndUnresolvableNodes":{},"Error":""})");
  std::string s;
  JsonWriter w(s);
  w.raw(std::string_view());
  w.string(std::string_view());
  w.finish();
  EXPECT_EQ(s, R"("")");
}

TEST(JsonWriter, EscapesLikeGo) {
  auto enc = [](std::string_view s) {
    std::string out;
    JsonWriter w(out);
    w.string(s);
    w.finish();
    return out;
  };
  EXPECT_EQ(enc("plain-node-01"), "\"plain-node-01\"");
  EXPECT_EQ(enc("<a&b>"), R"("\u003ca\u0026b\u003e")");
  EXPECT_EQ(enc("q\"b\\"), R"("q\"b\\")");
  EXPECT_EQ(enc("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(enc(std::string_view("\x00\x1f", 2)), R"("\u0000\u001f")");
  EXPECT_EQ(enc("\x7f"), "\"\x7f\"");
  EXPECT_EQ(enc("\u2028\u2029"), R"("\u2028\u2029")");
  EXPECT_EQ(enc("\xc3\xa9\xf0\x9f\x9a\x80"), "\"\xc3\xa9\xf0\x9f\x9a\x80\"");  // valid UTF-8 stays
  EXPECT_EQ(enc("\xff"), R"("\ufffd")");
  EXPECT_EQ(enc("\xc0\xaf"), R"("\ufffd\ufffd")");          // overlong
  EXPECT_EQ(enc("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // UTF-16 surrogate
  EXPECT_EQ(enc("\xe6\x97"), R"("\ufffd\ufffd")");          // truncated at the end
  EXPECT_EQ(enc("\xef\xbf\xbd"), "\"\xef\xbf\xbd\"");        // a literal U+FFFD stays
}

// The word-at-a-time scan must find a special byte wherever it sits.
TEST(JsonWriter, FindsSpecialBytesAtEveryPosition) {
  const std::pair<char, std::string> specials[] = {
      {'<', "\\u003c"}, {'>', "\\u003e"}, {'&', "\\u0026"}, {'"', "\\\""}, {'\\', "\\\\"},
      {'\n', "\\n"},     {'\x1f', "\\u001f"}, {'\x80', "\\ufffd"}};
  for (const auto& [c, escaped] : specials) {
    for (size_t len = 1; len <= 24; ++len) {
      for (size_t pos = 0; pos < len; ++pos) {
        std::string in(len, 'a');
        in[pos] = c;
        std::string out;
        JsonWriter w(out);
        w.string(in);
        w.finish();
        std::string want = "\"";
        want.append(pos, 'a').append(escaped).append(len - pos - 1, 'a').push_back('"');
        ASSERT_EQ(out, want) << "char " << int(static_cast<unsigned char>(c)) << " at " << pos << " of " << len;
      }
    }
  }
}

TEST(JsonWriter, GrowsAndFinishesExactly) {
  std::string out = "prefix:";
  {
    JsonWriter w(out);
    for (int i = 0; i < 1000; ++i) {
      w.int64(-i);
      w.ch(',');
    }
    w.finish();
    EXPECT_EQ(out.substr(0, 13), "prefix:0,-1,-");
    w.null();  // writing continues after finish()
  }
  EXPECT_EQ(out.size(), 7 + 3889 + 1000 + 4u);
  EXPECT_EQ(out.substr(out.size() - 9), "-999,null");
}

// Replies are written into a Buffer, which grows without zero-filling: what was written must
// survive every reallocation, and finish() must leave exactly the written bytes.
TEST(JsonWriter, WritesIntoABufferExactly) {
  Buffer out = std::string_view("prefix:");
  std::string want = "prefix:";
  {
    JsonWriter w(out);
    for (int i = 0; i < 3000; ++i) {
      w.string("n<" + std::to_string(i));
      w.ch(',');
      want += "\"n\\u003c" + std::to_string(i) + "\",";
    }
  }
  EXPECT_EQ(out.view(), want);
  EXPECT_GE(out.capacity(), out.size());
}

TEST(Buffer, KeepsContentsAcrossGrowthAndCapacityAcrossClear) {
  Buffer b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.view(), "");
  b.append(std::string_view());  // nothing, before any allocation (UBSan checks the calls)
  b.append(0, 'x');
  EXPECT_TRUE(b.empty());
  b.append("abc");
  b.append(2, 'x');
  b.push_back('!');
  EXPECT_EQ(b.view(), "abcxx!");
  b.resizeUninitialized(100000);  // grows: the written prefix stays
  EXPECT_EQ(b.view().substr(0, 6), "abcxx!");
  b.resizeUninitialized(3);  // shrinks to a prefix
  EXPECT_EQ(b.view(), "abc");
  const size_t cap = b.capacity();
  EXPECT_GE(cap, 100000u);
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.capacity(), cap);
  b = std::string_view("again");
  Buffer copy = b;
  b.assign("changed");
  EXPECT_EQ(copy.view(), "again");
  EXPECT_EQ(b.view(), "changed");
  EXPECT_EQ(b.find("ang"), 2u);
  Buffer moved = std::move(b);  // the server passes reply buffers between requests
  EXPECT_EQ(moved.view(), "changed");
  EXPECT_EQ(b.capacity(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_TRUE(b.empty());
  b.append("reused");
  EXPECT_EQ(b.view(), "reused");
  b.release();
  EXPECT_EQ(b.capacity(), 0u);
  EXPECT_EQ(b.view(), "");
}

}  // namespace
}  // namespace fleetsched::codec
