// Codec benchmarks: the request decodes and reply encodes on the extender's hot path.
//
//   ninja -C build bench/codec/codec_bench && build/bench/codec/codec_bench --benchmark_repetitions=5
//
// (plus the optional corpus benchmarks described at registerCorpusBenchmarks below)
//
// Inputs are built deterministically: the Go-marshalled train pod from tests/data/codec, 5,000
// node names, and 500 full Node objects of ~12 KB each shaped like real EKS GPU nodes (GFD
// labels, images, conditions, managedFields). Every benchmark checks its output before timing.
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "codec/decoder.h"
#include "codec/encoder.h"

namespace fleetsched::codec {
namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "codec_bench: %s\n", msg.c_str());
  std::exit(1);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The Go-marshalled GPU training pod (init containers, sidecar, affinity, tolerations).
const std::string& trainPodJson() {
  static const std::string pod = [] {
    const char* dir = std::getenv("FLEETSCHED_TEST_DATA");
    std::string path = dir ? std::string(dir) + "/codec" : std::string(FLEETSCHED_CODEC_DATA);
    std::string args = readFile(path + "/extender_args_names.json");
    simdjson::dom::parser p;
    simdjson::dom::element podEl;
    if (p.parse(args)["Pod"].get(podEl) != simdjson::SUCCESS) die("no Pod in extender_args_names.json");
    return simdjson::minify(podEl);
  }();
  return pod;
}

std::string nodeName(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "ip-10-%d-%d-%d.ec2.internal", i / 65536, (i / 256) % 256, i % 256);
  return buf;
}

// A deterministic pseudo-random hex string (image digests, ids).
std::string hex(uint64_t seed, int len) {
  static const char* k = "0123456789abcdef";
  std::string s;
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int i = 0; i < len; ++i) {
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    s.push_back(k[(x * 0x2545F4914F6CDD1Dull) >> 60]);
  }
  return s;
}

