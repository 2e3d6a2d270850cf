// SnapshotRows: the plugins' rows (plugins::NodeColumns, row = node id) of the nodes of the
// snapshots one reader sees, kept from snapshot to snapshot and refreshed for the chunks
// published since the last one only. What an evaluator or the C API hands its profile as the
// batch's rows for nodes from the snapshot. One table per distinct GPU resources asked for
// (profiles may name different ones), so alternating profiles do not rebuild each other's.
// One reader (thread) per object.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "cache/snapshot.h"
#include "plugins/interpretation.h"
#include "plugins/node_columns.h"

namespace fleetsched::cache {

class SnapshotRows {
 public:
  // The rows of `snap`'s nodes for `resources` (a profile's GPU resources), valid until the
  // next call.
  const plugins::NodeColumns& refresh(const Snapshot& snap, const plugins::GpuResourceConfig& resources);

 private:
  struct Table {
    plugins::NodeColumns rows;
    std::vector<uint64_t> stamps;  // per chunk: the stamp its rows come from
  };
  std::deque<Table> tables_;  // a deque: a new table leaves the others where they are
};

}  // namespace fleetsched::cache
