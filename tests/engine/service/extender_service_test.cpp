// The extender verbs end to end below HTTP: request bytes in, reply bytes out.
//
// Golden cases: tests/data/service/<verb>/<case>.request.json is answered against the cluster
// in tests/data/codec/{nodes,pods}.json and compared byte for byte with <case>.response.json
// (FLEETSCHED_UPDATE_GOLDENS=1 rewrites them; review the diff). The kube_scheduler_* requests
// are the bytes Go's json.Marshal produces for ExtenderArgs (tests/tools/goldens).
//
// Fleet cases: a generated 5,000-node fleet with bound pods (NodeNames mode, nodes file) and a
// 500-node full-Nodes request, checked against the generator's own bookkeeping.
#include "engine/service/extender_service.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cache/file_source.h"
#include "codec/encoder.h"
#include "codec/json_writer.h"
#include "plugins/config.h"
#include "tests/cache/fixtures.h"
#include "tests/engine/test_data.h"
#include "tools/fleet/fleet_gen.h"

namespace fleetsched::engine {
namespace {

namespace fs = std::filesystem;

using testdata::dataDir;
using testdata::readFile;

struct Answer {
  int status;
  std::string body;
};

class ServiceTest : public ::testing::Test {
 protected:
  void load(const std::string& nodes, const std::string& pods) {
    std::string error;
    ASSERT_TRUE(cache::loadClusterFiles(cache_, nodes, pods, error)) << error;
  }
  Answer call(Verb verb, const std::string& body) {
    std::string padded = body;
    padded.append(kBodyPadding, '\0');
    ExtenderRequest req;
    req.verb = verb;
    req.body = std::string_view(padded.data(), body.size());
    ExtenderRequest* batch[] = {&req};
    service_.handleBatch(batch);
    return {req.status, req.response.str()};
  }

  cache::Cache cache_;
  plugins::Config config_ = plugins::defaultConfig();
  Metrics metrics_;
  ExtenderService service_{cache_, config_, metrics_};
};

Verb verbOf(const std::string& name) {
  if (name == "filter") return Verb::Filter;
  if (name == "prioritize") return Verb::Prioritize;
  if (name == "preempt") return Verb::Preempt;
  return Verb::Bind;
}

TEST_F(ServiceTest, GoldenReplies) {
  load(dataDir() + "/codec/nodes.json", dataDir() + "/codec/pods.json");
  const bool update = std::getenv("FLEETSCHED_UPDATE_GOLDENS") != nullptr;
  int cases = 0;
  for (const char* verb : {"filter", "prioritize", "preempt", "bind"}) {
    fs::path dir = fs::path(dataDir()) / "service" / verb;
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::string file = entry.path().filename().string();
      const std::string suffix = ".request.json";
      if (file.size() <= suffix.size() || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
        continue;
      }
      fs::path golden = dir / (file.substr(0, file.size() - suffix.size()) + ".response.json");
      Answer a = call(verbOf(verb), readFile(entry.path()));
      ++cases;
      EXPECT_EQ(a.status, 200) << entry.path() << ": " << a.body;
      if (update) {
        std::ofstream(golden, std::ios::binary) << a.body;
        continue;
      }
      ASSERT_TRUE(fs::exists(golden)) << golden << " missing; run with FLEETSCHED_UPDATE_GOLDENS=1";
      EXPECT_EQ(a.body, readFile(golden)) << entry.path();
    }
  }
  EXPECT_GE(cases, 12);
}

// Defect 2 of issue 26: the namespace and name became URL path segments unescaped ('?'
// injected dryRun=All, "../" reached another API group, CR-LF names produced Events).
TEST_F(ServiceTest, BindRefusesNamesKubernetesCouldNotHold) {
  load(dataDir() + "/codec/nodes.json", dataDir() + "/codec/pods.json");
  const std::string bad[][2] = {
      {"ml?dryRun=All", "train-0"},
      {"../apis/events.k8s.io/v1/namespaces/ml", "train-0"},
      {"ml", "train-0\r\nX: y"},
      {"ml", "a/../b"},
      {"ml", ""},
      {"", "train-0"},
      {std::string(64, 'a'), "train-0"},
      {"ml", std::string(254, 'a')},
  };
  for (const auto& [ns, name] : bad) {
    std::string body;
    {
      codec::JsonWriter w(body);
      w.raw(R"({"PodName":)");
      w.string(name);
      w.raw(R"(,"PodNamespace":)");
      w.string(ns);
      w.raw(R"(,"PodUID":"u-1","Node":"gpu-a"})");
    }
    Answer a = call(Verb::Bind, body);
    EXPECT_EQ(a.status, 400) << body << ": " << a.body;
    EXPECT_NE(a.body.find("bind: invalid pod"), std::string::npos) << a.body;
    EXPECT_EQ(a.body.find('\r'), std::string::npos) << a.body;
  }
  // A valid name goes on to the binder (absent here).
  Answer a = call(Verb::Bind, R"({"PodName":"train-0.x","PodNamespace":"ml","PodUID":"u-1","Node":"gpu-a"})");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.body.find("does not bind here"), std::string::npos) << a.body;
}

TEST_F(ServiceTest, OneBatchAnswersLikeSeparateCalls) {
  load(dataDir() + "/codec/nodes.json", dataDir() + "/codec/pods.json");
  std::string a = readFile(fs::path(dataDir()) / "service/filter/gpu2_spot_tolerant.request.json");
  std::string b = readFile(fs::path(dataDir()) / "service/prioritize/kube_scheduler_names.request.json");
  Answer soloA = call(Verb::Filter, a);
  Answer soloB = call(Verb::Prioritize, b);
  std::string pa = a + std::string(kBodyPadding, '\0');
  std::string pb = b + std::string(kBodyPadding, '\0');
  ExtenderRequest r1, r2, r3;
  r1.verb = Verb::Filter;
  r1.body = std::string_view(pa.data(), a.size());
  r2.verb = Verb::Prioritize;
  r2.body = std::string_view(pb.data(), b.size());
  r3 = r1;
  ExtenderRequest* batch[] = {&r1, &r2, &r3};
  service_.handleBatch(batch);
  EXPECT_EQ(r1.response, soloA.body);
  EXPECT_EQ(r2.response, soloB.body);
  EXPECT_EQ(r3.response, soloA.body);
}

TEST_F(ServiceTest, UndecodableBodiesGet400WithTheReason) {
  load(dataDir() + "/codec/nodes.json", "");
  Answer a = call(Verb::Filter, R"({"Pod":3,"NodeNames":["gpu-a"]})");
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body.find("filter: Pod"), std::string::npos) << a.body;
  a = call(Verb::Prioritize, R"({"NodeNames":["gpu-a"]})");
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body.find("Pod"), std::string::npos) << a.body;
  a = call(Verb::Preempt, "{not json");
  EXPECT_EQ(a.status, 400);
  a = call(Verb::Bind, R"({"PodName":7})");
  EXPECT_EQ(a.status, 400);
  // The service is unharmed: the next good request is answered.
  a = call(Verb::Filter, readFile(fs::path(dataDir()) / "service/filter/gpu2_spot_tolerant.request.json"));
  EXPECT_EQ(a.status, 200);
  EXPECT_NE(a.body.find("\"NodeNames\":[\"gpu-a\""), std::string::npos) << a.body;
}

