#include "engine/audit.h"

#include <unordered_map>

#include "codec/json_writer.h"

namespace fleetsched::engine {
namespace {

struct Expected {
  int64_t milliCpu = 0;
  int64_t memory = 0;
  int64_t pods = 0;
  int64_t gpus = 0;
};

int64_t gpuUsed(const plugins::NodeInfo& n) {
  return n.scalarCount > 0 ? n.scalars[0].used : 0;
}

int64_t gpuAllocatable(const plugins::NodeInfo& n) {
  return n.scalarCount > 0 ? n.scalars[0].allocatable : 0;
}

}  // namespace

bool audit(const cache::Snapshot& snap, const cache::Cache& cache, bool compare, std::string_view podList,
           codec::Decoder& decoder, AuditResult& out, std::string& error) {
  out = AuditResult{};
  std::unordered_map<std::string_view, Expected> expected;
  codec::PodList pods;
  if (compare) {
    if (!decoder.decodePodList(podList, pods)) {
      error = "pod list: " + decoder.errorMessage();
      return false;
    }
    for (const codec::Pod& p : pods.items) {
      if (p.nodeName.empty() || p.phase == codec::PodPhase::Succeeded || p.phase == codec::PodPhase::Failed) continue;
      const plugins::NodeInfo* n = snap.find(p.nodeName);
      Expected& e = expected[p.nodeName];
      e.milliCpu += p.requests.milliCpu;
      e.memory += p.requests.memory;
      e.pods += 1;
      if (n != nullptr && n->scalarCount > 0) e.gpus += p.requests.get(n->scalars[0].name);
      ++out.checkedPods;
    }
  }
  const cache::CacheStats stats = cache.stats();
  std::string& j = out.json;
  codec::JsonWriter w(j);
  w.raw("{\"mismatches\":[");
  bool first = true;
  snap.forEachNode([&](const plugins::NodeInfo& n) {
    ++out.nodes;
    const int64_t used = gpuUsed(n);
    const bool over = used > gpuAllocatable(n);
    if (over) ++out.overcommittedNodes;
    bool differs = false;
    Expected e;
    if (compare) {
      auto it = expected.find(n.name);
      if (it != expected.end()) e = it->second;
      differs = e.gpus != used || e.milliCpu != n.usedMilliCpu || e.pods != n.usedPods;
    }
    if (!over && !differs) return;
    if (differs && stats.reservationsLive == 0) ++out.mismatchedNodes;
    if (!first) w.ch(',');
    first = false;
    w.raw("{\"node\":");
    w.string(n.name);
    w.raw(",\"gpuAllocatable\":");
    w.int64(gpuAllocatable(n));
    w.raw(",\"cache\":{\"gpus\":");
    w.int64(used);
    w.raw(",\"milliCpu\":");
    w.int64(n.usedMilliCpu);
    w.raw(",\"pods\":");
    w.int64(n.usedPods);
    w.ch('}');
    if (compare) {
      w.raw(",\"podList\":{\"gpus\":");
      w.int64(e.gpus);
      w.raw(",\"milliCpu\":");
      w.int64(e.milliCpu);
      w.raw(",\"pods\":");
      w.int64(e.pods);
      w.ch('}');
    }
    w.raw(",\"overcommitted\":");
    w.boolean(over);
    w.ch('}');
  });
  w.raw("],\"comparedWithApiServer\":");
  w.boolean(compare);
  w.raw(",\"nodes\":");
  w.int64(static_cast<int64_t>(out.nodes));
  w.raw(",\"checkedPods\":");
  w.int64(static_cast<int64_t>(out.checkedPods));
  w.raw(",\"mismatchedNodes\":");
  w.int64(static_cast<int64_t>(out.mismatchedNodes));
  w.raw(",\"overcommittedNodes\":");
  w.int64(static_cast<int64_t>(out.overcommittedNodes));
  w.raw(",\"reservationsLive\":");
  w.int64(static_cast<int64_t>(stats.reservationsLive));
  w.raw(",\"gpuOvercommits\":");
  w.int64(static_cast<int64_t>(stats.gpuOvercommits));
  w.raw(",\"clean\":");
  w.boolean(out.mismatchedNodes == 0 && out.overcommittedNodes == 0);
  w.raw("}\n");
  return true;
}

}  // namespace fleetsched::engine