// One EKS GPU node as json.Marshal writes it (field order of the Go structs), ~12 KB.
std::string makeNode(int i) {
  const char* zones[] = {"us-east-1a", "us-east-1b", "us-east-1c"};
  const char* products[] = {"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "Tesla-T4", "NVIDIA-A10G"};
  std::string name = nodeName(i);
  std::string zone = zones[i % 3];
  bool spot = i % 4 == 1;
  std::string s;
  s.reserve(13000);
  s += R"({"metadata":{"name":")" + name + R"(","uid":")" + hex(i, 8) + "-" + hex(i + 1, 4) + "-" + hex(i + 2, 4) +
       "-" + hex(i + 3, 4) + "-" + hex(i + 4, 12) + R"(","resourceVersion":")" + std::to_string(100000 + i * 7) +
       R"(","creationTimestamp":"2026-11-30T08:15:00Z","labels":{)";
  s += R"("beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/instance-type":"p4d.24xlarge","beta.kubernetes.io/os":"linux",)";
  s += R"("eks.amazonaws.com/capacityType":")" + std::string(spot ? "SPOT" : "ON_DEMAND") + R"(",)";
  s += R"("eks.amazonaws.com/nodegroup":"gpu-)" + zone + R"(","eks.amazonaws.com/nodegroup-image":"ami-0)" + hex(i, 16) + R"(",)";
  s += R"("failure-domain.beta.kubernetes.io/region":"us-east-1","failure-domain.beta.kubernetes.io/zone":")" + zone + R"(",)";
  s += R"("k8s.io/cloud-provider-aws":")" + hex(7, 32) + R"(","karpenter.sh/capacity-type":")" +
       (spot ? "spot" : "on-demand") + R"(",)";
  s += R"("kubernetes.io/arch":"amd64","kubernetes.io/hostname":")" + name + R"(","kubernetes.io/os":"linux",)";
  s += R"("node.kubernetes.io/instance-type":"p4d.24xlarge",)";
  s += R"("nvidia.com/cuda.driver.major":"550","nvidia.com/cuda.driver.minor":"127","nvidia.com/cuda.driver.rev":"05",)";
  s += R"("nvidia.com/cuda.runtime.major":"12","nvidia.com/cuda.runtime.minor":"4","nvidia.com/gfd.timestamp":"1732954500",)";
  s += R"("nvidia.com/gpu.compute.major":"8","nvidia.com/gpu.compute.minor":"0","nvidia.com/gpu.count":"8",)";
  s += R"("nvidia.com/gpu.deploy.container-toolkit":"true","nvidia.com/gpu.deploy.dcgm":"true",)";
  s += R"("nvidia.com/gpu.deploy.dcgm-exporter":"true","nvidia.com/gpu.deploy.device-plugin":"true",)";
  s += R"("nvidia.com/gpu.deploy.driver":"pre-installed","nvidia.com/gpu.deploy.gpu-feature-discovery":"true",)";
  s += R"("nvidia.com/gpu.deploy.node-status-exporter":"true","nvidia.com/gpu.deploy.operator-validator":"true",)";
  s += R"("nvidia.com/gpu.family":"ampere","nvidia.com/gpu.machine":"p4d.24xlarge","nvidia.com/gpu.memory":"81920",)";
  s += R"("nvidia.com/gpu.present":"true","nvidia.com/gpu.product":")" + std::string(products[i % 4]) + R"(",)";
  s += R"("nvidia.com/gpu.replicas":"1","nvidia.com/mig.capable":"true","nvidia.com/mig.strategy":"single",)";
  s += R"("topology.ebs.csi.aws.com/zone":")" + zone + R"(","topology.k8s.aws/zone-id":"use1-az)" +
       std::to_string(i % 3 + 1) + R"(","topology.kubernetes.io/region":"us-east-1","topology.kubernetes.io/zone":")" +
       zone + R"("},)";
  s += R"("annotations":{"alpha.kubernetes.io/provided-node-ip":"10.0.)" + std::to_string(i % 256) +
       R"(.7","csi.volume.kubernetes.io/nodeid":"{\"ebs.csi.aws.com\":\"i-0)" + hex(i, 16) +
       R"(\"}","node.alpha.kubernetes.io/ttl":"0","nvidia.com/gpu-driver-upgrade-enabled":"true",)"
       R"("volumes.kubernetes.io/controller-managed-attach-detach":"true"},)";
  s += R"("managedFields":[)";
  const char* managers[] = {"kubelet", "kube-controller-manager", "nfd-worker", "aws-cloud-controller-manager"};
  for (int m = 0; m < 4; ++m) {
    if (m) s += ',';
    s += R"({"manager":")" + std::string(managers[m]) +
         R"(","operation":"Update","apiVersion":"v1","time":"2026-11-30T08:16:00Z","fieldsType":"FieldsV1","fieldsV1":)";
    s += R"({"f:metadata":{"f:annotations":{".":{},"f:alpha.kubernetes.io/provided-node-ip":{},)"
         R"("f:node.alpha.kubernetes.io/ttl":{}},"f:labels":{".":{},"f:beta.kubernetes.io/arch":{},)"
         R"("f:kubernetes.io/hostname":{},"f:nvidia.com/gpu.product":{},"f:nvidia.com/gpu.memory":{}}},)"
         R"("f:status":{"f:allocatable":{"f:nvidia.com/gpu":{},"f:memory":{}},"f:capacity":{"f:nvidia.com/gpu":{}},)"
         R"("f:conditions":{"k:{\"type\":\"Ready\"}":{"f:lastHeartbeatTime":{},"f:message":{},"f:reason":{}}}}})";
    s += R"(,"subresource":"status"})";
  }
  s += R"(]},"spec":{"providerID":"aws:///)" + zone + "/i-0" + hex(i, 16) + R"(","taints":[)";
  s += R"({"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"})";
  if (spot) s += R"(,{"key":"fleetsched.io/spot","value":"true","effect":"NoSchedule"})";
  s += R"(]},"status":{"capacity":{"cpu":"96","ephemeral-storage":"3905110864Ki","hugepages-1Gi":"0",)"
       R"("hugepages-2Mi":"0","memory":"1176637456Ki","nvidia.com/gpu":"8","pods":"737","vpc.amazonaws.com/efa":"4"},)"
       R"("allocatable":{"cpu":"95690m","ephemeral-storage":"3598798569707","hugepages-1Gi":"0","hugepages-2Mi":"0",)"
       R"("memory":"1147304848Ki","nvidia.com/gpu":"8","pods":"737","vpc.amazonaws.com/efa":"4"},"conditions":[)";
  const char* conds[][3] = {{"MemoryPressure", "False", "KubeletHasSufficientMemory"},
                            {"DiskPressure", "False", "KubeletHasNoDiskPressure"},
                            {"PIDPressure", "False", "KubeletHasSufficientPID"},
                            {"Ready", "True", "KubeletReady"}};
  for (int c = 0; c < 4; ++c) {
    if (c) s += ',';
    s += R"({"type":")" + std::string(conds[c][0]) + R"(","status":")" + conds[c][1] +
         R"(","lastHeartbeatTime":"2026-12-02T09:00:00Z","lastTransitionTime":"2026-11-30T08:16:00Z","reason":")" +
         conds[c][2] + R"(","message":"kubelet has sufficient resources and is posting status"})";
  }
  s += R"(],"addresses":[{"type":"InternalIP","address":"10.0.)" + std::to_string(i % 256) +
       R"(.7"},{"type":"InternalDNS","address":")" + name + R"("},{"type":"Hostname","address":")" + name +
       R"("}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":")" + hex(i, 32) +
       R"(","systemUUID":"ec2)" + hex(i + 9, 29) + R"(","bootID":")" + hex(i + 5, 32) +
       R"(","kernelVersion":"6.1.115-126.197.amzn2023.x86_64","osImage":"Amazon Linux 2023.6.20241121",)"
       R"("containerRuntimeVersion":"containerd://1.7.23","kubeletVersion":"v1.36.3","kubeProxyVersion":"",)"
       R"("operatingSystem":"linux","architecture":"amd64"},"images":[)";
  for (int m = 0; m < 24; ++m) {
    if (m) s += ',';
    std::string repo = "602401143452.dkr.ecr.us-east-1.amazonaws.com/team-" + std::to_string(m) + "/service";
    s += R"({"names":[")" + repo + "@sha256:" + hex(i * 64 + m, 64) + R"(",")" + repo + ":v1." +
         std::to_string(m) + R"("],"sizeBytes":)" + std::to_string(100000000 + m * 7919) + "}";
  }
  s += "]}}";
  return s;
}

