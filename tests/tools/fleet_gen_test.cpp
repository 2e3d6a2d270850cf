// The corpus generator is the input of every benchmark: if it drifts between runs, or emits JSON
// kube-scheduler would never send, the numbers mean nothing. These tests pin determinism, sizes,
// validity and the shapes the plugins read.
#include "tools/fleet/fleet_gen.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tools/fleet/cli.h"

namespace fleetsched::tools::fleet {
namespace {

std::string listToString(const FleetGenerator& fleet, JsonValue::Style style) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  EXPECT_TRUE(writeNodeList(f, fleet, style));
  std::fclose(f);
  std::string out(data, size);
  std::free(data);
  return out;
}

std::string podsToString(const PodGenerator& pods, bool onlyBound = false) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  EXPECT_TRUE(writePodList(f, pods, JsonValue::Style::kKubectl, onlyBound));
  std::fclose(f);
  std::string out(data, size);
  std::free(data);
  return out;
}

FleetOptions fleetOf(size_t nodes, uint64_t seed) {
  FleetOptions o;
  o.nodes = nodes;
  o.seed = seed;
  return o;
}

std::string_view str(simdjson::dom::element e) {
  std::string_view s;
  EXPECT_EQ(e.get(s), simdjson::SUCCESS);
  return s;
}

TEST(FleetGen, SameSeedGivesIdenticalBytes) {
  FleetGenerator a(fleetOf(60, 7)), b(fleetOf(60, 7));
  EXPECT_EQ(listToString(a, JsonValue::Style::kKubectl), listToString(b, JsonValue::Style::kKubectl));
  PodOptions po;
  po.pods = 80;
  po.seed = 7;
  PodGenerator pa(po), pb(po);
  for (size_t i = 0; i < pa.size(); ++i) ASSERT_EQ(pa.podWire(i), pb.podWire(i)) << i;
}

TEST(FleetGen, DifferentSeedsGiveDifferentFleets) {
  FleetGenerator a(fleetOf(20, 1)), b(fleetOf(20, 2));
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a.summary(i).name == b.summary(i).name;
  EXPECT_EQ(same, 0u);
  EXPECT_NE(a.nodeWire(0), b.nodeWire(0));
}

TEST(FleetGen, NodeSizesStayInTheRealisticRange) {
  FleetGenerator fleet(fleetOf(300, 3));
  size_t total = 0;
  for (size_t i = 0; i < fleet.size(); ++i) {
    size_t bytes = fleet.nodeWire(i).size();
    EXPECT_GE(bytes, 10u * 1024) << fleet.summary(i).instanceType;
    EXPECT_LE(bytes, 20u * 1024) << fleet.summary(i).instanceType;
    total += bytes;
  }
  const double mean = static_cast<double>(total) / static_cast<double>(fleet.size());
  EXPECT_GT(mean, 11.0 * 1024);
  EXPECT_LT(mean, 14.5 * 1024);
}

TEST(FleetGen, LargerSizeTargetGivesLargerNodes) {
  FleetOptions o = fleetOf(50, 3);
  o.minNodeBytes = 18 * 1024;
  o.maxNodeBytes = 19 * 1024;
  FleetGenerator big(o);
  for (size_t i = 0; i < big.size(); ++i) EXPECT_GE(big.nodeWire(i).size(), 18u * 1024);
}

