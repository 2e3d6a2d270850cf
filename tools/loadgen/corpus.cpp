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
    fleet::FleetOptions fo;
    fo.nodes = o.corpusNodes;
    fo.seed = o.seed;
    fo.minNodeBytes = o.minNodeBytes;
    fo.maxNodeBytes = o.maxNodeBytes;
    fo.cpuOnlyFraction = o.cpuOnlyFraction;
    if (!o.corpusDir.empty() && !applyManifest(o.corpusDir, fo, error)) return false;
    fleet::FleetGenerator fleetGen(fo);
    fleet::PodOptions po;
    po.pods = std::max<size_t>(o.corpusPods, 1);
    po.seed = fo.seed;
    fleet::PodGenerator pods(po);
    const bool names = o.mode == ArgsMode::kNodeNames;
    const size_t n = names ? fleetGen.size() : std::min(o.fullModeNodes, fleetGen.size());
    // Each node's part of the list: its name (NodeNames mode) or its whole object (full mode).
    std::vector<std::string> items;
    items.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (names) {
        items.push_back(fleetGen.summaries()[i].name);
      } else {
        items.push_back(fleetGen.nodeWire(i));
        corpus.wireByName.emplace(corpus.keep(fleetGen.summaries()[i].name), corpus.keep(items.back()));
      }
    }
    auto tailOf = [&](const std::vector<std::string>& list) {
      return corpus.keep(names ? fleet::nodeNamesArgsTail(list) : fleet::fullArgsTail(list));
    };
    const std::string_view head = names ? fleet::kNodeNamesArgsHead : fleet::kFullArgsHead;
    std::vector<std::string_view> tails;
    if (o.order == NodeOrder::kRepeated) {
      tails.push_back(tailOf(items));
    } else {
      std::vector<std::string_view> zoneOf;
      for (size_t i = 0; i < n; ++i) zoneOf.push_back(fleetGen.summaries()[i].zone);
      const std::vector<uint32_t> snapshotOrder = kubeZoneRoundRobin(zoneOf);
      const size_t toFind = kubeNodesToFind(n, o.percentageOfNodesToScore);
      // A different order per pod; full mode keeps 8 (each list is megabytes of Node objects,
      // and the server's memo of node bytes does not depend on their order).
      const size_t orders = names ? pods.size() : std::min<size_t>(pods.size(), 8);
      std::mt19937_64 rng(fo.seed);
      size_t start = 0;
      std::vector<std::string> list;
      for (size_t k = 0; k < orders; ++k) {
        list.clear();
        for (uint32_t pos : kubeFilterOrder(n, start, toFind, o.parallelism, rng)) list.push_back(items[snapshotOrder[pos]]);
        tails.push_back(tailOf(list));
        start = (start + toFind) % std::max<size_t>(n, 1);  // every node passes: processed = found
      }
    }
    for (size_t i = 0; i < pods.size(); ++i) corpus.add({head, corpus.keep(pods.podWire(i)), tails[i % tails.size()]});
    if (o.apiserverPort >= 0) {
      for (size_t i = 0; i < fleetGen.size(); ++i) corpus.apiNodes.add(fleetGen.nodeWire(i));
    }
    if (o.churn) {
      for (size_t i = 0; i < pods.size(); ++i) {
        const fleet::PodSummary& ps = pods.summary(i);
        corpus.templates.push_back({corpus.keep(ps.namespace_), corpus.keep(ps.name), corpus.keep(ps.uid),
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