struct Inputs {
  std::string namesBody;
  std::string nodesBody;
  std::string podBody;
  size_t nodeBytes = 0;
};

const Inputs& inputs() {
  static const Inputs in = [] {
    Inputs r;
    const std::string& pod = trainPodJson();
    r.namesBody = R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":[)";
    for (int i = 0; i < 5000; ++i) {
      if (i) r.namesBody += ',';
      r.namesBody += '"' + nodeName(i) + '"';
    }
    r.namesBody += "]}";
    r.nodesBody = R"({"Pod":)" + pod + R"(,"Nodes":{"metadata":{},"items":[)";
    for (int i = 0; i < 500; ++i) {
      if (i) r.nodesBody += ',';
      std::string n = makeNode(i);
      r.nodeBytes += n.size();
      r.nodesBody += n;
    }
    r.nodesBody += R"(]},"NodeNames":null})";
    r.podBody = R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":[]})";
    return r;
  }();
  return in;
}

void BM_DecodeExtenderArgs_NodeNames5000(benchmark::State& state) {
  PaddedBuffer buf(inputs().namesBody);
  Decoder d;
  ExtenderArgs args;
  if (!d.decodeExtenderArgs(buf.view(), args) || args.nodeNames.size() != 5000 ||
      args.nodeNames[4999] != nodeName(4999) || args.pod.requests.milliCpu != 16250) {
    die("NodeNames decode check failed: " + d.errorMessage());
  }
  for (auto _ : state) {
    bool ok = d.decodeExtenderArgs(buf.view(), args);
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(args.nodeNames.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.view().size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 5000));
}
BENCHMARK(BM_DecodeExtenderArgs_NodeNames5000)->Unit(benchmark::kMicrosecond);