// The decoder takes its limit from ServiceOptions::maxBodyBytes (serve passes the HTTP limit, so
// the two cannot disagree): a body past it gets 413, one within it is decoded.
TEST_F(ServiceTest, DecoderLimitIsTheServiceOption) {
  load(dataDir() + "/codec/nodes.json", "");
  const std::string body = readFile(fs::path(dataDir()) / "service/filter/gpu2_spot_tolerant.request.json");
  Metrics metrics;
  ServiceOptions options;
  options.maxBodyBytes = body.size() - 1;
  ExtenderService small(cache_, config_, metrics, options);
  std::string padded = body + std::string(kBodyPadding, '\0');
  ExtenderRequest req;
  req.verb = Verb::Filter;
  req.body = std::string_view(padded.data(), body.size());
  ExtenderRequest* batch[] = {&req};
  small.handleBatch(batch);
  EXPECT_EQ(req.status, 413) << req.response.str();
  EXPECT_EQ(call(Verb::Filter, body).status, 200);  // the default, 64 MiB
  EXPECT_EQ(ServiceOptions{}.maxBodyBytes, size_t{64} << 20);
}

// gpu-a (8 GPUs) holds three low-priority pods: 4 GPUs on 0-3, 2 on 4-5, 2 on 6-7.
const char* kPreemptPods = R"({"apiVersion":"v1","kind":"List","items":[
{"metadata":{"name":"big","namespace":"ml","uid":"uid-big","annotations":{"fleetsched.io/gpu-index":"0-1-2-3"}},
 "spec":{"nodeName":"gpu-a","priority":30,"containers":[{"name":"c","resources":{"requests":{"cpu":"1","nvidia.com/gpu":"4"}}}]},
 "status":{"phase":"Running"}},
{"metadata":{"name":"mid","namespace":"ml","uid":"uid-mid","annotations":{"fleetsched.io/gpu-index":"4-5"}},
 "spec":{"nodeName":"gpu-a","priority":20,"containers":[{"name":"c","resources":{"requests":{"cpu":"1","nvidia.com/gpu":"2"}}}]},
 "status":{"phase":"Running"}},
{"metadata":{"name":"low","namespace":"ml","uid":"uid-low","annotations":{"fleetsched.io/gpu-index":"6-7"}},
 "spec":{"nodeName":"gpu-a","priority":10,"containers":[{"name":"c","resources":{"requests":{"cpu":"1","nvidia.com/gpu":"2"}}}]},
 "status":{"phase":"Running"}}]})";

std::string preemptBody(int gpus, const char* victims) {
  return std::string(R"({"Pod":{"metadata":{"name":"urgent","namespace":"ml","uid":"uid-urgent"},"spec":{"priority":1000,)"
                     R"("containers":[{"name":"c","resources":{"requests":{"cpu":"1","nvidia.com/gpu":")") +
         std::to_string(gpus) + R"("}}}]}},"NodeNameToVictims":null,"NodeNameToMetaVictims":)" + victims + "}";
}

TEST_F(ServiceTest, PreemptKeepsOnlyTheVictimsWhoseGpusThePodNeeds) {
  fs::path pods = fs::temp_directory_path() / ("fleetsched-preempt-" + std::to_string(::getpid()) + ".json");
  std::ofstream(pods) << kPreemptPods;
  load(dataDir() + "/codec/nodes.json", pods.string());
  fs::remove(pods);
  const char* all = R"({"gpu-a":{"Pods":[{"UID":"uid-big"},{"UID":"uid-mid"},{"UID":"uid-low"}],"NumPDBViolations":0}})";

  // 4 GPUs: evicting the two lowest-priority pods frees 6-7 and 4-5; "big" stays.
  Answer a = call(Verb::Preempt, preemptBody(4, all));
  EXPECT_EQ(a.body, R"({"NodeNameToMetaVictims":{"gpu-a":{"Pods":[{"UID":"uid-mid"},{"UID":"uid-low"}],"NumPDBViolations":0}}})");
  // 2 GPUs: the lowest-priority pod is enough.
  a = call(Verb::Preempt, preemptBody(2, all));
  EXPECT_EQ(a.body, R"({"NodeNameToMetaVictims":{"gpu-a":{"Pods":[{"UID":"uid-low"}],"NumPDBViolations":0}}})");
  // 8 GPUs need all three.
  a = call(Verb::Preempt, preemptBody(8, all));
  EXPECT_EQ(a.body, R"({"NodeNameToMetaVictims":{"gpu-a":{"Pods":[{"UID":"uid-big"},{"UID":"uid-mid"},{"UID":"uid-low"}],"NumPDBViolations":0}}})");
  // Evicting "low" alone cannot make room for 4 GPUs: the node is dropped.
  a = call(Verb::Preempt, preemptBody(4, R"({"gpu-a":{"Pods":[{"UID":"uid-low"}],"NumPDBViolations":0}})"));
  EXPECT_EQ(a.body, R"({"NodeNameToMetaVictims":{}})");
  // A node fleetsched does not know passes unchanged.
  a = call(Verb::Preempt, preemptBody(4, R"({"elsewhere":{"Pods":[{"UID":"x"}],"NumPDBViolations":1}})"));
  EXPECT_EQ(a.body, R"({"NodeNameToMetaVictims":{"elsewhere":{"Pods":[{"UID":"x"}],"NumPDBViolations":1}}})");
}

// ---- the generated fleet ----

struct FleetFiles {
  fs::path dir;
  tools::fleet::FleetGenerator fleet;
  tools::fleet::PodGenerator bound;
  std::map<std::string, int> gpusUsed;  // node → GPUs held by bound pods
  ~FleetFiles() { fs::remove_all(dir); }
};

std::unique_ptr<FleetFiles> makeFleet(size_t nodes, size_t boundPods) {
  tools::fleet::FleetOptions fo;
  fo.nodes = nodes;
  fo.seed = 11;
  tools::fleet::PodOptions po;
  po.pods = boundPods;
  po.seed = 12;
  po.namePrefix = "bound-";
  auto f = std::unique_ptr<FleetFiles>(new FleetFiles{
      fs::temp_directory_path() / ("fleetsched-svc-" + std::to_string(::getpid()) + "-" + std::to_string(nodes)),
      tools::fleet::FleetGenerator(fo), tools::fleet::PodGenerator(po), {}});
  fs::create_directories(f->dir);
  f->bound.bindToFleet(f->fleet);
  for (size_t i = 0; i < f->bound.size(); ++i) {
    const auto& p = f->bound.summary(i);
    if (!p.nodeName.empty()) f->gpusUsed[p.nodeName] += p.gpus;
  }
  std::FILE* n = std::fopen((f->dir / "nodes.json").c_str(), "w");
  tools::fleet::writeNodeList(n, f->fleet, tools::fleet::JsonValue::Style::kKubectl);
  std::fclose(n);
  std::FILE* p = std::fopen((f->dir / "pods.json").c_str(), "w");
  tools::fleet::writePodList(p, f->bound, tools::fleet::JsonValue::Style::kKubectl, /*onlyBound=*/true);
  std::fclose(p);
  return f;
}

// The generated pod mix of `count` pods drawn from `seed`.
tools::fleet::PodGenerator podMix(size_t count, uint64_t seed) {
  tools::fleet::PodOptions po;
  po.pods = count;
  po.seed = seed;
  return tools::fleet::PodGenerator(po);
}

// The NodeNames a filter reply kept, in reply order.
std::vector<std::string> keptNames(std::string_view filterReply) {
  simdjson::dom::parser parser;
  std::vector<std::string> kept;
  for (auto n : parser.parse(std::string(filterReply))["NodeNames"].get_array()) kept.emplace_back(n.get_string().value());
  return kept;
}

// A pending 2-GPU pod that does not tolerate spot.
std::string twoGpuPod() {
  tools::fleet::PodGenerator pods = podMix(200, 99);
  for (size_t i = 0; i < pods.size(); ++i) {
    const auto& s = pods.summary(i);
    if (s.kind == tools::fleet::PodKind::kGpu2 && !s.spotTolerant) return pods.podWire(i);
  }
  ADD_FAILURE() << "no 2-GPU pod in the generated mix";
  return {};
}

