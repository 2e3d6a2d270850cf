// Decoders against Go's bytes (tests/data/codec, written by tests/tools/goldens) and against
// bad input.
#include "codec/decoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "tests/codec/test_data.h"

namespace fleetsched::codec {
namespace {

using ::testing::HasSubstr;
using testing::readData;

class DecoderTest : public ::testing::Test {
 protected:
  // Decodes `json` as ExtenderArgs; the buffer lives in the fixture so views stay valid.
  bool decodeArgs(std::string_view json) {
    buf_.assign(json);
    return d_.decodeExtenderArgs(buf_.view(), args_);
  }
  Decoder d_;
  PaddedBuffer buf_;
  ExtenderArgs args_;
};

int64_t scalar(const Resources& r, std::string_view name) { return r.get(name); }

TEST_F(DecoderTest, ExtenderArgsNodeNamesFromGo) {
  ASSERT_TRUE(decodeArgs(readData("extender_args_names.json"))) << d_.errorMessage();
  EXPECT_EQ(args_.mode(), NodesMode::NodeNames);
  EXPECT_TRUE(args_.hasNodeNames);
  EXPECT_FALSE(args_.hasNodes);
  // Go escapes '<' and '>' as \u003c / \u003e: the decoder must hand back the real bytes.
  EXPECT_THAT(args_.nodeNames, ::testing::ElementsAre("gpu-a", "gpu-b", "cpu-1", "node-\xc3\xa9", "n<1>"));

  const Pod& p = args_.pod;
  EXPECT_EQ(p.name, "train-llama-0");
  EXPECT_EQ(p.namespace_, "ml");
  EXPECT_EQ(p.uid, "6f1c2a9e-4b7d-4e11-9a3c-0d2b8e5f7a10");
  EXPECT_EQ(p.resourceVersion, "48213");
  ASSERT_NE(findKey(p.labels, "fleetsched.io/workload"), nullptr);
  EXPECT_EQ(*findKey(p.labels, "fleetsched.io/workload"), "llama");
  ASSERT_NE(findKey(p.annotations, "note"), nullptr);
  EXPECT_EQ(*findKey(p.annotations, "note"), "<tensor & pipeline>");
  EXPECT_EQ(*findKey(p.annotations, "fleetsched.io/gpu-models"), "A100|H100");
  ASSERT_EQ(p.ownerReferences.size(), 2u);
  ASSERT_NE(p.controllerRef(), nullptr);
  EXPECT_EQ(p.controllerRef()->kind, "Job");
  EXPECT_EQ(p.controllerRef()->name, "llama-train");
  EXPECT_FALSE(p.ownerReferences[1].controller);
  EXPECT_FALSE(p.terminating);
  EXPECT_EQ(p.schedulerName, "fleetsched");
  EXPECT_EQ(p.priority, 100000);
  EXPECT_EQ(p.nodeName, "");
  ASSERT_EQ(p.nodeSelector.size(), 1u);
  EXPECT_EQ(p.nodeSelector[0].key, "nvidia.com/gpu.present");

  ASSERT_EQ(p.requiredNodeAffinity.size(), 2u);
  const auto& t0 = p.requiredNodeAffinity[0];
  ASSERT_EQ(t0.matchExpressions.size(), 3u);
  EXPECT_EQ(t0.matchExpressions[0].key, "topology.kubernetes.io/zone");
  EXPECT_EQ(t0.matchExpressions[0].op, SelectorOp::In);
  EXPECT_THAT(t0.matchExpressions[0].values, ::testing::ElementsAre("us-east-1a", "us-east-1b"));
  EXPECT_EQ(t0.matchExpressions[1].op, SelectorOp::Gt);
  EXPECT_EQ(t0.matchExpressions[2].op, SelectorOp::DoesNotExist);
  EXPECT_TRUE(t0.matchExpressions[2].values.empty());
  ASSERT_EQ(p.requiredNodeAffinity[1].matchFields.size(), 1u);
  EXPECT_EQ(p.requiredNodeAffinity[1].matchFields[0].key, "metadata.name");
  ASSERT_EQ(p.preferredNodeAffinity.size(), 2u);
  EXPECT_EQ(p.preferredNodeAffinity[0].weight, 50);
  EXPECT_EQ(p.preferredNodeAffinity[0].preference.matchExpressions[0].op, SelectorOp::NotIn);
  EXPECT_EQ(p.preferredNodeAffinity[1].preference.matchExpressions[0].op, SelectorOp::Exists);
  EXPECT_EQ(p.preferredNodeAffinity[1].preference.matchExpressions[1].op, SelectorOp::Lt);

  ASSERT_EQ(p.tolerations.size(), 5u);
  EXPECT_EQ(p.tolerations[0].key, "nvidia.com/gpu");
  EXPECT_TRUE(p.tolerations[0].opExists);
  EXPECT_EQ(p.tolerations[0].effect, TaintEffect::NoSchedule);
  EXPECT_FALSE(p.tolerations[1].opExists);
  EXPECT_EQ(p.tolerations[1].value, "true");
  EXPECT_EQ(p.tolerations[2].effect, TaintEffect::NoExecute);
  EXPECT_FALSE(p.tolerations[3].opExists);  // operator omitted means Equal
  EXPECT_EQ(p.tolerations[3].effect, TaintEffect::None);
  EXPECT_TRUE(p.tolerations[4].opExists);
  EXPECT_EQ(p.tolerations[4].key, "");

  EXPECT_EQ(p.phase, PodPhase::Pending);
  EXPECT_EQ(p.nominatedNodeName, "gpu-b");
}

// Effective requests of every pod in pods.json against kube-scheduler's own PodRequests
// (k8s.io/component-helpers, after apiserver limit defaulting), computed by the Go generator.
TEST_F(DecoderTest, PodRequestsMatchKubeScheduler) {
  PaddedBuffer buf(readData("pods.json"));
  PodList list;
  ASSERT_TRUE(d_.decodePodList(buf.view(), list)) << d_.errorMessage();
  EXPECT_EQ(list.resourceVersion, "50000");
  ASSERT_EQ(list.items.size(), 6u);

  std::string expectJson = readData("pods_requests.expected.json");
  simdjson::dom::parser parser;
  simdjson::dom::array expected;
  ASSERT_EQ(parser.parse(expectJson).get_array().get(expected), simdjson::SUCCESS);
  size_t i = 0;
  for (simdjson::dom::element e : expected) {
    ASSERT_LT(i, list.items.size());
    const Pod& p = list.items[i++];
    std::string_view name;
    ASSERT_EQ(e["name"].get_string().get(name), simdjson::SUCCESS);
    EXPECT_EQ(p.name, name);
    SCOPED_TRACE(std::string(name));
    simdjson::dom::object reqs;
    ASSERT_EQ(e["requests"].get_object().get(reqs), simdjson::SUCCESS);
    size_t count = 0;
    for (auto [k, v] : reqs) {
      int64_t want = 0;
      ASSERT_EQ(v.get_int64().get(want), simdjson::SUCCESS);
      EXPECT_EQ(scalar(p.requests, k), want) << k;
      ++count;
    }
    // Nothing beyond what Go charges.
    size_t have = p.requests.scalar.size() + (p.requests.milliCpu != 0) + (p.requests.memory != 0) +
                  (p.requests.ephemeralStorage != 0) + (p.requests.pods != 0);
    EXPECT_EQ(have, count);
  }
  EXPECT_TRUE(list.items[3].terminating);
  EXPECT_EQ(list.items[2].nodeName, "gpu-a");
  EXPECT_EQ(list.items[2].priority, -5);
  EXPECT_EQ(list.items[2].phase, PodPhase::Running);
}

TEST_F(DecoderTest, LimitsOnlyContainerGetsRequestsDefaulted) {
  ASSERT_TRUE(decodeArgs(readData("extender_args_cpu_pod.json"))) << d_.errorMessage();
  // nginx: limits 1 cpu / 512Mi only; sidecar: request 50m, limits 200m / 64Mi.
  EXPECT_EQ(args_.pod.requests.milliCpu, 1050);
  EXPECT_EQ(args_.pod.requests.memory, (512 + 64) << 20);
  EXPECT_EQ(args_.pod.priority, 0);
  EXPECT_EQ(args_.pod.controllerRef()->kind, "ReplicaSet");
}

// The init-container rules of PodRequests, spelled out: a sidecar (restartPolicy Always)
// counts for the whole pod life and adds to every init container started after it.
TEST_F(DecoderTest, SidecarsCarryIntoLaterInitContainers) {
  auto podWith = [](const std::string& init) {
    return R"({"Pod":{"spec":{"initContainers":[)" + init +
           R"(],"containers":[{"resources":{"requests":{"cpu":"1","example.com/x":"1"}}}]}},"NodeNames":[]})";
  };
  const std::string sidecar = R"({"restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}})";
  const std::string plain = R"({"resources":{"requests":{"cpu":"2","example.com/x":"3"}}})";
  // sidecar then plain: the plain one runs next to the sidecar: max(1+1, 2+1) = 3 cpu.
  ASSERT_TRUE(decodeArgs(podWith(sidecar + "," + plain))) << d_.errorMessage();
  EXPECT_EQ(args_.pod.requests.milliCpu, 3000);
  EXPECT_EQ(args_.pod.requests.get("example.com/x"), 3);
  // plain then sidecar: max(1+1, 2) = 2 cpu.
  ASSERT_TRUE(decodeArgs(podWith(plain + "," + sidecar))) << d_.errorMessage();
  EXPECT_EQ(args_.pod.requests.milliCpu, 2000);
  // Two sidecars and no plain init container: they simply add up with the containers.
  ASSERT_TRUE(decodeArgs(podWith(sidecar + "," + sidecar))) << d_.errorMessage();
  EXPECT_EQ(args_.pod.requests.milliCpu, 3000);
  EXPECT_EQ(args_.pod.requests.get("example.com/x"), 1);
  // Requests win over limits; a limit alone becomes the request.
  ASSERT_TRUE(decodeArgs(R"({"Pod":{"spec":{"containers":[{"resources":{"requests":{"cpu":"100m"},)"
                         R"("limits":{"cpu":"4","nvidia.com/gpu":"2"}}}]}}})"))
      << d_.errorMessage();
  EXPECT_EQ(args_.pod.requests.milliCpu, 100);
  EXPECT_EQ(args_.pod.requests.get("nvidia.com/gpu"), 2);
}

