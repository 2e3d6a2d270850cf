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

TEST(Encoder, FilterResultNodeNamesMatchesGo) {
  FilterResult r;
  r.mode = NodesMode::NodeNames;
  r.nodeNames = {"gpu-a"};
  // Unsorted on purpose: Go writes map keys sorted bytewise.
  r.failedNodes = {{"gpu-b", "only 1 free nvidia.com/gpu, need 4"},
                   {"gpu-a.x", "x"},
                   {"gpu-a-1", kReasonTricky},
                   {"Gpu-Z", "zone"}};
  r.failedAndUnresolvableNodes = {{"cpu-1", "node(s) had no nvidia.com/gpu"}};
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), golden("filter_result_names.golden.json"));
}

TEST(Encoder, FilterResultEmptyIsAListNotNull) {
  FilterResult r;
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), golden("filter_result_empty.golden.json"));
  EXPECT_NE(out.view().find(R"("NodeNames":[])"), std::string::npos);
}

TEST(Encoder, FilterResultErrorIsGoZeroValue) {
  FilterResult r;
  r.nodeNames = {"ignored"};
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
  r.mode = NodesMode::Nodes;
  r.nodesRaw = {args.nodes[0].raw, args.nodes[2].raw};
  r.failedNodes = {{"gpu-b", "spot not tolerated"}};
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), golden("filter_result_nodes.golden.json"));

  FilterResult none;
  none.mode = NodesMode::Nodes;
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
  r.mode = NodesMode::Nodes;
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
  EXPECT_EQ(out.view(), R"({"Nodes":null,"NodeNames":[],"FailedNodes":{"n0":"x","n1":"second"},)"
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

// The caller-sorted, pre-encoded form (what the extender service sends in NodeNames mode) must
// write the same bytes as the Go golden above.
TEST(Encoder, FilterResultSortedAndEncodedMatchesGo) {
  std::vector<std::string> keep;
  keep.reserve(16);
  auto enc = [&](std::string_view s) -> std::string_view { return keep.emplace_back(escaped(s)); };
  FilterResult r;
  r.mode = NodesMode::NodeNames;
  r.failedSorted = true;
  r.namesEncoded = true;
  r.nodeNames = {enc("gpu-a")};
  r.failedNodes = {{enc("Gpu-Z"), "zone"},
                   {enc("gpu-a-1"), kReasonTricky},
                   {enc("gpu-a.x"), "x"},
                   {enc("gpu-b"), "only 1 free nvidia.com/gpu, need 4"}};
  r.failedAndUnresolvableNodes = {{enc("cpu-1"), "node(s) had no nvidia.com/gpu"}};
  Buffer out;
  encodeFilterResult(r, out);
  EXPECT_EQ(out.view(), golden("filter_result_names.golden.json"));
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
  std::string want = R"({"Nodes":null,"NodeNames":[],"FailedNodes":{)";
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

TEST(Encoder, HostPriorityListWithEncodedHosts) {
  std::string a = escaped("gpu-a"), b = escaped("x<y");
  std::vector<HostPriority> list = {{a, 10}, {b, 0}};
  Buffer out;
  encodeHostPriorityList(list, out, true);
  EXPECT_EQ(out.view(), R"([{"Host":"gpu-a","Score":10},{"Host":"x\u003cy","Score":0}])");
}

// Prefixes copied in fixed-size blocks (padded) or by length, short and long hosts, scores
// in and out of 0..10: the same bytes as the field-by-field encoder.
TEST(Encoder, HostScoresFromPrefixesMatchTheListEncoder) {
  const std::vector<std::string> hosts = {"a", "ip-10-79-170-153.us-west-2.compute.internal", "x<y",
                                          std::string(90, 'n'), "gpu-b"};
  const std::vector<int32_t> scores = {10, 0, 7, 123, -4};
  std::vector<std::string> quoted;
  for (const auto& h : hosts) quoted.push_back(escaped(h));
  std::string table;
  std::vector<size_t> at;
  for (const auto& q : quoted) {
    at.push_back(table.size());
    appendHostScorePrefix(q, table);
  }
  at.push_back(table.size());
  table.append(kCopySlack, '\0');
  std::vector<std::string_view> prefixes;
  std::vector<HostPriority> list;
  for (size_t i = 0; i < hosts.size(); ++i) {
    prefixes.push_back(std::string_view(table).substr(at[i], at[i + 1] - at[i]));
    list.push_back({quoted[i], scores[i]});
  }
  Buffer want, exact, padded = std::string_view("keep:");
  encodeHostPriorityList(list, want, true);
  encodeHostScores(prefixes, scores, exact);
  encodeHostScores(prefixes, scores, padded, true);
  EXPECT_EQ(exact.view(), want.view());
  EXPECT_EQ(padded.view(), "keep:" + want.str());
  Buffer empty;
  encodeHostScores({}, {}, empty, true);
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