TEST_F(ServiceTest, FiveThousandNodeNamesFilterThenPrioritize) {
  auto f = makeFleet(5000, 8000);
  load((f->dir / "nodes.json").string(), (f->dir / "pods.json").string());
  std::vector<std::string> names;
  for (const auto& s : f->fleet.summaries()) names.push_back(s.name);
  names.push_back("not-a-node");
  std::string body;
  tools::fleet::appendNodeNamesArgs(body, twoGpuPod(), names);

  Answer filtered = call(Verb::Filter, body);
  ASSERT_EQ(filtered.status, 200);
  simdjson::dom::parser parser;
  simdjson::dom::element r = parser.parse(filtered.body);
  ASSERT_TRUE(r["Nodes"].is_null()) << "NodeNames mode must answer NodeNames";
  std::set<std::string> passing;
  for (auto n : r["NodeNames"].get_array()) passing.insert(std::string(n.get_string().value()));
  size_t failed = 0;
  for (const char* key : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    for (auto field : r[key].get_object()) {
      ++failed;
      EXPECT_FALSE(field.value.get_string().value().empty());
    }
  }
  EXPECT_EQ(passing.size() + failed, names.size());
  EXPECT_EQ(std::string(r["FailedNodes"]["not-a-node"].get_string().value()), "node not found in fleetsched's cache");
  EXPECT_GT(passing.size(), 100u);

  // Every node the generator's own bookkeeping says fits must pass, and nothing else.
  size_t expected = 0;
  for (const auto& s : f->fleet.summaries()) {
    int freeGpus = s.gpuCount - f->gpusUsed[s.name];
    // Cordoned nodes are kube-scheduler's NodeUnschedulable plugin's business, not ours.
    bool fits = s.gpu != nullptr && freeGpus >= 2 && s.capacityType == tools::fleet::CapacityType::kOnDemand;
    if (fits) ++expected;
    if (!fits) {
      EXPECT_EQ(passing.count(s.name), 0u) << s.name << " free " << freeGpus;
    }
  }
  // Nodes may still fail on CPU/memory left by the bound pods, so passing ≤ expected.
  EXPECT_LE(passing.size(), expected);
  EXPECT_GE(passing.size(), expected * 9 / 10);

  Answer scored = call(Verb::Prioritize, body);
  ASSERT_EQ(scored.status, 200);
  simdjson::dom::element list = parser.parse(scored.body);
  // Only scores above 0 are listed (kube-scheduler adds nothing for an unlisted node), each host
  // once, and only hosts the filter accepted.
  std::set<std::string> listed;
  size_t tens = 0;
  for (auto hp : list.get_array()) {
    int64_t score = hp["Score"].get_int64().value();
    EXPECT_GE(score, 1);
    EXPECT_LE(score, 10);
    std::string host(hp["Host"].get_string().value());
    EXPECT_TRUE(passing.count(host)) << host << " is not feasible but scored";
    EXPECT_TRUE(listed.insert(host).second) << host << " listed twice";
    if (score == 10) ++tens;
  }
  EXPECT_GE(listed.size(), 1u);
  EXPECT_LE(listed.size(), passing.size());
  EXPECT_GE(tens, 1u);
}

// kube-scheduler sends an empty list when its own filters left no node: every verb still answers
// (the column filter once handed memchr the null data of an empty span; UBSan caught it).
TEST_F(ServiceTest, EmptyNodeNamesListsGetEmptyReplies) {
  auto f = makeFleet(50, 20);
  load((f->dir / "nodes.json").string(), (f->dir / "pods.json").string());
  std::string body;
  tools::fleet::appendNodeNamesArgs(body, twoGpuPod(), {});
  Answer filtered = call(Verb::Filter, body);
  ASSERT_EQ(filtered.status, 200);
  EXPECT_NE(filtered.body.find("\"NodeNames\":[]"), std::string::npos) << filtered.body;
  Answer scored = call(Verb::Prioritize, body);
  ASSERT_EQ(scored.status, 200);
  EXPECT_EQ(scored.body, "[]");
}

TEST_F(ServiceTest, FiveHundredFullNodesEchoTheInputObjects) {
  auto f = makeFleet(500, 0);
  std::vector<std::string> wires;
  for (size_t i = 0; i < f->fleet.size(); ++i) wires.push_back(f->fleet.nodeWire(i));
  std::string body;
  tools::fleet::appendFullNodesArgs(body, twoGpuPod(), wires);
  EXPECT_GT(body.size(), 500u * 10 * 1024);

  Answer filtered = call(Verb::Filter, body);
  ASSERT_EQ(filtered.status, 200);
  simdjson::dom::parser parser;
  simdjson::dom::element r = parser.parse(filtered.body);
  ASSERT_TRUE(r["NodeNames"].is_null()) << "full-Nodes mode must answer Nodes";
  size_t passing = 0;
  for (auto item : r["Nodes"]["items"].get_array()) {
    (void)item;
    ++passing;
  }
  // Byte-exact echo: each returned item is one of the input objects, verbatim.
  size_t found = 0;
  for (const auto& w : wires) {
    if (filtered.body.find(w) != std::string::npos) ++found;
  }
  EXPECT_EQ(found, passing);
  size_t failed = 0;
  for (const char* key : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    for (auto field : r[key].get_object()) {
      (void)field;
      ++failed;
    }
  }
  EXPECT_EQ(passing + failed, wires.size());
  EXPECT_GT(passing, 20u);
}

// Defect 6 of issue 26: the decoder skips fields it does not read (counting brackets only)
// and full-Nodes replies echo each node's bytes, so garbage inside a skipped field came back in
// a 200 that was not JSON. Now such a request is either refused or answered with valid JSON.
TEST_F(ServiceTest, GarbageInsideSkippedNodeFieldsNeverEchoesInvalidJson) {
  auto f = makeFleet(50, 0);
  const std::string garbage[] = {
      R"("managedFields":[{"manager" "kubelet", "x": tru}],)",
      R"("managedFields":[{"a":1,,}],)",
      R"("managedFields":{"k":[1 2 3]},)",
      R"("managedFields":[nul],)",
  };
  for (const std::string& g : garbage) {
    std::vector<std::string> wires;
    for (size_t i = 0; i < f->fleet.size(); ++i) {
      std::string w = f->fleet.nodeWire(i);
      const size_t meta = w.find(R"("metadata":{)");
      ASSERT_NE(meta, std::string::npos);
      w.insert(meta + 12, g);
      wires.push_back(std::move(w));
    }
    std::string body;
    tools::fleet::appendFullNodesArgs(body, twoGpuPod(), wires);
    for (int round = 0; round < 2; ++round) {  // the second time, from the decoder's memo if anywhere
      Answer a = call(Verb::Filter, body);
      if (a.status == 200) {
        simdjson::dom::parser parser;
        EXPECT_EQ(parser.parse(a.body).error(), simdjson::SUCCESS) << g << ": 200 with invalid JSON";
      } else {
        EXPECT_EQ(a.status, 400) << a.body;
        EXPECT_NE(a.body.find("invalid JSON inside the node object"), std::string::npos) << a.body;
      }
    }
  }
  // Valid nodes are still echoed.
  std::vector<std::string> wires;
  for (size_t i = 0; i < f->fleet.size(); ++i) wires.push_back(f->fleet.nodeWire(i));
  std::string body;
  tools::fleet::appendFullNodesArgs(body, twoGpuPod(), wires);
  Answer a = call(Verb::Filter, body);
  ASSERT_EQ(a.status, 200) << a.body;
  simdjson::dom::parser parser;
  EXPECT_EQ(parser.parse(a.body).error(), simdjson::SUCCESS);
}