TEST_F(DecoderTest, ExtenderArgsFullNodesFromGo) {
  std::string body = readData("extender_args_nodes.json");
  ASSERT_TRUE(decodeArgs(body)) << d_.errorMessage();
  EXPECT_EQ(args_.mode(), NodesMode::Nodes);
  EXPECT_TRUE(args_.hasNodes);
  EXPECT_FALSE(args_.hasNodeNames);
  ASSERT_EQ(args_.nodes.size(), 3u);
  const Node& a = args_.nodes[0];
  EXPECT_EQ(a.name, "gpu-a");
  EXPECT_EQ(a.resourceVersion, "778");
  EXPECT_EQ(*findKey(a.labels, "nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(*findKey(a.labels, "topology.kubernetes.io/zone"), "us-east-1a");
  EXPECT_EQ(*findKey(a.annotations, "node.alpha.kubernetes.io/ttl"), "0");
  EXPECT_FALSE(a.unschedulable);
  ASSERT_EQ(a.taints.size(), 1u);
  EXPECT_EQ(a.taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(a.taints[0].effect, TaintEffect::NoSchedule);
  EXPECT_EQ(a.capacity.milliCpu, 96000);
  EXPECT_EQ(a.allocatable.milliCpu, 95690);
  EXPECT_EQ(a.allocatable.memory, 1147304848LL * 1024);
  EXPECT_EQ(a.allocatable.ephemeralStorage, 3598798569707LL);
  EXPECT_EQ(a.allocatable.pods, 737);
  EXPECT_EQ(a.allocatable.get("nvidia.com/gpu"), 8);
  EXPECT_EQ(a.allocatable.get("vpc.amazonaws.com/efa"), 4);
  const Node& b = args_.nodes[1];
  ASSERT_EQ(b.taints.size(), 3u);
  EXPECT_EQ(b.taints[2].effect, TaintEffect::PreferNoSchedule);
  const Node& c = args_.nodes[2];
  EXPECT_TRUE(c.unschedulable);
  EXPECT_EQ(c.allocatable.get("nvidia.com/gpu"), 0);

  // raw is the exact object text inside the request, so it can be echoed unmodified.
  for (const Node& n : args_.nodes) {
    ASSERT_FALSE(n.raw.empty());
    EXPECT_EQ(n.raw.front(), '{');
    EXPECT_EQ(n.raw.back(), '}');
    EXPECT_NE(body.find(n.raw), std::string::npos);
  }
  EXPECT_EQ(args_.nodes[0].raw.data() + args_.nodes[0].raw.size() + 1, args_.nodes[1].raw.data());
  // And it decodes on its own to the same node.
  PaddedBuffer one(args_.nodes[1].raw);
  Decoder d2;
  Node again;
  ASSERT_TRUE(d2.decodeNode(one.view(), again)) << d2.errorMessage();
  EXPECT_EQ(again.name, "gpu-b");
  EXPECT_EQ(again.raw, args_.nodes[1].raw);
}

TEST_F(DecoderTest, ReuseLeavesNoStaleFields) {
  ASSERT_TRUE(decodeArgs(readData("extender_args_nodes.json")));
  ASSERT_TRUE(decodeArgs(readData("extender_args_cpu_pod.json")));
  EXPECT_TRUE(args_.nodes.empty());
  EXPECT_EQ(args_.mode(), NodesMode::NodeNames);
  EXPECT_THAT(args_.nodeNames, ::testing::ElementsAre("cpu-1"));
  EXPECT_TRUE(args_.pod.tolerations.empty());
  EXPECT_TRUE(args_.pod.requiredNodeAffinity.empty());
  EXPECT_EQ(args_.pod.nominatedNodeName, "");
  EXPECT_EQ(args_.pod.requests.get("nvidia.com/gpu"), 0);
}

TEST_F(DecoderTest, KeysMatchCaseInsensitivelyLikeGo) {
  ASSERT_TRUE(decodeArgs(R"({"pod":{"metadata":{"name":"p"}},"NODENAMES":["a","b"]})")) << d_.errorMessage();
  EXPECT_EQ(args_.pod.name, "p");
  EXPECT_THAT(args_.nodeNames, ::testing::ElementsAre("a", "b"));
  // Go folds U+017F (long s) onto 's' and U+212A (Kelvin) onto 'k'.
  ASSERT_TRUE(decodeArgs("{\"Pod\":{},\"NodeName\xc5\xbf\":[\"x\"]}")) << d_.errorMessage();
  EXPECT_THAT(args_.nodeNames, ::testing::ElementsAre("x"));
  // Escaped keys are unescaped before matching.
  ASSERT_TRUE(decodeArgs(R"({"\u0050od":{},"NodeNames":["y"]})")) << d_.errorMessage();
  // Kubernetes object keys stay exact: "Metadata" is not metadata.
  ASSERT_TRUE(decodeArgs(R"({"Pod":{"Metadata":{"name":"p"}},"NodeNames":[]})"));
  EXPECT_EQ(args_.pod.name, "");
}

// Keys end where the value's token starts (stepping back over ':' and blanks), so spacing
// around the colon, escapes inside keys and empty keys must all read as in compact JSON.
TEST_F(DecoderTest, KeysReadTheSameWhateverTheSpacingAndEscapes) {
  const std::string compact =
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"n1","labels":)"
      R"({"zone":"a","":"empty","a\"b":"q","c\\":"bs","\u0067pu":"8","long/key.with-dots_and_more":"v"}},)"
      R"("status":{"allocatable":{"cpu":"4","nvidia.com/gpu":"2"}}}]}})";
  const std::string spaced =
      "{ \"Pod\" : { \"metadata\" :{\"name\"\t:\"p\"} } ,\n \"Nodes\" : { \"items\" : [ { \"metadata\" : {"
      " \"name\"  :  \"n1\" , \"labels\" : {\r\n \"zone\" : \"a\" , \"\" : \"empty\" , \"a\\\"b\"\n:\n\"q\","
      " \"c\\\\\" : \"bs\" , \"\\u0067pu\" :\"8\", \"long/key.with-dots_and_more\"\t:\t\"v\" } } ,"
      " \"status\" : { \"allocatable\" : { \"cpu\" : \"4\" , \"nvidia.com/gpu\" : \"2\" } } } ] } }";
  for (const std::string* body : {&compact, &spaced}) {
    SCOPED_TRACE(*body);
    ASSERT_TRUE(decodeArgs(*body)) << d_.errorMessage();
    EXPECT_EQ(args_.pod.name, "p");
    ASSERT_EQ(args_.nodes.size(), 1u);
    const Node& n = args_.nodes[0];
    EXPECT_EQ(n.name, "n1");
    std::vector<std::pair<std::string, std::string>> labels;
    for (const KeyValue& kv : n.labels) labels.emplace_back(kv.key, kv.value);
    EXPECT_THAT(labels, ::testing::ElementsAre(std::pair<std::string, std::string>{"zone", "a"},
                                               std::pair<std::string, std::string>{"", "empty"},
                                               std::pair<std::string, std::string>{"a\"b", "q"},
                                               std::pair<std::string, std::string>{"c\\", "bs"},
                                               std::pair<std::string, std::string>{"gpu", "8"},
                                               std::pair<std::string, std::string>{"long/key.with-dots_and_more", "v"}));
    EXPECT_EQ(n.allocatable.milliCpu, 4000);
    EXPECT_EQ(n.allocatable.get("nvidia.com/gpu"), 2);
  }
}

