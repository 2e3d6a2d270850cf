#include "tools/loadgen/corpus.h"

#include <simdjson.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "tools/fleet/fleet_gen.h"
#include "tools/loadgen/kube_order.h"

namespace fleetsched::tools::loadgen {

namespace {

bool readFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// corpus.json (written by gen-fleet) pins the generator options so the load generator rebuilds
// exactly the fleet the server loaded from nodes.json.
bool applyManifest(const std::string& dir, fleet::FleetOptions& fleetOptions, std::string& error) {
  std::string text;
  if (!readFile(dir + "/corpus.json", text)) {
    error = "cannot read " + dir + "/corpus.json (write the corpus with gen-fleet)";
    return false;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS) {
    error = dir + "/corpus.json is not valid JSON";
    return false;
  }
  uint64_t u = 0;
  double d = 0;
  std::string_view s;
  if (doc["nodes"].get(u) == simdjson::SUCCESS) fleetOptions.nodes = u;
  if (doc["seed"].get(u) == simdjson::SUCCESS) fleetOptions.seed = u;
  if (doc["minNodeBytes"].get(u) == simdjson::SUCCESS) fleetOptions.minNodeBytes = u;
  if (doc["maxNodeBytes"].get(u) == simdjson::SUCCESS) fleetOptions.maxNodeBytes = u;
  if (doc["zones"].get(u) == simdjson::SUCCESS) fleetOptions.zones = static_cast<int>(u);
  if (doc["cpuOnlyFraction"].get(d) == simdjson::SUCCESS) fleetOptions.cpuOnlyFraction = d;
  if (doc["region"].get(s) == simdjson::SUCCESS) fleetOptions.region = std::string(s);
  return true;
}

struct PodId {
  std::string namespace_, name, uid;
};

// The fleet and the pods a corpus is built from. nodeWires holds every node's object where the
// corpus needs them (full mode's lists, the fake API server's fleet), else is empty.
struct Source {
  std::vector<std::string> names, zones, nodeWires;
  std::vector<std::string> podWires;
  std::vector<PodId> podIds;
};

bool generate(const LoadgenOptions& o, Source& src, std::string& error) {
  fleet::FleetOptions fo;
  fo.nodes = o.corpusNodes;
  fo.seed = o.seed;
  fo.minNodeBytes = o.minNodeBytes;
  fo.maxNodeBytes = o.maxNodeBytes;
  fo.cpuOnlyFraction = o.cpuOnlyFraction;
  if (!o.corpusDir.empty() && !applyManifest(o.corpusDir, fo, error)) return false;
  fleet::FleetGenerator fleetGen(fo);
  for (const fleet::NodeSummary& s : fleetGen.summaries()) {
    src.names.push_back(s.name);
    src.zones.push_back(s.zone);
  }
  const size_t wires = o.apiserverPort >= 0               ? fleetGen.size()
                       : o.mode == ArgsMode::kNodeNames ? 0
                                                        : std::min(o.fullModeNodes, fleetGen.size());
  for (size_t i = 0; i < wires; ++i) src.nodeWires.push_back(fleetGen.nodeWire(i));
  fleet::PodOptions po;
  po.pods = std::max<size_t>(o.corpusPods, 1);
  po.seed = fo.seed;
  fleet::PodGenerator pods(po);
  for (size_t i = 0; i < pods.size(); ++i) {
    src.podWires.push_back(pods.podWire(i));
    const fleet::PodSummary& ps = pods.summary(i);
    src.podIds.push_back({ps.namespace_, ps.name, ps.uid});
  }
  return true;
}

// The items of the v1 List in `path` (kubectl get -o json writes one); they live in `parser`.
bool readItems(const std::string& path, simdjson::dom::parser& parser, simdjson::dom::array& items,
               std::string& error) {
  std::string text;
  if (!readFile(path, text)) {
    error = "cannot read " + path;
    return false;
  }
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS) {
    error = path + " is not valid JSON";
    return false;
  }
  if (doc["items"].get(items) != simdjson::SUCCESS) {
    error = path + " is not a list: it has no \"items\" array";
    return false;
  }
  return true;
}

// A cluster's dump: a NodeList and a PodList, such as `kubectl get nodes -o json` writes. The
// snapshot order takes zones from topology.kubernetes.io/zone, as kube-scheduler's node tree does.
bool readDump(const LoadgenOptions& o, Source& src, std::string& error) {
  simdjson::dom::parser parser;
  simdjson::dom::array items;
  if (!readItems(o.nodesFile, parser, items, error)) return false;
  for (simdjson::dom::element item : items) {
    std::string_view name, zone;
    if (item["metadata"]["name"].get(name) != simdjson::SUCCESS || name.empty()) {
      error = o.nodesFile + ": node " + std::to_string(src.names.size()) + " has no metadata.name";
      return false;
    }
    if (item["metadata"]["labels"]["topology.kubernetes.io/zone"].get(zone) != simdjson::SUCCESS) zone = {};
    src.names.emplace_back(name);
    src.zones.emplace_back(zone);
    if (o.apiserverPort >= 0 || o.mode == ArgsMode::kFull) src.nodeWires.push_back(simdjson::minify(item));
  }
  if (!readItems(o.podsFile, parser, items, error)) return false;
  for (simdjson::dom::element item : items) {
    std::string_view ns, name, uid;
    if (item["metadata"]["name"].get(name) != simdjson::SUCCESS || name.empty()) {
      error = o.podsFile + ": pod " + std::to_string(src.podWires.size()) + " has no metadata.name";
      return false;
    }
    if (item["metadata"]["namespace"].get(ns) != simdjson::SUCCESS) ns = "default";
    if (item["metadata"]["uid"].get(uid) != simdjson::SUCCESS) uid = {};
    src.podWires.push_back(simdjson::minify(item));
    src.podIds.push_back({std::string(ns), std::string(name), std::string(uid)});
  }
  if (src.names.empty() || src.podWires.empty()) {
    error = src.names.empty() ? o.nodesFile + " holds no nodes" : o.podsFile + " holds no pods";
    return false;
  }
  return true;
}

}  // namespace