// NodeNames-mode replies come from per-node-set tables and full-Nodes ones partly from the
// decoder's memo; each answer must be what a service that has seen nothing before gives for the
// same request and cluster.
class FastPathTest : public ServiceTest {
 protected:
  // The gpu2 pod of the golden cases with `names` as NodeNames (JSON-escaped here).
  static std::string gpu2Body(const std::vector<std::string>& names) {
    std::string body = R"({"Pod":{"metadata":{"name":"gpu2","namespace":"ml","uid":"u-gpu2",)"
                       R"("annotations":{"fleetsched.io/spot-tolerant":"true"}},"spec":{"containers":[{"name":"c",)"
                       R"("resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"cpu":"8","memory":"32Gi",)"
                       R"("nvidia.com/gpu":"2"}}}]}},"Nodes":null,"NodeNames":[)";
    {
      codec::JsonWriter w(body);
      for (size_t i = 0; i < names.size(); ++i) {
        if (i != 0) w.ch(',');
        w.string(names[i]);
      }
    }
    return body + "]}";
  }
  // Loads a generated fleet's files into the cache; returns its node names in file order.
  std::vector<std::string> loadFleet(const FleetFiles& f) {
    load((f.dir / "nodes.json").string(), (f.dir / "pods.json").string());
    std::vector<std::string> names;
    for (const auto& n : f.fleet.summaries()) names.push_back(n.name);
    return names;
  }
  Answer fresh(Verb verb, const std::string& body) {
    Metrics metrics;
    ExtenderService service(cache_, config_, metrics);
    std::string padded = body + std::string(kBodyPadding, '\0');
    ExtenderRequest req;
    req.verb = verb;
    req.body = std::string_view(padded.data(), body.size());
    ExtenderRequest* batch[] = {&req};
    service.handleBatch(batch);
    return {req.status, req.response.str()};
  }
  void expectLikeFresh(const std::string& body, const std::string& step) {
    for (Verb verb : {Verb::Filter, Verb::Prioritize}) {
      Answer a = call(verb, body);
      Answer b = fresh(verb, body);
      EXPECT_EQ(a.status, 200) << step;
      EXPECT_EQ(a.body, b.body) << step << " " << verbName(verb);
    }
  }
  cache::testing::Strings strings_;
};

// Full-Nodes requests whose node objects were decoded before are answered from the decoder's
// memo: byte for byte what a fresh service answers, also after a node object changes.
TEST_F(FastPathTest, RepeatedFullNodesAnswerLikeAFreshService) {
  auto f = makeFleet(40, 0);
  std::vector<std::string> wires;
  for (size_t i = 0; i < f->fleet.size(); ++i) wires.push_back(f->fleet.nodeWire(i));
  std::string body;
  tools::fleet::appendFullNodesArgs(body, twoGpuPod(), wires);
  expectLikeFresh(body, "first");
  expectLikeFresh(body, "repeated");
  Counter& reused = metrics_.counter("full_nodes_reused_total", "");
  EXPECT_EQ(reused.value(), 3u * wires.size());  // all but the first filter

  // One node loses its GPUs: that request is decoded in full, with the new object.
  const std::string gpus = R"("nvidia.com/gpu":")";
  size_t node = 0;
  while (node < wires.size() && wires[node].find(gpus) == std::string::npos) ++node;
  ASSERT_LT(node, wires.size());
  size_t at = wires[node].rfind(gpus) + gpus.size();
  wires[node].replace(at, wires[node].find('"', at) - at, "0");
  std::string changed;
  tools::fleet::appendFullNodesArgs(changed, twoGpuPod(), wires);
  const uint64_t before = reused.value();
  Answer a = call(Verb::Filter, changed);
  EXPECT_EQ(a.body, fresh(Verb::Filter, changed).body);
  EXPECT_EQ(reused.value(), before);
  expectLikeFresh(changed, "changed, repeated");
  EXPECT_EQ(reused.value(), before + 2u * wires.size());
}