TEST_F(DecoderTest, NullsReadAsAbsent) {
  ASSERT_TRUE(decodeArgs(R"({"Pod":{"metadata":{"name":null,"labels":null},"spec":null,"status":null},)"
                         R"("Nodes":null,"NodeNames":null,"Extra":{"a":[1,2,{"b":null}]}})"))
      << d_.errorMessage();
  EXPECT_FALSE(args_.hasNodes);
  EXPECT_FALSE(args_.hasNodeNames);
  EXPECT_EQ(args_.mode(), NodesMode::NodeNames);
  EXPECT_TRUE(args_.pod.labels.empty());
}

TEST_F(DecoderTest, BindingArgsFromGo) {
  PaddedBuffer buf(readData("binding_args.json"));
  BindingArgs b;
  ASSERT_TRUE(d_.decodeBindingArgs(buf.view(), b)) << d_.errorMessage();
  EXPECT_EQ(b.podName, "train-llama-0");
  EXPECT_EQ(b.podNamespace, "ml");
  EXPECT_EQ(b.podUid, "6f1c2a9e-4b7d-4e11-9a3c-0d2b8e5f7a10");
  EXPECT_EQ(b.node, "gpu-a");
}

TEST_F(DecoderTest, PreemptionArgsBothModesFromGo) {
  PaddedBuffer meta(readData("preemption_args_meta.json"));
  PreemptionArgs a;
  ASSERT_TRUE(d_.decodePreemptionArgs(meta.view(), a)) << d_.errorMessage();
  EXPECT_EQ(a.pod.name, "train-llama-0");
  EXPECT_FALSE(a.hasVictims);
  EXPECT_TRUE(a.hasMetaVictims);
  ASSERT_EQ(a.nodeNameToMetaVictims.size(), 2u);
  EXPECT_EQ(a.nodeNameToMetaVictims[0].node, "gpu-a");
  EXPECT_THAT(a.nodeNameToMetaVictims[0].uids, ::testing::ElementsAre("b0b0b0b0-0000-4000-8000-000000000002"));
  EXPECT_EQ(a.nodeNameToMetaVictims[1].numPdbViolations, 2);
  EXPECT_EQ(a.nodeNameToMetaVictims[1].uids.size(), 2u);

  PaddedBuffer full(readData("preemption_args_full.json"));
  ASSERT_TRUE(d_.decodePreemptionArgs(full.view(), a)) << d_.errorMessage();
  EXPECT_TRUE(a.hasVictims);
  EXPECT_FALSE(a.hasMetaVictims);
  EXPECT_TRUE(a.nodeNameToMetaVictims.empty());
  ASSERT_EQ(a.nodeNameToVictims.size(), 2u);
  const NodeVictims& b = a.nodeNameToVictims[1];
  EXPECT_EQ(b.node, "gpu-b");
  ASSERT_EQ(b.pods.size(), 2u);
  EXPECT_EQ(b.pods[0].name, "old-job-z");
  EXPECT_TRUE(b.pods[0].terminating);
  EXPECT_EQ(b.pods[1].requests.milliCpu, 1050);
  EXPECT_THAT(b.uids, ::testing::ElementsAre("dddddddd-0000-4000-8000-000000000003", "c1d2e3f4-0000-4000-8000-000000000001"));
  EXPECT_EQ(a.nodeNameToVictims[0].numPdbViolations, 1);
  EXPECT_EQ(a.nodeNameToVictims[0].pods[0].requests.get("nvidia.com/gpu"), 2);
}