TEST(FleetGen, NodeListIsValidJsonMatchingTheSummaries) {
  FleetGenerator fleet(fleetOf(1000, 11));
  std::string text = listToString(fleet, JsonValue::Style::kKubectl);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(str(doc["apiVersion"]), "v1");
  EXPECT_EQ(str(doc["kind"]), "List");
  EXPECT_EQ(str(doc["metadata"]["resourceVersion"]), "");
  simdjson::dom::array items;
  ASSERT_EQ(doc["items"].get(items), simdjson::SUCCESS);
  ASSERT_EQ(items.size(), 1000u);

  std::set<std::string_view> names, zones, types, products;
  std::map<std::string, size_t> capacityTypes;
  size_t i = 0;
  for (simdjson::dom::element node : items) {
    const NodeSummary& s = fleet.summary(i++);
    EXPECT_EQ(str(node["kind"]), "Node");
    auto name = str(node["metadata"]["name"]);
    EXPECT_EQ(name, s.name);
    EXPECT_TRUE(names.insert(name).second) << "duplicate node name " << name;
    auto labels = node["metadata"]["labels"];
    EXPECT_EQ(str(labels["kubernetes.io/hostname"]), name);
    zones.insert(str(labels["topology.kubernetes.io/zone"]));
    types.insert(str(labels["node.kubernetes.io/instance-type"]));
    std::string_view capacity;
    if (labels["karpenter.sh/capacity-type"].get(capacity) == simdjson::SUCCESS) {
      ++capacityTypes["karpenter:" + std::string(capacity)];
    } else {
      ++capacityTypes["eks:" + std::string(str(labels["eks.amazonaws.com/capacityType"]))];
    }
    std::string_view gpus;
    bool hasGpus = node["status"]["allocatable"]["nvidia.com/gpu"].get(gpus) == simdjson::SUCCESS;
    EXPECT_EQ(hasGpus, s.gpu != nullptr);
    if (hasGpus) {
      EXPECT_EQ(gpus, std::to_string(s.gpuCount));
      EXPECT_EQ(str(labels["nvidia.com/gpu.count"]), gpus);
      EXPECT_EQ(str(labels["nvidia.com/gpu.memory"]), std::to_string(s.gpu->memoryMb));
      EXPECT_EQ(str(labels["gpu.nvidia.com/memory"]), std::to_string(s.gpu->memoryMb));
      EXPECT_NE(str(labels["nvidia.com/mig.strategy"]), "");
      EXPECT_NE(str(labels["nvidia.com/cuda.driver-version.full"]), "");
      products.insert(str(labels["nvidia.com/gpu.product"]));
    }
    EXPECT_EQ(str(node["spec"]["providerID"]).substr(0, 7), "aws:///");
    int64_t port = 0;
    EXPECT_EQ(node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"].get(port), simdjson::SUCCESS);
    simdjson::dom::array images, managed;
    ASSERT_EQ(node["status"]["images"].get(images), simdjson::SUCCESS);
    EXPECT_LE(images.size(), 50u);
    ASSERT_EQ(node["metadata"]["managedFields"].get(managed), simdjson::SUCCESS);
    EXPECT_GE(managed.size(), 3u);
  }
  EXPECT_EQ(zones.size(), 3u);
  for (auto t : {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "g6.12xlarge", "g4dn.xlarge", "g5.12xlarge",
                 "m6i.4xlarge"}) {
    EXPECT_TRUE(types.count(t)) << t;
  }
  for (auto p : {"NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-L4", "Tesla-T4",
                 "NVIDIA-A10G"}) {
    EXPECT_TRUE(products.count(p)) << p;
  }
  EXPECT_GT(capacityTypes["karpenter:spot"] + capacityTypes["eks:SPOT"], 50u);
  EXPECT_GT(capacityTypes["karpenter:on-demand"], 100u);
  EXPECT_GT(capacityTypes["eks:ON_DEMAND"], 100u);
}

TEST(FleetGen, WireFormIsStructOrderedWithoutTypeMeta) {
  FleetGenerator fleet(fleetOf(5, 4));
  std::string wire = fleet.nodeWire(0);
  EXPECT_EQ(wire.rfind(R"({"metadata":{"name":")", 0), 0u) << wire.substr(0, 40);
  EXPECT_EQ(wire.find(R"("kind":"Node")"), std::string::npos);
  EXPECT_LT(wire.find(R"("spec":)"), wire.find(R"("status":)"));
  EXPECT_LT(wire.find(R"("capacity":)"), wire.find(R"("allocatable":)"));
  // kubectl form carries the same node, just sorted and indented.
  simdjson::dom::parser p1, p2;
  simdjson::dom::element a, b;
  std::string pretty = fleet.nodeObject(0, true).dump(JsonValue::Style::kKubectl);
  ASSERT_EQ(p1.parse(wire).get(a), simdjson::SUCCESS);
  ASSERT_EQ(p2.parse(pretty).get(b), simdjson::SUCCESS);
  simdjson::dom::object la, lb;
  ASSERT_EQ(a["metadata"]["labels"].get(la), simdjson::SUCCESS);
  ASSERT_EQ(b["metadata"]["labels"].get(lb), simdjson::SUCCESS);
  EXPECT_EQ(la.size(), lb.size());
  EXPECT_EQ(simdjson::minify(la), simdjson::minify(lb));  // Go maps are sorted in both forms
  EXPECT_EQ(str(a["metadata"]["uid"]), str(b["metadata"]["uid"]));
}

TEST(FleetGen, PodMixIsRealistic) {
  PodOptions o;
  o.pods = 1000;
  o.seed = 5;
  PodGenerator pods(o);
  std::map<PodKind, size_t> kinds;
  size_t spot = 0, spread = 0;
  simdjson::dom::parser parser;
  std::set<std::string> names;
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodSummary& s = pods.summary(i);
    ++kinds[s.kind];
    spot += s.spotTolerant;
    spread += s.zoneSpread;
    EXPECT_TRUE(names.insert(s.namespace_ + "/" + s.name).second);
    std::string wire = pods.podWire(i);
    simdjson::dom::element pod;
    ASSERT_EQ(parser.parse(wire).get(pod), simdjson::SUCCESS) << wire;
    EXPECT_EQ(str(pod["metadata"]["name"]), s.name);
    EXPECT_EQ(str(pod["metadata"]["ownerReferences"].at(0)["kind"]), "ReplicaSet");
    bool controller = false;
    EXPECT_EQ(pod["metadata"]["ownerReferences"].at(0)["controller"].get(controller), simdjson::SUCCESS);
    EXPECT_TRUE(controller);
    EXPECT_EQ(str(pod["spec"]["schedulerName"]), "default-scheduler");
    EXPECT_EQ(str(pod["status"]["phase"]), "Pending");
    auto resources = pod["spec"]["containers"].at(0)["resources"];
    std::string_view gpuRequest, gpuLimit;
    if (s.gpus > 0) {
      ASSERT_EQ(resources["requests"]["nvidia.com/gpu"].get(gpuRequest), simdjson::SUCCESS);
      ASSERT_EQ(resources["limits"]["nvidia.com/gpu"].get(gpuLimit), simdjson::SUCCESS);
      EXPECT_EQ(gpuRequest, std::to_string(s.gpus));
      EXPECT_EQ(gpuRequest, gpuLimit);  // extended resources cannot be overcommitted
    } else {
      EXPECT_NE(resources["requests"]["nvidia.com/gpu"].get(gpuRequest), simdjson::SUCCESS);
    }
    if (s.spotTolerant) {
      std::string_view v;
      EXPECT_EQ(pod["metadata"]["annotations"]["fleetsched.io/spot-tolerant"].get(v), simdjson::SUCCESS);
    }
  }
  for (auto k : {PodKind::kCpuOnly, PodKind::kGpu1, PodKind::kGpu2, PodKind::kGpu4, PodKind::kGpu8, PodKind::kGpuShare}) {
    EXPECT_GT(kinds[k], 20u) << podKindName(k);
  }
  EXPECT_GT(spot, 50u);
  EXPECT_GT(spread, 50u);
}

TEST(FleetGen, BoundPodsNeverOvercommitANode) {
  FleetGenerator fleet(fleetOf(40, 9));
  PodOptions o;
  o.pods = 600;
  o.seed = 9;
  o.namePrefix = "bound-";
  PodGenerator pods(o);
  size_t placed = pods.bindToFleet(fleet);
  EXPECT_GT(placed, 50u);
  EXPECT_LT(placed, 600u);  // the fleet is too small for all of them
  std::map<std::string, int> gpus;
  std::map<std::string, int64_t> cpu;
  for (size_t i = 0; i < pods.size(); ++i) {
    const auto& p = pods.summary(i);
    if (p.nodeName.empty()) continue;
    gpus[p.nodeName] += p.gpus;
    cpu[p.nodeName] += p.milliCpu;
  }
  for (const auto& n : fleet.summaries()) {
    EXPECT_LE(gpus[n.name], n.gpuCount) << n.name;
    EXPECT_LE(cpu[n.name], n.allocatableMilliCpu) << n.name;
  }
  std::string list = podsToString(pods, /*onlyBound=*/true);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(list).get(doc), simdjson::SUCCESS);
  simdjson::dom::array items;
  ASSERT_EQ(doc["items"].get(items), simdjson::SUCCESS);
  EXPECT_EQ(items.size(), placed);
  for (auto pod : items) {
    EXPECT_EQ(str(pod["status"]["phase"]), "Running");
    EXPECT_NE(str(pod["spec"]["nodeName"]), "");
  }
}