TEST_F(FastPathTest, RepeatedListFollowsNodesAddedAndDeleted) {
  load(dataDir() + "/codec/nodes.json", dataDir() + "/codec/pods.json");
  const std::string body = gpu2Body({"gpu-a", "gpu-b", "cpu-1", "ghost"});
  expectLikeFresh(body, "first");
  expectLikeFresh(body, "repeated");
  // As kube-scheduler calls them: filter with every candidate, prioritize with what it kept.
  Answer filtered = call(Verb::Filter, body);
  const std::vector<std::string> kept = keptNames(filtered.body);
  ASSERT_GE(kept.size(), 1u);
  const std::string fewer = gpu2Body(kept);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(call(Verb::Prioritize, fewer).body, fresh(Verb::Prioritize, fewer).body);
    EXPECT_EQ(call(Verb::Filter, body).body, fresh(Verb::Filter, body).body);
  }

  ASSERT_TRUE(cache_.deleteNode("gpu-b"));
  Answer gone = call(Verb::Filter, body);
  EXPECT_NE(gone.body.find(R"("gpu-b":"node not found in fleetsched's cache")"), std::string::npos) << gone.body;
  expectLikeFresh(body, "after delete");

  // A node named like an unknown one appears: the same list now resolves it.
  cache_.upsertNode(cache::testing::NodeMaker(strings_, "ghost").gpus(8).build());
  Answer found = call(Verb::Filter, body);
  EXPECT_EQ(found.body.find(R"("ghost":)"), std::string::npos) << found.body;
  EXPECT_NE(found.body.find(R"("ghost"])"), std::string::npos) << found.body;
  expectLikeFresh(body, "after add");

  // Pod events publish new snapshots without touching the node set.
  cache_.upsertPod(cache::testing::PodMaker(strings_, "p-ghost").on("ghost").cpu(1000).gpus(7).build());
  expectLikeFresh(body, "after a pod event");

  // Same length, one name different; then a shorter list.
  expectLikeFresh(gpu2Body({"gpu-a", "gpu-x", "cpu-1", "ghost"}), "one name changed");
  expectLikeFresh(gpu2Body({"gpu-a", "ghost"}), "shorter");
  expectLikeFresh(gpu2Body({"gpu-a", "ghost", "cpu-1", "ghost"}), "duplicate");

  // Same names, other bytes (blanks, an escaped letter).
  std::string spaced = gpu2Body({"gpu-a", "ghost", "cpu-1", "ghost"});
  spaced.replace(spaced.find(R"(["gpu-a")"), 8, R"([ "gpu-\u0061" )");
  expectLikeFresh(spaced, "same names, other bytes");
  // A list that is not the last key, and a lower-case key: parsed in full, same answer.
  std::string reordered = gpu2Body({"gpu-a", "ghost"});
  reordered.insert(reordered.size() - 1, R"(,"X":1)");
  expectLikeFresh(reordered, "list not last");
  std::string lower = gpu2Body({"gpu-a", "cpu-1"});
  lower.replace(lower.find("NodeNames"), 9, "nodenames");
  expectLikeFresh(lower, "lower-case key");
  expectLikeFresh(lower, "lower-case key again");
  // The same list bytes behind a later duplicate key that Go would take instead.
  std::string twice = gpu2Body({"gpu-a", "cpu-1"});
  twice.insert(twice.find(R"("Nodes":null)"), R"("NodeNames":["gpu-b"],)");
  expectLikeFresh(twice, "duplicate key");
}

// Pods in flight at once (several schedulers, a load generator's connections): filter A,
// filter B, ..., then prioritize A, B, ... Each prioritize answers as a fresh service would.
TEST_F(FastPathTest, InterleavedPodsFindTheListTheirFilterKept) {
  auto f = makeFleet(300, 200);
  std::vector<std::string> names = loadFleet(*f);
  tools::fleet::PodGenerator pods = podMix(40, 7);
  // One pod of each kind and spot tolerance first (they keep different nodes), then the rest.
  std::vector<size_t> order;
  std::set<std::pair<int, bool>> kinds;
  for (size_t i = 0; i < pods.size(); ++i) {
    const auto& p = pods.summary(i);
    if (kinds.insert({static_cast<int>(p.kind), p.spotTolerant}).second) order.push_back(i);
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
  }
  for (size_t inFlight : {size_t{4}, size_t{12}}) {
    std::vector<std::string> prioritizeBodies;
    std::set<std::string> distinct;
    for (size_t i = 0; i < inFlight; ++i) {
      std::string body;
      tools::fleet::appendNodeNamesArgs(body, pods.podWire(order[i]), names);
      Answer filtered = call(Verb::Filter, body);
      ASSERT_EQ(filtered.status, 200);
      const std::vector<std::string> kept = keptNames(filtered.body);
      std::string next;
      tools::fleet::appendNodeNamesArgs(next, pods.podWire(order[i]), kept);
      prioritizeBodies.push_back(next);
      distinct.insert(next.substr(next.find(R"("NodeNames")")));
    }
    ASSERT_GT(distinct.size(), 2u) << "the pod mix should keep different nodes";
    for (size_t i = 0; i < inFlight; ++i) {
      EXPECT_EQ(call(Verb::Prioritize, prioritizeBodies[i]).body, fresh(Verb::Prioritize, prioritizeBodies[i]).body)
          << "pod " << i << " of " << inFlight;
    }
  }
}

// Prioritize filters what it is sent again: after a pod event between a pod's filter and its
// prioritize, or for another pod sending that list, it scores only nodes that still fit.
TEST_F(FastPathTest, PrioritizeScoresOnlyNodesThatStillFit) {
  auto f = makeFleet(300, 200);
  std::vector<std::string> names = loadFleet(*f);
  tools::fleet::PodGenerator pods = podMix(200, 99);
  std::string eightGpus;
  for (size_t i = 0; i < pods.size() && eightGpus.empty(); ++i) {
    if (pods.summary(i).kind == tools::fleet::PodKind::kGpu8) eightGpus = pods.podWire(i);
  }
  ASSERT_FALSE(eightGpus.empty());
  // The filter for the 2-GPU pod, and the prioritize body of what it kept.
  auto filterTwoGpus = [&](std::vector<std::string>& kept) {
    std::string body;
    tools::fleet::appendNodeNamesArgs(body, twoGpuPod(), names);
    Answer a = call(Verb::Filter, body);
    kept = keptNames(a.body);
    std::string next;
    tools::fleet::appendNodeNamesArgs(next, twoGpuPod(), kept);
    return next;
  };
  std::vector<std::string> kept;
  std::string body = filterTwoGpus(kept);
  ASSERT_GT(kept.size(), 10u);
  EXPECT_EQ(call(Verb::Prioritize, body).body, fresh(Verb::Prioritize, body).body);

  // A pod event between filter and prioritize: the node it fills must not be scored.
  body = filterTwoGpus(kept);
  const std::string& filled = kept.front();
  int free = 0;
  for (const auto& n : f->fleet.summaries()) {
    if (n.name == filled) free = n.gpuCount - f->gpusUsed[filled];
  }
  ASSERT_GT(free, 0);
  cache_.upsertPod(cache::testing::PodMaker(strings_, "fills-" + filled).on(filled).gpus(free).build());
  Answer a = call(Verb::Prioritize, body);
  EXPECT_EQ(a.body, fresh(Verb::Prioritize, body).body);
  EXPECT_EQ(a.body.find("\"" + filled + "\""), std::string::npos) << a.body;

  // Another pod sends the list the 2-GPU pod's filter kept: it is filtered for what it needs.
  body = filterTwoGpus(kept);
  std::string other;
  tools::fleet::appendNodeNamesArgs(other, eightGpus, kept);
  EXPECT_EQ(call(Verb::Prioritize, other).body, fresh(Verb::Prioritize, other).body);

  // The same pod asking for 8 GPUs instead of 2: a body of the same length around the same list,
  // whose bytes differ. It is filtered again, so nodes without 8 free GPUs are not scored.
  body = filterTwoGpus(kept);
  std::string sameLength = body;
  for (size_t at = 0; (at = sameLength.find(R"("nvidia.com/gpu":"2")", at)) != std::string::npos; ++at) {
    sameLength[at + std::string_view(R"("nvidia.com/gpu":")").size()] = '8';
  }
  ASSERT_NE(sameLength, body);
  ASSERT_EQ(sameLength.size(), body.size());
  EXPECT_EQ(call(Verb::Prioritize, sameLength).body, fresh(Verb::Prioritize, sameLength).body);

  // Two pods of one shape keep the same nodes, filtered one after the other (pods in flight at
  // once): each prioritize answers for its own pod.
  std::vector<std::string> twins;
  for (size_t i = 0; i < pods.size() && twins.size() < 2; ++i) {
    const auto& p = pods.summary(i);
    if (p.kind == tools::fleet::PodKind::kGpu2 && !p.spotTolerant) twins.push_back(pods.podWire(i));
  }
  ASSERT_EQ(twins.size(), 2u);
  std::vector<std::string> lists[2];
  std::string prioritizeBodies[2];
  for (int t = 0; t < 2; ++t) {
    std::string filterBody;
    tools::fleet::appendNodeNamesArgs(filterBody, twins[t], names);
    lists[t] = keptNames(call(Verb::Filter, filterBody).body);
    tools::fleet::appendNodeNamesArgs(prioritizeBodies[t], twins[t], lists[t]);
  }
  ASSERT_EQ(lists[0], lists[1]);
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(call(Verb::Prioritize, prioritizeBodies[t]).body, fresh(Verb::Prioritize, prioritizeBodies[t]).body);
  }
}

// The node columns follow pod events chunk by chunk: after each event the answers equal a
// fresh service's, whose columns are built from scratch, for nodes in changed chunks and not.
TEST_F(FastPathTest, NodeColumnsFollowPodEventsChunkByChunk) {
  auto f = makeFleet(300, 200);  // five chunks of 64 ids
  std::vector<std::string> names = loadFleet(*f);
  std::string body;
  tools::fleet::appendNodeNamesArgs(body, twoGpuPod(), names);
  expectLikeFresh(body, "first");
  // Fill whole nodes' GPUs one node at a time, in the first and the last chunk, then free one.
  std::vector<std::string> placed;
  for (size_t i : {size_t{3}, size_t{290}, size_t{5}}) {
    const auto& node = f->fleet.summaries()[i];
    const int free = node.gpuCount - f->gpusUsed[node.name];
    if (free <= 0) continue;
    const std::string uid = "churn-" + std::to_string(i);
    cache_.upsertPod(cache::testing::PodMaker(strings_, uid).on(node.name).gpus(free).build());
    placed.push_back(uid);
    expectLikeFresh(body, "after filling " + node.name);
  }
  ASSERT_FALSE(placed.empty());
  ASSERT_TRUE(cache_.deletePod(placed.front()));
  expectLikeFresh(body, "after freeing " + placed.front());
  // A node leaves and another joins the last chunk: ids are reused, rows must not linger.
  ASSERT_TRUE(cache_.deleteNode(names[299]));
  expectLikeFresh(body, "after a node left");
  cache_.upsertNode(cache::testing::NodeMaker(strings_, "late-joiner").gpus(8).build());
  names.push_back("late-joiner");
  body.clear();
  tools::fleet::appendNodeNamesArgs(body, twoGpuPod(), names);
  expectLikeFresh(body, "after a node joined");
}

// A NodeNames filter reply as Go writes it, from its values: the failed maps are std::maps, so
// keys are sorted bytewise (std::string compares as unsigned char) and held once (last wins).
struct GoFilterReply {
  std::vector<std::string> nodeNames;
  std::map<std::string, std::string> failed[2];  // FailedNodes, FailedAndUnresolvableNodes

  std::string encode() const {
    std::string out;
    codec::JsonWriter w(out);
    w.raw(R"({"Nodes":null,"NodeNames":[)");
    for (size_t i = 0; i < nodeNames.size(); ++i) {
      if (i != 0) w.ch(',');
      w.string(nodeNames[i]);
    }
    w.raw("],");
    for (int m = 0; m < 2; ++m) {
      w.raw(m == 0 ? R"("FailedNodes":{)" : R"(,"FailedAndUnresolvableNodes":{)");
      bool first = true;
      for (const auto& [name, reason] : failed[m]) {
        if (!first) w.ch(',');
        first = false;
        w.string(name);
        w.ch(':');
        w.string(reason);
      }
      w.ch('}');
    }
    w.raw(R"(,"Error":""})");
    w.finish();
    return out;
  }
};

// The filter reply decoded and written again as Go would: what the encoder must have written.
// Returns the distinct reasons seen.
std::set<std::string> expectLikeGo(const std::string& reply, size_t nodes) {
  simdjson::dom::parser parser;
  simdjson::dom::element r = parser.parse(reply);
  GoFilterReply ref;
  std::set<std::string> reasons;
  for (auto n : r["NodeNames"].get_array()) ref.nodeNames.emplace_back(n.get_string().value());
  int m = 0;
  for (const char* key : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    for (auto field : r[key].get_object()) {
      ref.failed[m][std::string(field.key)] = field.value.get_string().value();
      reasons.insert(std::string(field.value.get_string().value()));
    }
    ++m;
  }
  EXPECT_EQ(ref.nodeNames.size() + ref.failed[0].size() + ref.failed[1].size(), nodes);
  EXPECT_EQ(reply, ref.encode());
  return reasons;
}

// Each distinct failure is a one-byte code per node in NodeNames filters; past 254 of them in
// one reply the service numbers failures per node instead. Both must write what Go would, also for reasons
// that need escaping ('<' is \u003c on the wire).
TEST_F(FastPathTest, ManyDistinctEscapedReasonsMatchGo) {
  for (int count : {40, 300}) {
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
      const std::string name = "mem" + std::to_string(count) + "-" + std::to_string(i);
      cache_.upsertNode(cache::testing::NodeMaker(strings_, name)
                            .gpus(8)
                            .label("nvidia.com/gpu.memory", std::to_string(1000 + i * (count == 40 ? 40 : 4)))
                            .build());
      names.push_back(name);
    }
    names.push_back("ghost");
    std::string body = gpu2Body(names);
    body.replace(body.find(R"("annotations":{)"), 15, R"("annotations":{"fleetsched.io/gpu-min-memory":"2500",)");
    Answer a = call(Verb::Filter, body);
    ASSERT_EQ(a.status, 200);
    const std::string first = "mem" + std::to_string(count) + "-0";
    EXPECT_NE(a.body.find("\"" + first + R"(":"GPU memory 1000 MiB \u003c required 2500 MiB")"), std::string::npos)
        << a.body;
    const std::set<std::string> reasons = expectLikeGo(a.body, names.size());
    EXPECT_GT(reasons.size(), count == 40 ? 16u : 256u);
    expectLikeFresh(body, "distinct reasons " + std::to_string(count));
  }
}

// A pod of a resource the rows do not describe (a MIG profile) is judged by the plugins' Filter;
// its NodeNames reply is still the one Go would write.
TEST_F(FastPathTest, PodsTheRowsCannotJudgeGetTheSameReply) {
  std::string error;
  auto config = plugins::loadConfig(
      "apiVersion: fleetsched.io/v1alpha1\nkind: FleetschedConfiguration\nprofiles:\n- name: mig\n  plugins:\n"
      "  - {name: GPU, weight: 10}\n  - {name: Spot, weight: 5}\n  pluginConfig:\n  - name: GPU\n"
      "    args: {resourceNames: [nvidia.com/gpu, nvidia.com/mig-]}\n",
      error);
  ASSERT_TRUE(config) << error;
  Metrics metrics;
  ExtenderService service(cache_, *config, metrics);
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) {
    const std::string name = "mig-" + std::to_string(i);
    cache::testing::NodeMaker n(strings_, name);
    n.gpus(8);
    if (i % 3 != 0) n.scalar("nvidia.com/mig-1g.10gb", i % 3 == 1 ? 7 : 1);
    if (i % 4 == 0) n.label("karpenter.sh/capacity-type", "spot");
    cache_.upsertNode(n.build());
    names.push_back(name);
  }
  names.push_back("ghost");
  std::string body = R"({"Pod":{"metadata":{"name":"mig2","namespace":"ml","uid":"u-mig2"},"spec":{"containers":[)"
                     R"({"name":"c","resources":{"limits":{"nvidia.com/mig-1g.10gb":"2"},"requests":{"cpu":"1",)"
                     R"("nvidia.com/mig-1g.10gb":"2"}}}]}},"Nodes":null,"NodeNames":[)";
  for (size_t i = 0; i < names.size(); ++i) body += (i == 0 ? "\"" : ",\"") + names[i] + "\"";
  body += "]}";
  std::string padded = body + std::string(kBodyPadding, '\0');
  ExtenderRequest req;
  req.verb = Verb::Filter;
  req.body = std::string_view(padded.data(), body.size());
  ExtenderRequest* batch[] = {&req};
  service.handleBatch(batch);
  ASSERT_EQ(req.status, 200) << req.response;
  // Nodes with 7 units and not spot pass; 1 unit: not enough; none: no such resource; spot:
  // not tolerated.
  EXPECT_NE(req.response.find(R"("NodeNames":["mig-1","mig-7","mig-10"])"), std::string::npos) << req.response;
  EXPECT_NE(req.response.find(R"("mig-4":)"), std::string::npos) << req.response;
  const std::set<std::string> reasons = expectLikeGo(req.response.str(), names.size());
  EXPECT_GE(reasons.size(), 3u);
}