TEST_F(DecoderTest, NodeListFile) {
  PaddedBuffer buf(readData("nodes.json"));
  NodeList list;
  ASSERT_TRUE(d_.decodeNodeList(buf.view(), list)) << d_.errorMessage();
  EXPECT_EQ(list.resourceVersion, "50001");
  EXPECT_EQ(list.continueToken, "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ");
  ASSERT_EQ(list.items.size(), 3u);
  EXPECT_EQ(list.items[1].name, "gpu-b");
  EXPECT_EQ(*findKey(list.items[1].labels, "karpenter.sh/capacity-type"), "spot");
  EXPECT_EQ(list.items[2].allocatable.milliCpu, 15890);
  EXPECT_EQ(list.items[2].raw.back(), '}');  // raw excludes the indentation that follows
}

// Splits a watch stream on newlines, as a watch client does.
std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(pos, nl - pos + 1 <= s.size() - pos ? nl - pos + 1 : nl - pos));
    pos = nl + 1;
  }
  return out;
}

TEST_F(DecoderTest, WatchEventsFromGo) {
  auto events = lines(readData("watch_pods.jsonl"));
  ASSERT_EQ(events.size(), 6u);
  WatchEvent ev;
  PaddedBuffer buf;
  auto decode = [&](size_t i) {
    buf.assign(events[i]);  // includes the trailing newline
    return d_.decodeWatchEvent(buf.view(), ObjectKind::Pod, ev);
  };
  ASSERT_TRUE(decode(0)) << d_.errorMessage();
  EXPECT_EQ(ev.type, WatchEventType::Added);
  EXPECT_EQ(ev.kind, "Pod");
  EXPECT_EQ(ev.pod.name, "train-llama-0");
  EXPECT_EQ(ev.pod.requests.milliCpu, 16250);
  EXPECT_EQ(ev.resourceVersion, "48213");
  ASSERT_TRUE(decode(1)) << d_.errorMessage();
  EXPECT_EQ(ev.type, WatchEventType::Modified);
  EXPECT_EQ(ev.pod.nodeName, "gpu-a");
  EXPECT_EQ(ev.pod.requests.get("nvidia.com/gpu"), 2);
  ASSERT_TRUE(decode(2));
  EXPECT_EQ(ev.type, WatchEventType::Deleted);
  EXPECT_TRUE(ev.pod.terminating);
  ASSERT_TRUE(decode(3));
  EXPECT_EQ(ev.type, WatchEventType::Bookmark);
  EXPECT_EQ(ev.resourceVersion, "12746");
  EXPECT_FALSE(ev.initialEventsEnd);
  ASSERT_TRUE(decode(4));
  EXPECT_EQ(ev.resourceVersion, "12800");
  EXPECT_TRUE(ev.initialEventsEnd);
  ASSERT_TRUE(decode(5)) << d_.errorMessage();
  EXPECT_EQ(ev.type, WatchEventType::Error);
  EXPECT_EQ(ev.kind, "Status");
  EXPECT_EQ(ev.status.code, 410);
  EXPECT_EQ(ev.status.reason, "Expired");
  EXPECT_EQ(ev.status.status, "Failure");
  EXPECT_EQ(ev.status.message, "too old resource version: 1000 (2000)");

  auto nodeEvents = lines(readData("watch_nodes.jsonl"));
  ASSERT_EQ(nodeEvents.size(), 2u);
  buf.assign(nodeEvents[0]);
  ASSERT_TRUE(d_.decodeWatchEvent(buf.view(), ObjectKind::Node, ev)) << d_.errorMessage();
  EXPECT_EQ(ev.node.name, "gpu-b");
  EXPECT_EQ(ev.node.allocatable.get("nvidia.com/gpu"), 8);
  EXPECT_EQ(ev.node.raw.front(), '{');
  EXPECT_EQ(ev.node.raw.back(), '}');
  buf.assign(nodeEvents[1]);
  ASSERT_TRUE(d_.decodeWatchEvent(buf.view(), ObjectKind::Node, ev));
  EXPECT_EQ(ev.type, WatchEventType::Deleted);
  EXPECT_TRUE(ev.node.unschedulable);

  // The object may come before the type.
  buf.assign(R"({"object":{"kind":"Status","status":"Failure","reason":"Gone","code":410},"type":"ERROR"})");
  ASSERT_TRUE(d_.decodeWatchEvent(buf.view(), ObjectKind::Pod, ev)) << d_.errorMessage();
  EXPECT_EQ(ev.type, WatchEventType::Error);
  EXPECT_EQ(ev.status.reason, "Gone");
  buf.assign(R"({"type":"SYNC","object":{}})");
  EXPECT_FALSE(d_.decodeWatchEvent(buf.view(), ObjectKind::Pod, ev));
  EXPECT_THAT(d_.errorMessage(), HasSubstr("type: unknown event type"));
}

