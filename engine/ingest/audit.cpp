#include "engine/ingest/audit.h"

#include "codec/json_writer.h"

namespace fleetsched::engine {

AuditLedger captureLedger(const cache::Snapshot& snap, const cache::Cache& cache) {
  AuditLedger l;
  const cache::CacheStats stats = cache.stats();
  l.reservationsLive = stats.reservationsLive;
  l.gpuOvercommits = stats.gpuOvercommits;
  snap.forEachNode([&](const plugins::NodeInfo& n) {
    AuditLedger::Node& e = l.nodes.emplace_back();
    e.name = n.name;
    if (n.scalarCount > 0) {
      e.gpuResource = n.scalars[0].name;
      e.gpuAllocatable = n.scalars[0].allocatable;
      e.gpuUsed = n.scalars[0].used;
    }
    e.milliCpu = n.usedMilliCpu;
    e.pods = n.usedPods;
  });
  return l;
}

PodListTally::PodListTally(const AuditLedger& ledger) : ledger_(ledger), sums_(ledger.nodes.size()) {
  index_.reserve(ledger.nodes.size());
  for (uint32_t i = 0; i < ledger.nodes.size(); ++i) index_.emplace(ledger.nodes[i].name, i);
}

bool PodListTally::addPage(std::string_view padded, codec::Decoder& decoder, std::string& continueToken,
                           std::string& error) {
  codec::PodList pods;
  if (!decoder.decodePodList(padded, pods)) {
    error = "pod list: " + decoder.errorMessage();
    return false;
  }
  for (const codec::Pod& p : pods.items) {
    if (p.nodeName.empty() || p.phase == codec::PodPhase::Succeeded || p.phase == codec::PodPhase::Failed) continue;
    ++checkedPods_;
    auto it = index_.find(p.nodeName);
    if (it == index_.end()) continue;  // a node the cache does not hold (yet): nothing to compare
    const AuditLedger::Node& n = ledger_.nodes[it->second];
    Sum& s = sums_[it->second];
    s.milliCpu += p.requests.milliCpu;
    s.pods += 1;
    if (!n.gpuResource.empty()) s.gpus += p.requests.get(n.gpuResource);
  }
  continueToken.assign(pods.continueToken);
  return true;
}

void auditReport(const AuditLedger& ledger, const PodListTally* tally, AuditResult& out) {
  out = AuditResult{};
  out.nodes = ledger.nodes.size();
  if (tally != nullptr) out.checkedPods = tally->checkedPods();
  std::string& j = out.json;
  codec::JsonWriter w(j);
  w.raw("{\"mismatches\":[");
  bool first = true;
  for (size_t i = 0; i < ledger.nodes.size(); ++i) {
    const AuditLedger::Node& n = ledger.nodes[i];
    const bool over = n.gpuUsed > n.gpuAllocatable;
    if (over) ++out.overcommittedNodes;
    PodListTally::Sum e;
    bool differs = false;
    if (tally != nullptr) {
      e = tally->sums()[i];
      differs = e.gpus != n.gpuUsed || e.milliCpu != n.milliCpu || e.pods != n.pods;
    }
    if (!over && !differs) continue;
    if (differs && ledger.reservationsLive == 0) ++out.mismatchedNodes;
    if (!first) w.ch(',');
    first = false;
    w.raw("{\"node\":");
    w.string(n.name);
    w.raw(",\"gpuAllocatable\":");
    w.int64(n.gpuAllocatable);
    w.raw(",\"cache\":{\"gpus\":");
    w.int64(n.gpuUsed);
    w.raw(",\"milliCpu\":");
    w.int64(n.milliCpu);
    w.raw(",\"pods\":");
    w.int64(n.pods);
    w.ch('}');
    if (tally != nullptr) {
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
  }
  w.raw("],\"comparedWithApiServer\":");
  w.boolean(tally != nullptr);
  w.raw(",\"nodes\":");
  w.int64(static_cast<int64_t>(out.nodes));
  w.raw(",\"checkedPods\":");
  w.int64(static_cast<int64_t>(out.checkedPods));
  w.raw(",\"mismatchedNodes\":");
  w.int64(static_cast<int64_t>(out.mismatchedNodes));
  w.raw(",\"overcommittedNodes\":");
  w.int64(static_cast<int64_t>(out.overcommittedNodes));
  w.raw(",\"reservationsLive\":");
  w.int64(static_cast<int64_t>(ledger.reservationsLive));
  w.raw(",\"gpuOvercommits\":");
  w.int64(static_cast<int64_t>(ledger.gpuOvercommits));
  w.raw(",\"clean\":");
  w.boolean(out.mismatchedNodes == 0 && out.overcommittedNodes == 0);
  w.raw("}\n");
}

void auditCache(const cache::Snapshot& snap, const cache::Cache& cache, AuditResult& out) {
  auditReport(captureLedger(snap, cache), nullptr, out);
}

}  // namespace fleetsched::engine
