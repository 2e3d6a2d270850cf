#include "cache/snapshot_rows.h"

#include <algorithm>

namespace fleetsched::cache {

const plugins::NodeColumns& SnapshotRows::refresh(const Snapshot& snap, const plugins::GpuResourceConfig& resources) {
  auto t = std::find_if(tables_.begin(), tables_.end(), [&](const Table& e) {
    return e.rows.resources().resourceNames == resources.resourceNames;
  });
  if (t == tables_.end()) {
    t = tables_.emplace(tables_.end());
    t->rows.reset(snap.idLimit(), resources);
  }
  plugins::NodeColumns& rows = t->rows;
  if (rows.version != snap.version() || rows.version == 0) {
    // Only the chunks published since the rows were last refreshed: under pod churn every verb
    // sees a new version, usually with a few chunks changed (a bound pod republishes one), and
    // a pass over all 5,000 records per version would be paid again by each verb.
    const uint32_t chunks = snap.chunkCount();
    t->stamps.resize(chunks, 0);
    for (uint32_t c = 0; c < chunks; ++c) {
      const uint64_t stamp = snap.chunkStamp(c);
      if (t->stamps[c] == stamp) continue;
      rows.clear(c * kChunkSize, (c + 1) * kChunkSize);
      snap.forEachNodeInChunk(c, [&](const plugins::NodeInfo& n) { rows.set(n.id, n); });
      t->stamps[c] = stamp;
    }
    rows.version = snap.version();
  }
  return rows;
}

}  // namespace fleetsched::cache