struct BadCase {
  const char* name;
  std::string json;
  const char* message;  // expected substring of errorMessage()
};

TEST_F(DecoderTest, BadInputGivesAClearError) {
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  const BadCase cases[] = {
      {"empty", "", ""},
      {"malformed", R"({"Pod":{)", ""},
      {"not an object", R"([1,2])", "expected a JSON object"},
      {"pod is a number", R"({"Pod":3,"NodeNames":[]})", "Pod: expected object"},
      {"pod is null", R"({"Pod":null,"NodeNames":[]})", "Pod: null"},
      {"node names is an object", R"({"Pod":{},"NodeNames":{}})", "NodeNames: expected array"},
      {"node name is a number", R"({"Pod":{},"NodeNames":["a",3]})", "NodeNames[1]: expected string"},
      {"missing pod", R"({"NodeNames":["a"]})", "Pod: missing"},
      {"invalid quantity",
       R"({"Pod":{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"abc"}}}]}},"NodeNames":[]})",
       R"(Pod.spec.containers[0].resources.requests.cpu: invalid quantity "abc")"},
      {"quantity out of range",
       R"({"Pod":{"spec":{"initContainers":[{},{"resources":{"limits":{"memory":"1e30"}}}]}}})",
       R"(Pod.spec.initContainers[1].resources.limits.memory: quantity out of range "1e30")"},
      {"quantity is a number", R"({"Pod":{"spec":{"overhead":{"cpu":1}}}})", "Pod.spec.overhead.cpu: expected string"},
      {"huge priority", R"({"Pod":{"spec":{"priority":99999999999999999999}}})", "Pod.spec.priority"},
      {"int32 priority overflow", R"({"Pod":{"spec":{"priority":4294967296}}})", "Pod.spec.priority: number out of range"},
      {"label is a number", R"({"Pod":{"metadata":{"labels":{"a":1}}}})", "Pod.metadata.labels.a: expected string"},
      {"bad operator",
       R"({"Pod":{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"Near"}]}]}}}}}})",
       "Pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
       ".matchExpressions[0].operator: unknown operator \"Near\""},
      {"bad taint effect", R"({"Pod":{},"Nodes":{"items":[{"spec":{"taints":[{"key":"a","effect":"Maybe"}]}}]}})",
       "Nodes.items[0].spec.taints[0].effect: unknown taint effect"},
      {"node quantity", R"({"Pod":{},"Nodes":{"items":[{},{"status":{"allocatable":{"pods":"1.5.5"}}}]}})",
       "Nodes.items[1].status.allocatable.pods: invalid quantity"},
      {"trailing data", R"({"Pod":{},"NodeNames":[]} {"x":1})", "unexpected data after the JSON value"},
      {"deep nesting in a known field", R"({"Pod":{"metadata":{"labels":{"a":)" + deep + "}}}}", "expected string"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(decodeArgs(c.json));
    EXPECT_EQ(d_.error(), DecodeError::Invalid);
    EXPECT_FALSE(d_.errorMessage().empty());
    EXPECT_THAT(d_.errorMessage(), HasSubstr(c.message));
  }
}

TEST_F(DecoderTest, TruncatedBodiesFailCleanly) {
  std::string body = readData("extender_args_names.json");
  ASSERT_GT(body.size(), 1000u);
  size_t failures = 0;
  for (size_t cut = 0; cut < body.size(); cut += 37) {
    bool ok = decodeArgs(std::string_view(body).substr(0, cut));
    if (!ok) {
      ++failures;
      EXPECT_FALSE(d_.errorMessage().empty());
    }
  }
  EXPECT_EQ(failures, (body.size() + 36) / 37);  // no prefix of the body is a valid document
}

TEST_F(DecoderTest, DeepNestingInSkippedValueDoesNotCrash) {
  std::string deep = R"({"Pod":{},"NodeNames":["a"],"Skip":)" + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  bool ok = decodeArgs(deep);
  if (!ok) {
    EXPECT_FALSE(d_.errorMessage().empty());
  }
}

// A poor man's fuzzer that runs in every build (and under the sanitizers in CI): corrupted
// copies of real requests must decode or fail with a message, never crash or hang.
// Everything a decoded Node carries, compared by value.
void expectSameNode(const Node& a, const Node& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.resourceVersion, b.resourceVersion);
  auto kvs = [](const std::vector<KeyValue>& v) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const KeyValue& kv : v) out.emplace_back(kv.key, kv.value);
    return out;
  };
  EXPECT_EQ(kvs(a.labels), kvs(b.labels));
  EXPECT_EQ(kvs(a.annotations), kvs(b.annotations));
  EXPECT_EQ(a.unschedulable, b.unschedulable);
  ASSERT_EQ(a.taints.size(), b.taints.size());
  for (size_t i = 0; i < a.taints.size(); ++i) {
    EXPECT_EQ(a.taints[i].key, b.taints[i].key);
    EXPECT_EQ(a.taints[i].value, b.taints[i].value);
    EXPECT_EQ(a.taints[i].effect, b.taints[i].effect);
  }
  for (auto [x, y] : {std::pair{&a.capacity, &b.capacity}, std::pair{&a.allocatable, &b.allocatable}}) {
    EXPECT_EQ(x->milliCpu, y->milliCpu);
    EXPECT_EQ(x->memory, y->memory);
    EXPECT_EQ(x->ephemeralStorage, y->ephemeralStorage);
    EXPECT_EQ(x->pods, y->pods);
    ASSERT_EQ(x->scalar.size(), y->scalar.size());
    for (size_t i = 0; i < x->scalar.size(); ++i) {
      EXPECT_EQ(x->scalar[i].name, y->scalar[i].name);
      EXPECT_EQ(x->scalar[i].value, y->scalar[i].value);
    }
  }
  EXPECT_EQ(a.raw, b.raw);
}