TEST_F(FastPathTest, FailedMapsMatchGoForOddNames) {
  load(dataDir() + "/codec/nodes.json", dataDir() + "/codec/pods.json");
  // Known nodes in both maps (one GPU: Unschedulable for a 2-GPU pod; none: unresolvable),
  // unknown names falling between them, names that need escaping, and repeats.
  const std::vector<std::string> oneGpu = {"m-1", "a<b", "zz\"q", "gpu-node-0000000000-a", "\xc3\xa9t\xc3\xa9"};
  const std::vector<std::string> noGpu = {"m-0", "b&c", "gpu-node-0000000000-b", "tab\there"};
  for (const auto& n : oneGpu) cache_.upsertNode(cache::testing::NodeMaker(strings_, n).gpus(1).build());
  for (const auto& n : noGpu) cache_.upsertNode(cache::testing::NodeMaker(strings_, n).build());
  std::vector<std::string> names = {"zz\"q",   "ghost>1", "m-0",     "gpu-a",  "a<b",      "m-1",
                                    "b&c",     "m-0",     "ghost>1", "m-00",   "cpu-1",    "tab\there",
                                    "gpu-node-0000000000-b", "gpu-node-0000000000-a", "gpu-node-0000000000",
                                    "\xc3\xa9t\xc3\xa9", "\xc3\xa9", "0"};
  const std::string body = gpu2Body(names);
  Answer a = call(Verb::Filter, body);
  ASSERT_EQ(a.status, 200);
  EXPECT_NE(a.body.find(R"("ghost\u003e1":"node not found in fleetsched's cache")"), std::string::npos) << a.body;
  EXPECT_NE(a.body.find(R"("a\u003cb":)"), std::string::npos) << a.body;

  // 18 names, 2 repeats; each map holds known and unknown names.
  expectLikeGo(a.body, 16u);
  simdjson::dom::parser parser;
  simdjson::dom::element r = parser.parse(a.body);
  for (const char* key : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    EXPECT_GE(r[key].get_object().size(), 3u) << key;
  }
  expectLikeFresh(body, "odd names");
}

}  // namespace
}  // namespace fleetsched::engine

