#include "tools/loadgen/kube_order.h"

#include <algorithm>
#include <cmath>

namespace fleetsched::tools::loadgen {

size_t kubeChunkSize(size_t nodes, int parallelism) {
  size_t s = static_cast<size_t>(std::sqrt(static_cast<double>(nodes)));
  const size_t r = nodes / static_cast<size_t>(std::max(parallelism, 1)) + 1;
  if (s > r) s = r;
  return std::max<size_t>(s, 1);
}

size_t kubeNodesToFind(size_t nodes, int percentage) {
  constexpr size_t kMinFeasibleNodesToFind = 100;
  constexpr int kMinFeasibleNodesPercentageToFind = 5;
  if (nodes < kMinFeasibleNodesToFind) return nodes;
  if (percentage <= 0) {
    percentage = std::max(50 - static_cast<int>(nodes / 125), kMinFeasibleNodesPercentageToFind);
  }
  const size_t found = nodes * static_cast<size_t>(std::min(percentage, 100)) / 100;
  return std::max(found, kMinFeasibleNodesToFind);
}

std::vector<uint32_t> kubeFilterOrder(size_t nodes, size_t start, size_t count, int parallelism,
                                      std::mt19937_64& rng) {
  std::vector<uint32_t> out;
  count = std::min(count, nodes);
  if (count == 0) return out;
  out.reserve(count);
  const size_t chunk = kubeChunkSize(nodes, parallelism);
  const size_t chunks = (nodes + chunk - 1) / chunk;
  const size_t workers = std::min(chunks, static_cast<size_t>(std::max(parallelism, 1)));
  std::uniform_real_distribution<double> checkTime(0.5, 1.5), startTime(0.0, 2.0);
  struct Worker {
    double doneAt;  // when the check of `piece` finishes
    size_t piece, end;
  };
  size_t nextChunk = 0;
  std::vector<Worker> ws(workers);
  for (Worker& w : ws) {
    w.piece = nextChunk * chunk;
    w.end = std::min(w.piece + chunk, nodes);
    ++nextChunk;
    w.doneAt = startTime(rng) + checkTime(rng);
  }
  while (out.size() < count) {
    auto w = std::min_element(ws.begin(), ws.end(), [](const Worker& a, const Worker& b) { return a.doneAt < b.doneAt; });
    out.push_back(static_cast<uint32_t>((start + w->piece) % nodes));
    if (++w->piece == w->end) {
      if (nextChunk == chunks) {
        w->doneAt = INFINITY;  // no chunk left: this goroutine returns
        if (std::all_of(ws.begin(), ws.end(), [](const Worker& x) { return std::isinf(x.doneAt); })) break;
        continue;
      }
      w->piece = nextChunk * chunk;
      w->end = std::min(w->piece + chunk, nodes);
      ++nextChunk;
    }
    w->doneAt += checkTime(rng);
  }
  return out;
}

std::vector<uint32_t> kubeZoneRoundRobin(const std::vector<std::string_view>& zoneOfNode) {
  std::vector<std::string_view> zones;  // first-seen order
  std::vector<std::vector<uint32_t>> byZone;
  for (uint32_t i = 0; i < zoneOfNode.size(); ++i) {
    auto it = std::find(zones.begin(), zones.end(), zoneOfNode[i]);
    const size_t z = static_cast<size_t>(it - zones.begin());
    if (it == zones.end()) {
      zones.push_back(zoneOfNode[i]);
      byZone.emplace_back();
    }
    byZone[z].push_back(i);
  }
  std::vector<uint32_t> out;
  out.reserve(zoneOfNode.size());
  for (size_t k = 0; out.size() < zoneOfNode.size(); ++k) {
    for (const auto& zone : byZone) {
      if (k < zone.size()) out.push_back(zone[k]);
    }
  }
  return out;
}

}  // namespace fleetsched::tools::loadgen