std::string replaceOnce(std::string s, std::string_view from, std::string_view to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// A full-Nodes request whose node objects were all seen before is answered from the memo: the
// result must be what a fresh decode gives, whatever the order, the pod, or a changed node.
TEST(DecoderMemo, RepeatedNodesDecodeLikeAFreshDecoder) {
  Decoder plain;
  plain.setNodeMemo(false);
  ExtenderArgs first;
  PaddedBuffer file(readData("extender_args_nodes.json"));
  ASSERT_TRUE(plain.decodeExtenderArgs(file.view(), first)) << plain.errorMessage();
  ASSERT_EQ(first.nodes.size(), 3u);
  std::vector<std::string> n;
  for (const Node& x : first.nodes) n.emplace_back(x.raw);
  // A fourth node with an escaped annotation (decoded into the parser's string buffer).
  n.push_back(replaceOnce(replaceOnce(n[0], R"("name":"gpu-a")", R"("name":"gpu-d")"),
                          R"("node.alpha.kubernetes.io/ttl":"0")",
                          R"("node.alpha.kubernetes.io/ttl":"0","note":"say \"hi\" \u00e9")"));
  const std::string changed = replaceOnce(n[1], "NVIDIA-H100-80GB-HBM3", "NVIDIA-H200");
  const std::string pod = R"({"metadata":{"name":"p"},"spec":{"volumes":[{"name":"v","configMap":{"name":"c","items":[{"key":"k","path":"p"}]}}],"containers":[{"resources":{"requests":{"cpu":"1"}}}]}})";
  auto body = [&](std::vector<std::string> items, std::string_view tail = R"(,"NodeNames":null})") {
    std::string b = R"({"Pod":)" + pod + R"(,"Nodes":{"metadata":{},"items":[)";
    for (size_t i = 0; i < items.size(); ++i) b += (i ? "," : "") + items[i];
    return b + "]}" + std::string(tail);
  };
  struct Step {
    std::string body;
    size_t reused;
  };
  const Step steps[] = {
      {body({n[0], n[1], n[2], n[3]}), 0},
      {body({n[3], n[1], n[0]}), 3},                         // another order, a subset
      {body({n[0], changed}), 0},                            // one node changed: decoded in full
      {body({n[0], changed}), 2},                            // and remembered
      {body({n[1], n[2]}, R"(,"NodeNames":null,"Nodes":null})"), 0},   // a later key wins, as in Go
      {body({n[1], n[2]}, R"(,"NodeNames":["gpu-b"]})"), 0},          // NodeNames mode
      {body({n[2], n[0]}), 2},
  };
  Decoder memo;
  for (const Step& step : steps) {
    SCOPED_TRACE(step.body.substr(step.body.size() - 60));
    PaddedBuffer buf(step.body);
    ExtenderArgs got, want;
    ASSERT_TRUE(plain.decodeExtenderArgs(buf.view(), want)) << plain.errorMessage();
    ASSERT_TRUE(memo.decodeExtenderArgs(buf.view(), got)) << memo.errorMessage();
    EXPECT_EQ(memo.reusedNodes(), step.reused);
    EXPECT_EQ(got.mode(), want.mode());
    EXPECT_EQ(got.hasNodes, want.hasNodes);
    EXPECT_EQ(got.nodeNames, want.nodeNames);
    EXPECT_EQ(got.pod.name, "p");
    EXPECT_EQ(got.pod.requests.milliCpu, want.pod.requests.milliCpu);
    ASSERT_EQ(got.nodes.size(), want.nodes.size());
    for (size_t i = 0; i < got.nodes.size(); ++i) {
      expectSameNode(got.nodes[i], want.nodes[i]);
      // The echoed bytes are the request's own.
      EXPECT_GE(got.nodes[i].raw.data(), buf.view().data());
      EXPECT_LE(got.nodes[i].raw.data() + got.nodes[i].raw.size(), buf.view().data() + buf.view().size());
    }
  }
  EXPECT_EQ(plain.reusedNodes(), 0u);
}

TEST(Decoder, CorruptedRequestsNeverCrash) {
  const char* files[] = {"extender_args_names.json", "extender_args_nodes.json", "preemption_args_full.json"};
  const char bytes[] = {'"', '{', '}', '[', ']', ',', ':', '\\', '0', 'e', '-', 'n', ' ', '\xff', '\0'};
  uint64_t x = 0x243F6A8885A308D3ull;
  auto next = [&] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  Decoder d;
  ExtenderArgs args;
  PreemptionArgs pre;
  PaddedBuffer buf;
  size_t failures = 0, runs = 0;
  for (const char* f : files) {
    const std::string orig = readData(f);
    ASSERT_FALSE(orig.empty());
    for (int round = 0; round < 300; ++round) {
      std::string m = orig;
      int edits = 1 + static_cast<int>(next() % 4);
      for (int e = 0; e < edits; ++e) m[next() % m.size()] = bytes[next() % sizeof bytes];
      buf.assign(m);
      bool ok = std::string_view(f).starts_with("preemption") ? d.decodePreemptionArgs(buf.view(), pre)
                                                              : d.decodeExtenderArgs(buf.view(), args);
      ++runs;
      if (!ok) {
        ++failures;
        EXPECT_FALSE(d.errorMessage().empty());
      }
    }
  }
  EXPECT_GT(failures, runs / 4);  // most corruptions are caught
}

TEST(Decoder, OversizeInputIsTooLarge) {
  Decoder d(1024);
  std::string body = R"({"Pod":{},"NodeNames":[)";
  for (int i = 0; i < 200; ++i) body += "\"node-000\",";
  body += R"("x"]})";
  PaddedBuffer buf(body);
  ExtenderArgs args;
  EXPECT_FALSE(d.decodeExtenderArgs(buf.view(), args));
  EXPECT_EQ(d.error(), DecodeError::TooLarge);
  // The same decoder still serves small requests afterwards.
  PaddedBuffer small(R"({"Pod":{},"NodeNames":["a"]})");
  EXPECT_TRUE(d.decodeExtenderArgs(small.view(), args)) << d.errorMessage();
}

TEST_F(DecoderTest, Lease) {
  // As kube-apiserver returns it (managedFields and all); a released Lease has an empty holder.
  PaddedBuffer buf(R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"fleetsched",)"
                   R"("namespace":"kube-system","uid":"0b7c","resourceVersion":"4711","managedFields":[{"manager":"x"}]},)"
                   R"("spec":{"holderIdentity":"host-a_00ff","leaseDurationSeconds":15,)"
                   R"("acquireTime":"2026-12-06T06:10:38.123456Z","renewTime":"2026-12-06T06:11:02.000001Z",)"
                   R"("leaseTransitions":3}})");
  Lease l;
  ASSERT_TRUE(d_.decodeLease(buf.view(), l)) << d_.errorMessage();
  EXPECT_EQ(l.resourceVersion, "4711");
  EXPECT_EQ(l.holderIdentity, "host-a_00ff");
  EXPECT_EQ(l.leaseDurationSeconds, 15);
  EXPECT_EQ(l.acquireTime, "2026-12-06T06:10:38.123456Z");
  EXPECT_EQ(l.renewTime, "2026-12-06T06:11:02.000001Z");
  EXPECT_EQ(l.leaseTransitions, 3);
  buf.assign(R"({"metadata":{"resourceVersion":"9"},"spec":{"holderIdentity":null}})");
  ASSERT_TRUE(d_.decodeLease(buf.view(), l)) << d_.errorMessage();
  EXPECT_EQ(l.holderIdentity, "");
  EXPECT_EQ(l.leaseTransitions, 0);
  buf.assign(R"({"metadata":{"resourceVersion":"9"},"spec":{"leaseDurationSeconds":"15"}})");
  EXPECT_FALSE(d_.decodeLease(buf.view(), l));
  EXPECT_NE(d_.errorMessage().find("leaseDurationSeconds"), std::string::npos) << d_.errorMessage();
  buf.assign(R"({"spec":{"holderIdentity":"a"}})");
  EXPECT_FALSE(d_.decodeLease(buf.view(), l));
  EXPECT_NE(d_.errorMessage().find("resourceVersion"), std::string::npos) << d_.errorMessage();
}

}  // namespace
}  // namespace fleetsched::codec