// A full decode of every node (the memo off: what a request with nodes not seen before costs).
void BM_DecodeExtenderArgs_FullNodes500(benchmark::State& state) {
  PaddedBuffer buf(inputs().nodesBody);
  Decoder d;
  d.setNodeMemo(state.range(0) != 0);
  ExtenderArgs args;
  if (!d.decodeExtenderArgs(buf.view(), args) || args.nodes.size() != 500 ||
      args.nodes[499].name != nodeName(499) || args.nodes[7].allocatable.get("nvidia.com/gpu") != 8 ||
      args.nodes[7].allocatable.milliCpu != 95690 || args.nodes[1].taints.size() != 2 ||
      args.nodes[3].raw.size() < 11000) {
    die("full Nodes decode check failed: " + d.errorMessage());
  }
  state.counters["node_bytes"] = static_cast<double>(inputs().nodeBytes / 500);
  for (auto _ : state) {
    bool ok = d.decodeExtenderArgs(buf.view(), args);
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(args.nodes.data());
  }
  if (state.range(0) != 0 && d.reusedNodes() != 500) die("full Nodes decode did not reuse the nodes");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.view().size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 500));
}
// Arg 0: memo off (every node decoded); arg 1: memo on, the same nodes as the request before.
BENCHMARK(BM_DecodeExtenderArgs_FullNodes500)->Arg(0)->Arg(1)->ArgName("memo")->Unit(benchmark::kMicrosecond);

// The memo's worst case: every node new to it, so a full decode plus copying each node into
// the memo (a request after the node set changed, or the first ones of a rotating subset).
void BM_DecodeExtenderArgs_FullNodes500_Unseen(benchmark::State& state) {
  PaddedBuffer buf(inputs().nodesBody);
  Decoder d;
  ExtenderArgs args;
  for (auto _ : state) {
    state.PauseTiming();
    d.setNodeMemo(false);
    d.setNodeMemo(true);
    state.ResumeTiming();
    bool ok = d.decodeExtenderArgs(buf.view(), args);
    benchmark::DoNotOptimize(ok);
    if (d.reusedNodes() != 0 || args.nodes.size() != 500) die("unseen nodes were reused");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.view().size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 500));
}
BENCHMARK(BM_DecodeExtenderArgs_FullNodes500_Unseen)->Unit(benchmark::kMicrosecond);

// The usual miss: one node of 500 changed since the last request (its resourceVersion is
// rewritten every iteration), so the request decodes in full and the memo takes the new object.
void BM_DecodeExtenderArgs_FullNodes500_OneChanged(benchmark::State& state) {
  std::string body = inputs().nodesBody;
  const size_t size = body.size();
  body.append(kDecodePadding, '\0');
  Decoder d;
  ExtenderArgs args;
  if (!d.decodeExtenderArgs(std::string_view(body.data(), size), args)) die(d.errorMessage());
  const std::string_view raw = args.nodes[250].raw;
  const size_t rv = body.find(R"("resourceVersion":")", static_cast<size_t>(raw.data() - body.data())) + 19;
  // Six decimal digits, least significant first: unique per iteration, and never the original
  // value within the iterations a run makes.
  uint64_t version = 0;
  for (auto _ : state) {
    ++version;
    for (uint64_t i = 0, v = version; i < 6; ++i, v /= 10) body[rv + i] = static_cast<char>('0' + v % 10);
    bool ok = d.decodeExtenderArgs(std::string_view(body.data(), size), args);
    benchmark::DoNotOptimize(ok);
    if (!ok || d.reusedNodes() != 0 || args.nodes.size() != 500) die("the changed node was not decoded");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 500));
}
BENCHMARK(BM_DecodeExtenderArgs_FullNodes500_OneChanged)->Unit(benchmark::kMicrosecond);