bool buildCorpus(const LoadgenOptions& o, Corpus& corpus, std::string& error) {
  if (!o.requestsFile.empty()) {
    std::string text;
    if (!readFile(o.requestsFile, text)) {
      error = "cannot read " + o.requestsFile;
      return false;
    }
    std::string_view all = corpus.keep(std::move(text));
    size_t pos = 0;
    while (pos < all.size()) {
      size_t end = all.find('\n', pos);
      if (end == std::string_view::npos) end = all.size();
      if (end > pos) corpus.add({all.substr(pos, end - pos)});
      pos = end + 1;
    }
    if (corpus.bodies.empty()) {
      error = o.requestsFile + " holds no request bodies";
      return false;
    }
  } else {
    Source src;
    if (!o.nodesFile.empty() ? !readDump(o, src, error) : !generate(o, src, error)) return false;
    const bool names = o.mode == ArgsMode::kNodeNames;
    const size_t n = names ? src.names.size() : std::min(o.fullModeNodes, src.names.size());
    // Each node's part of the list: its name (NodeNames mode) or its whole object (full mode).
    std::vector<std::string> items;
    items.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (names) {
        items.push_back(src.names[i]);
      } else {
        items.push_back(src.nodeWires[i]);
        corpus.wireByName.emplace(corpus.keep(src.names[i]), corpus.keep(items.back()));
      }
    }
    auto tailOf = [&](const std::vector<std::string>& list) {
      return corpus.keep(names ? fleet::nodeNamesArgsTail(list) : fleet::fullArgsTail(list));
    };
    const std::string_view head = names ? fleet::kNodeNamesArgsHead : fleet::kFullArgsHead;
    const size_t pods = src.podWires.size();
    std::vector<std::string_view> tails;
    if (o.order == NodeOrder::kRepeated) {
      tails.push_back(tailOf(items));
    } else {
      std::vector<std::string_view> zoneOf(src.zones.begin(), src.zones.begin() + static_cast<ptrdiff_t>(n));
      const std::vector<uint32_t> snapshotOrder = kubeZoneRoundRobin(zoneOf);
      const size_t toFind = kubeNodesToFind(n, o.percentageOfNodesToScore);
      // A different order per pod; full mode keeps 8 (each list is megabytes of Node objects,
      // and the server's memo of node bytes does not depend on their order).
      const size_t orders = names ? pods : std::min<size_t>(pods, 8);
      std::mt19937_64 rng(o.seed);
      size_t start = 0;
      std::vector<std::string> list;
      for (size_t k = 0; k < orders; ++k) {
        list.clear();
        for (uint32_t pos : kubeFilterOrder(n, start, toFind, o.parallelism, rng)) list.push_back(items[snapshotOrder[pos]]);
        tails.push_back(tailOf(list));
        start = (start + toFind) % std::max<size_t>(n, 1);  // every node passes: processed = found
      }
    }
    for (size_t i = 0; i < pods; ++i) corpus.add({head, corpus.keep(std::move(src.podWires[i])), tails[i % tails.size()]});
    if (o.apiserverPort >= 0) {
      for (const std::string& wire : src.nodeWires) corpus.apiNodes.add(wire);
    }
    if (o.churn) {
      for (size_t i = 0; i < pods; ++i) {
        const PodId& id = src.podIds[i];
        corpus.templates.push_back({corpus.keep(id.namespace_), corpus.keep(id.name), corpus.keep(id.uid),
                                    corpus.bodies[i].parts[1], corpus.bodies[i].parts[2]});
      }
    }
  }
  for (int v = 0; v < 2; ++v) {
    corpus.headers[static_cast<size_t>(v)].reserve(corpus.bodies.size());
    for (const auto& b : corpus.bodies) corpus.headers[static_cast<size_t>(v)].push_back(requestHead(o, v, b.size));
  }
  return true;
}

}  // namespace fleetsched::tools::loadgen