namespace fleetsched::engine {
namespace {

// Records Bindings and answers each at once, as a kube-apiserver that accepts them would; with
// `holdAnswers`, keeps the answers in `held` for the test to give (as Ingestor does, later).
class RecordingBinder : public Binder {
 public:
  void postBinding(BindingRequest req, std::function<void(std::string error)> done) override {
    posted.push_back(std::move(req));
    if (holdAnswers) {
      held.push_back(std::move(done));
    } else {
      done("");
    }
  }
  void afterIngestTurn(std::function<void()> fn) override { fn(); }
  void watchPodDeletions(std::function<void(std::vector<std::string>)> fn) override { deletions = std::move(fn); }
  // Answers from `pods` ("namespace/name" -> Pod JSON), later, as Ingestor does: answerReads().
  void readPod(std::string ns, std::string name, std::function<void(std::string, std::string)> done) override {
    reads.push_back(ns + "/" + name);
    auto it = pods.find(ns + "/" + name);
    heldReads.push_back([done, error = it == pods.end() ? "reading pod " + ns + "/" + name + ": HTTP 404: not found" : "",
                         body = it == pods.end() ? "" : it->second] { done(error, body); });
  }
  void answerReads() {
    while (!heldReads.empty()) {
      auto next = std::move(heldReads.front());
      heldReads.erase(heldReads.begin());
      next();
    }
  }
  std::vector<BindingRequest> posted;
  std::map<std::string, std::string> pods;
  std::vector<std::string> reads;
  std::vector<std::function<void()>> heldReads;
  bool holdAnswers = false;
  std::vector<std::function<void(std::string error)>> held;
  std::function<void(std::vector<std::string>)> deletions;  // the service's, once binding is enabled
};

// Issue 26, defect 1: with `serve --client-ca-file`, a bind must come over a connection whose
// client certificate verified, for a pod such a connection filtered; pod UIDs alone are
// readable by anyone who can list pods.
class VerifiedBindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(cache::loadClusterFiles(cache_, dataDir() + "/codec/nodes.json", dataDir() + "/codec/pods.json", error))
        << error;
  }
  Answer call(ExtenderService& service, Verb verb, const std::string& body, bool verified) {
    return call(service, binder_, verb, body, verified);
  }
  static Answer call(ExtenderService& service, RecordingBinder& binder, Verb verb, const std::string& body,
                     bool verified) {
    std::string padded = body;
    padded.append(kBodyPadding, '\0');
    ExtenderRequest req;
    req.verb = verb;
    req.body = std::string_view(padded.data(), body.size());
    req.peerVerified = verified;
    req.complete = [](ExtenderRequest*) {};
    ExtenderRequest* batch[] = {&req};
    service.handleBatch(batch);
    binder.answerReads();
    return {req.status, req.response.str()};
  }
  static std::string filterBody(const std::string& uid, const std::string& cpu = "100m") {
    return R"({"Pod":{"metadata":{"name":"p-)" + uid + R"(","namespace":"ml","uid":")" + uid +
           R"("},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":")" + cpu +
           R"("}}}]}},"Nodes":null,"NodeNames":["gpu-a","gpu-b"]})";
  }
  // The Pod object kube-apiserver holds for filterBody's pod.
  static std::string podJson(const std::string& name, const std::string& uid) {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":"ml","uid":")" + uid +
           R"("},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]}})";
  }
  static std::string bindBody(const std::string& uid) {
    return R"({"PodName":"p-)" + uid + R"(","PodNamespace":"ml","PodUID":")" + uid + R"(","Node":"gpu-a"})";
  }

  cache::Cache cache_;
  plugins::Config config_ = plugins::defaultConfig();
  Metrics metrics_;
  RecordingBinder binder_;
};

TEST_F(VerifiedBindTest, BindNeedsAVerifiedFilterAndAVerifiedBind) {
  ServiceOptions options;
  options.bindNeedsVerifiedFilter = true;
  ExtenderService service(cache_, config_, metrics_, options);
  service.enableBinding(&binder_);

  // A filter without a verified certificate does not make its pod bindable.
  ASSERT_EQ(call(service, Verb::Filter, filterBody("u-anon"), false).status, 200);
  Answer a = call(service, Verb::Bind, bindBody("u-anon"), true);
  EXPECT_NE(a.body.find("no filter with a verified client certificate"), std::string::npos) << a.body;
  // A verified filter's pod, bound without a verified certificate.
  ASSERT_EQ(call(service, Verb::Filter, filterBody("u-ok"), true).status, 200);
  a = call(service, Verb::Bind, bindBody("u-ok"), false);
  EXPECT_NE(a.body.find("did not come with a verified client certificate"), std::string::npos) << a.body;
  EXPECT_TRUE(binder_.posted.empty());

  // An unverified filter of the same UID changes nothing; the verified bind goes through.
  ASSERT_EQ(call(service, Verb::Filter, filterBody("u-ok", "500"), false).status, 200);
  a = call(service, Verb::Bind, bindBody("u-ok"), true);
  EXPECT_EQ(a.body, R"({"Error":""})");
  ASSERT_EQ(binder_.posted.size(), 1u);
  EXPECT_EQ(binder_.posted[0].podUid, "u-ok");
  EXPECT_EQ(binder_.posted[0].node, "gpu-a");

  // A pod first filtered without, then with a verified certificate is bindable.
  ASSERT_EQ(call(service, Verb::Filter, filterBody("u-anon"), true).status, 200);
  EXPECT_EQ(call(service, Verb::Bind, bindBody("u-anon"), true).body, R"({"Error":""})");
  EXPECT_EQ(binder_.posted.size(), 2u);
}

// Issue 26 item 7 (soak): every pod kube-scheduler filtered stayed remembered until 8,192 newer
// ones pushed it out, so serve's memory grew for the first 8,192 pods scheduled (0.5 MB a minute
// at 4 pods/s). A pod is forgotten once its Binding succeeded; after a failed one it stays
// remembered, so kube-scheduler's retry can bind it.
// Issue 43: the Binding carries cache::bindingAnnotations, as the plugin deployment's does: the
// GPU index and assume-time in wall-clock nanoseconds (it was uv_hrtime(), monotonic: a device
// plugin comparing it with its clock got nonsense).
TEST_F(VerifiedBindTest, TheBindingCarriesTheGpuIndexAndAWallClockAssumeTime) {
  ExtenderService service(cache_, config_, metrics_, ServiceOptions{});
  service.enableBinding(&binder_);
  const std::string filter =
      R"({"Pod":{"metadata":{"name":"p-g","namespace":"ml","uid":"g"},"spec":{"tolerations":[{"key":"nvidia.com/gpu",)"
      R"("operator":"Exists"}],"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}},)"
      R"("Nodes":null,"NodeNames":["gpu-a"]})";
  const auto wallNanos = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  ASSERT_EQ(call(service, Verb::Filter, filter, false).status, 200);
  const int64_t before = wallNanos();
  const Answer a = call(service, Verb::Bind, bindBody("g"), false);
  const int64_t after = wallNanos();
  EXPECT_EQ(a.body, R"({"Error":""})");
  ASSERT_EQ(binder_.posted.size(), 1U);
  const auto& annotations = binder_.posted[0].annotations;
  ASSERT_EQ(annotations.size(), 2U);
  EXPECT_EQ(annotations[0].first, "fleetsched.io/gpu-index");
  EXPECT_EQ(std::count(annotations[0].second.begin(), annotations[0].second.end(), '-'), 1) << annotations[0].second;
  EXPECT_EQ(annotations[1].first, "fleetsched.io/assume-time");
  const int64_t assumed = std::stoll(annotations[1].second);
  EXPECT_GE(assumed, before);
  EXPECT_LE(assumed, after);
}