void BM_DecodeExtenderArgs_Pod(benchmark::State& state) {
  PaddedBuffer buf(inputs().podBody);
  Decoder d;
  ExtenderArgs args;
  if (!d.decodeExtenderArgs(buf.view(), args) || args.pod.tolerations.size() != 5 ||
      args.pod.requests.get("nvidia.com/gpu") != 4) {
    die("pod decode check failed: " + d.errorMessage());
  }
  for (auto _ : state) {
    bool ok = d.decodeExtenderArgs(buf.view(), args);
    benchmark::DoNotOptimize(ok);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.view().size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DecodeExtenderArgs_Pod)->Unit(benchmark::kMicrosecond);

// A full-Nodes filter reply for 5,000 nodes: 4,000 pass (their input bytes echoed), 1,000 fail
// (in input order, which is not sorted, so the failed maps are sorted on every encode as Go does).
void BM_EncodeFilterResult5000(benchmark::State& state) {
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back(nodeName((i * 2654435761u) % 5000));
  FilterResult r;
  std::vector<std::string> items;
  std::vector<FailedNode> failed, unresolvable;
  for (int i = 0; i < 5000; ++i) {
    if (i % 5 == 1) {
      failed.push_back({names[i], "only 1 free nvidia.com/gpu, need 4"});
    } else if (i % 5 == 3 && i % 2 == 0) {
      unresolvable.push_back({names[i], "GPU product Tesla-T4 not in allowed set"});
    } else if (i % 5 == 3) {
      failed.push_back({names[i], "node(s) had untolerated taint {fleetsched.io/spot: true}"});
    } else {
      items.push_back(R"({"metadata":{"name":")" + names[i] + R"("}})");
    }
  }
  for (const std::string& item : items) r.nodesRaw.push_back(item);
  Buffer out;
  r.failedNodes = failed;
  r.failedAndUnresolvableNodes = unresolvable;
  encodeFilterResult(r, out);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  simdjson::dom::array pass;
  simdjson::dom::object f1, f2;
  if (p.parse(out.str()).get(doc) != simdjson::SUCCESS || doc["Nodes"]["items"].get_array().get(pass) ||
      doc["FailedNodes"].get_object().get(f1) || doc["FailedAndUnresolvableNodes"].get_object().get(f2) ||
      pass.size() + f1.size() + f2.size() != 5000) {
    die("filter encode check failed");
  }
  for (auto _ : state) {
    out.clear();
    encodeFilterResult(r, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 5000));
}
BENCHMARK(BM_EncodeFilterResult5000)->Unit(benchmark::kMicrosecond);

void BM_EncodeHostPriorityList5000(benchmark::State& state) {
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back(nodeName(i));
  std::vector<HostPriority> list;
  for (int i = 0; i < 5000; ++i) list.push_back({names[i], i % 11});
  Buffer out;
  for (auto _ : state) {
    out.clear();
    encodeHostPriorityList(list, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 5000));
}
BENCHMARK(BM_EncodeHostPriorityList5000)->Unit(benchmark::kMicrosecond);

// The extender's NodeNames reply: names pre-encoded in a NodeNameTable, failed maps walked by
// rank, each reason escaped once. 1,000 pass and 4,000 fail, as a 2-GPU pod on the 5,000-node
// corpus, listed in a shuffled order as kube-scheduler sends them.
void BM_EncodeNodeNamesFilter5000(benchmark::State& state) {
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back(nodeName(i));
  std::vector<std::string_view> views(names.begin(), names.end());
  std::vector<uint32_t> tableIds(names.size());
  for (uint32_t id = 0; id < tableIds.size(); ++id) tableIds[id] = id;
  NodeNameTable table;
  table.build(1, static_cast<uint32_t>(names.size()), tableIds, views);
  const FilterReason reasons[] = {{},
                                  {},
                                  {"only 1 free nvidia.com/gpu, need 2", FailedMap::Failed},
                                  {"node has no nvidia.com/gpu (Node does not have GPU)", FailedMap::Unresolvable},
                                  {"node(s) had untolerated taint {fleetsched.io/spot: true}", FailedMap::Failed}};
  std::vector<uint32_t> ids, passed;
  std::vector<uint8_t> codes;
  for (int i = 0; i < 5000; ++i) ids.push_back(static_cast<uint32_t>((i * 2654435761u) % 5000));
  for (uint32_t id : ids) {
    const uint8_t code = id % 5 == 0 ? 1 : id % 5 == 1 ? 3 : id % 2 == 0 ? 2 : 4;
    codes.push_back(code);
    if (code == 1) passed.push_back(id);
  }
  const NodeNamesVerdicts<uint8_t> v{ids, codes, reasons, passed, {}, {}};
  Buffer out;
  encodeNodeNamesFilter(table, v, out);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  simdjson::dom::array pass;
  simdjson::dom::object f1, f2;
  if (p.parse(out.str()).get(doc) != simdjson::SUCCESS || doc["NodeNames"].get_array().get(pass) ||
      doc["FailedNodes"].get_object().get(f1) || doc["FailedAndUnresolvableNodes"].get_object().get(f2) ||
      pass.size() != 1000 || pass.size() + f1.size() + f2.size() != 5000) {
    die("NodeNames filter encode check failed");
  }
  for (auto _ : state) {
    out.clear();
    encodeNodeNamesFilter(table, v, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 5000));
}
BENCHMARK(BM_EncodeNodeNamesFilter5000)->Unit(benchmark::kMicrosecond);

// What a node joining or leaving costs the extender's reader: the name table (ranks in byte
// order, JSON-encoded names, the lookup) is rebuilt once per node set, on the first NodeNames
// request after the change. EKS-like names, 5,000 nodes.
void BM_NodeNameTableBuild(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "ip-10-%d-%d-%d.us-west-2.compute.internal", i / 65536, (i / 256) % 256, i % 256);
    names.push_back(buf);
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  std::vector<uint32_t> ids(names.size());
  for (uint32_t id = 0; id < ids.size(); ++id) ids[id] = id;
  NodeNameTable check;
  check.build(1, static_cast<uint32_t>(count), ids, views);
  if (check.size() != static_cast<uint32_t>(count)) state.SkipWithError("table size");
  for (uint32_t r = 1; r < check.size(); ++r) {
    if (check.name(check.idAt(r - 1)) >= check.name(check.idAt(r))) state.SkipWithError("table order");
  }
  for (auto _ : state) {
    NodeNameTable table;  // a fresh table, as after a restart
    table.build(1, static_cast<uint32_t>(count), ids, views);
    benchmark::DoNotOptimize(table.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * count);
}
BENCHMARK(BM_NodeNameTableBuild)->Arg(5000)->Unit(benchmark::kMicrosecond);

// Optional corpora from `fleetsched gen-fleet` (tools/fleet), given by environment variables:
//   FLEETSCHED_CODEC_BENCH_REQUESTS  an ndjson file of ExtenderArgs bodies (requests-full.ndjson
//                                    or requests-nodenames.ndjson); the first line is decoded
//   FLEETSCHED_CODEC_BENCH_NODELIST  a `kubectl get nodes -o json` file (nodes.json)
void registerCorpusBenchmarks() {
  if (const char* path = std::getenv("FLEETSCHED_CODEC_BENCH_REQUESTS")) {
    std::string all = readFile(path);
    auto body = std::make_shared<PaddedBuffer>(std::string_view(all).substr(0, all.find('\n')));
    for (bool memo : {false, true}) {
      const char* name =
          memo ? "BM_DecodeExtenderArgs_CorpusRequest/memo:1" : "BM_DecodeExtenderArgs_CorpusRequest/memo:0";
      benchmark::RegisterBenchmark(name, [body, memo](benchmark::State& state) {
        Decoder d;
        d.setNodeMemo(memo);
        ExtenderArgs args;
        if (!d.decodeExtenderArgs(body->view(), args)) die("corpus request: " + d.errorMessage());
        size_t items = args.hasNodes ? args.nodes.size() : args.nodeNames.size();
        state.counters["nodes"] = static_cast<double>(items);
        for (auto _ : state) {
          bool ok = d.decodeExtenderArgs(body->view(), args);
          benchmark::DoNotOptimize(ok);
        }
        state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body->view().size()));
        state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * items));
      })->Unit(benchmark::kMicrosecond);
    }
  }
  if (const char* path = std::getenv("FLEETSCHED_CODEC_BENCH_NODELIST")) {
    auto file = std::make_shared<PaddedBuffer>(readFile(path));
    benchmark::RegisterBenchmark("BM_DecodeNodeListFile", [file](benchmark::State& state) {
      Decoder d(file->view().size() + 1);
      NodeList list;
      if (!d.decodeNodeList(file->view(), list) || list.items.empty()) die("node list: " + d.errorMessage());
      state.counters["nodes"] = static_cast<double>(list.items.size());
      for (auto _ : state) {
        bool ok = d.decodeNodeList(file->view(), list);
        benchmark::DoNotOptimize(ok);
      }
      state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * file->view().size()));
      state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * list.items.size()));
    })->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace fleetsched::codec

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fleetsched::codec::registerCorpusBenchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