TEST(FleetGen, RequestBodiesMatchKubeSchedulerMarshal) {
  FleetGenerator fleet(fleetOf(30, 2));
  PodOptions po;
  po.pods = 3;
  PodGenerator pods(po);
  std::vector<std::string> names, wires;
  for (size_t i = 0; i < fleet.size(); ++i) {
    names.push_back(fleet.summary(i).name);
    wires.push_back(fleet.nodeWire(i));
  }
  std::string pod = pods.podWire(0);

  std::string cached;
  appendNodeNamesArgs(cached, pod, names);
  EXPECT_EQ(cached.rfind(R"({"Pod":{"metadata":)", 0), 0u);
  EXPECT_NE(cached.find(R"(,"Nodes":null,"NodeNames":[")"), std::string::npos);
  EXPECT_EQ(cached.find('\n'), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(cached).get(doc), simdjson::SUCCESS);
  EXPECT_TRUE(doc["Nodes"].is_null());
  simdjson::dom::array arr;
  ASSERT_EQ(doc["NodeNames"].get(arr), simdjson::SUCCESS);
  EXPECT_EQ(arr.size(), names.size());
  EXPECT_EQ(str(arr.at(29)), names[29]);

  std::string full;
  appendFullNodesArgs(full, pod, wires);
  EXPECT_EQ(full.substr(full.size() - 20), R"(]},"NodeNames":null})");
  ASSERT_EQ(parser.parse(full).get(doc), simdjson::SUCCESS);
  EXPECT_TRUE(doc["NodeNames"].is_null());
  simdjson::dom::object listMeta;
  ASSERT_EQ(doc["Nodes"]["metadata"].get(listMeta), simdjson::SUCCESS);
  EXPECT_EQ(listMeta.size(), 0u);
  ASSERT_EQ(doc["Nodes"]["items"].get(arr), simdjson::SUCCESS);
  ASSERT_EQ(arr.size(), wires.size());
  EXPECT_EQ(str(arr.at(3)["metadata"]["name"]), names[3]);
  // The echo of a node is its exact input bytes.
  EXPECT_EQ(simdjson::minify(arr.at(3)), wires[3]);
}

TEST(FleetGen, GenFleetCommandWritesTheCorpus) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("fleetsched-genfleet-" + std::to_string(::getpid()));
  CLI::App app;
  addGenFleetCommand(app);
  std::vector<std::string> args = {"gen-fleet", "-o", dir.string(), "-n", "40", "-p", "10", "--bound-pods", "30",
                                   "--requests", "3", "--full-mode-nodes", "8", "-q"};
  std::vector<const char*> argv = {"fleetsched"};
  for (auto& a : args) argv.push_back(a.c_str());
  ASSERT_NO_THROW(app.parse(static_cast<int>(argv.size()), argv.data()));
  for (auto f : {"nodes.json", "pods.json", "corpus.json", "bound-pods.json", "requests-nodenames.ndjson", "requests-full.ndjson"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  }
  std::ifstream in(dir / "requests-full.ndjson");
  std::string line;
  size_t lines = 0;
  simdjson::dom::parser parser;
  while (std::getline(in, line)) {
    ++lines;
    simdjson::dom::element doc;
    simdjson::dom::array items;
    ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS);
    ASSERT_EQ(doc["Nodes"]["items"].get(items), simdjson::SUCCESS);
    EXPECT_EQ(items.size(), 8u);
  }
  EXPECT_EQ(lines, 3u);
  fs::remove_all(dir);
}

TEST(FleetGen, EscapesLikeGo) {
  std::string out;
  appendJsonString(out, "a\"b\\c<d>&\n\x01");
  EXPECT_EQ(out, R"("a\"b\\c\u003cd\u003e\u0026\n\u0001")");
}

}  // namespace
}  // namespace fleetsched::tools::fleet