TEST_F(VerifiedBindTest, ABoundPodIsForgottenAFailedOneKept) {
  ExtenderService service(cache_, config_, metrics_);
  service.enableBinding(&binder_);
  ASSERT_EQ(call(service, Verb::Filter, filterBody("u-1"), false).status, 200);
  {
    // The Binding fails (answered later, as kube-apiserver does).
    binder_.holdAnswers = true;
    std::string padded = bindBody("u-1");
    const size_t n = padded.size();
    padded.append(kBodyPadding, '\0');
    ExtenderRequest req;
    req.verb = Verb::Bind;
    req.body = std::string_view(padded.data(), n);
    req.complete = [](ExtenderRequest*) {};
    ExtenderRequest* batch[] = {&req};
    service.handleBatch(batch);
    ASSERT_EQ(binder_.held.size(), 1u);
    binder_.held[0]("pods \"p-u-1\" is forbidden");
    EXPECT_EQ(req.response.str(), R"({"Error":"pods \"p-u-1\" is forbidden"})");
    binder_.holdAnswers = false;
  }
  // Still remembered: kube-scheduler's retry binds it.
  EXPECT_EQ(call(service, Verb::Bind, bindBody("u-1"), false).body, R"({"Error":""})");
  EXPECT_EQ(binder_.posted.size(), 2u);
  // Bound, forgotten: a bind without a new filter is refused.
  Answer a = call(service, Verb::Bind, bindBody("u-1"), false);
  EXPECT_NE(a.body.find("was not filtered by fleetsched"), std::string::npos) << a.body;
  EXPECT_EQ(binder_.posted.size(), 2u);
  // Filtered again (kube-scheduler's next cycle), it binds again.
  ASSERT_EQ(call(service, Verb::Filter, filterBody("u-1"), false).status, 200);
  EXPECT_EQ(call(service, Verb::Bind, bindBody("u-1"), false).body, R"({"Error":""})");
  EXPECT_EQ(binder_.posted.size(), 3u);
}

// Issue 26 item 3: a pod deleted before its bind (never schedulable, its job gone) stayed
// remembered until 8,192 newer ones pushed it out; under loadgen's churn serve grew from 20 to
// 48.7 MB that way. The pod watch's deletions now forget it.
TEST_F(VerifiedBindTest, APodDeletedBeforeItsBindIsForgotten) {
  ExtenderService service(cache_, config_, metrics_);
  service.enableBinding(&binder_);
  ASSERT_TRUE(binder_.deletions) << "the service does not listen for pod deletions";
  auto remembered = [&] {
    std::string text;
    metrics_.render(text);
    const std::string name = "\nfleetsched_bind_pods_remembered ";
    const size_t at = text.find(name);
    return at == std::string::npos ? -1.0 : std::atof(text.c_str() + at + name.size());
  };
  for (const char* uid : {"u-1", "u-2", "u-3"}) ASSERT_EQ(call(service, Verb::Filter, filterBody(uid), false).status, 200);
  EXPECT_EQ(remembered(), 3);
  binder_.deletions({"u-1", "u-3", "u-never-filtered"});
  EXPECT_EQ(remembered(), 1);
  Answer a = call(service, Verb::Bind, bindBody("u-1"), false);
  EXPECT_NE(a.body.find("was not filtered by fleetsched"), std::string::npos) << a.body;
  EXPECT_EQ(call(service, Verb::Bind, bindBody("u-2"), false).body, R"({"Error":""})");
  EXPECT_EQ(remembered(), 0);
  EXPECT_EQ(binder_.posted.size(), 1u);
}

TEST_F(VerifiedBindTest, WithoutClientAuthenticationBindIsUnchanged) {
  ExtenderService service(cache_, config_, metrics_);
  service.enableBinding(&binder_);
  ASSERT_EQ(call(service, Verb::Filter, filterBody("u-1"), false).status, 200);
  EXPECT_EQ(call(service, Verb::Bind, bindBody("u-1"), false).body, R"({"Error":""})");
  ASSERT_EQ(binder_.posted.size(), 1u);
  // Never filtered: refused as before.
  Answer a = call(service, Verb::Bind, bindBody("u-2"), false);
  EXPECT_NE(a.body.find("was not filtered by fleetsched"), std::string::npos) << a.body;
}

// Two replicas behind one Service: kube-scheduler's filter of a pod may reach one replica and its
// bind the other (the leader). A bind with a verified client certificate is kube-scheduler's own:
// the replica reads the pod from kube-apiserver and binds it instead of refusing it (each refusal
// costs the pod a retry with backoff). Without client certificates it is still refused (above).
TEST_F(VerifiedBindTest, AVerifiedBindOfAPodFilteredElsewhereReadsThePod) {
  ServiceOptions options;
  options.bindNeedsVerifiedFilter = true;
  ExtenderService service(cache_, config_, metrics_, options);
  service.enableBinding(&binder_);
  binder_.pods["ml/p-u-else"] = podJson("p-u-else", "u-else");
  EXPECT_EQ(call(service, Verb::Bind, bindBody("u-else"), true).body, R"({"Error":""})");
  EXPECT_EQ(binder_.reads, std::vector<std::string>{"ml/p-u-else"});
  ASSERT_EQ(binder_.posted.size(), 1u);
  EXPECT_EQ(binder_.posted[0].podUid, "u-else");
  EXPECT_EQ(binder_.posted[0].node, "gpu-a");
  std::string text;
  metrics_.render(text);
  EXPECT_NE(text.find("\nfleetsched_bind_pods_read_total 1\n"), std::string::npos) << text;

  // An unverified bind reads nothing.
  Answer a = call(service, Verb::Bind, bindBody("u-other"), false);
  EXPECT_NE(a.body.find("did not come with a verified client certificate"), std::string::npos) << a.body;
  // The pod was deleted and created again under its name: the bind names the old UID.
  binder_.pods["ml/p-u-old"] = podJson("p-u-old", "u-new");
  a = call(service, Verb::Bind, bindBody("u-old"), true);
  EXPECT_NE(a.body.find("pod ml/p-u-old is now UID u-new, not u-old"), std::string::npos) << a.body;
  // kube-apiserver does not answer, or answers something that is not a pod.
  a = call(service, Verb::Bind, bindBody("u-gone"), true);
  EXPECT_NE(a.body.find("reading pod ml/p-u-gone: HTTP 404"), std::string::npos) << a.body;
  binder_.pods["ml/p-u-bad"] = R"({"metadata":{"name":"p-u-bad","namespace":"ml","uid":"u-bad"},"spec":7})";
  a = call(service, Verb::Bind, bindBody("u-bad"), true);
  EXPECT_NE(a.body.find("reading pod ml/p-u-bad: "), std::string::npos) << a.body;
  EXPECT_EQ(binder_.posted.size(), 1u);
  EXPECT_EQ(binder_.reads.size(), 4u);
}

}  // namespace
}  // namespace fleetsched::engine
