// NodeColumns and NodeBatch: what every plugin's Filter and Score read.
//
// NodeColumns packs the few per-node facts the built-in plugins read most into one 24-byte row
// per node, so a 5,000-node filter walks ~120 KB of rows instead of chasing 5,000 NodeInfo
// records of ~430 bytes each (several cache misses per node). Rows also name their node's
// shape: nodes alike in everything a GPU filter's node-only checks read (GPU count, model,
// memory, whether the primary resource is a scalar) share one, so a filter can decide those
// checks once per shape (a fleet has tens) instead of once per node.
//
//   build   reset(rowLimit, resources) then set(row, node) for every node (any order). The
//           extender service keeps one table per published snapshot (row = node id), refreshed
//           chunk by chunk; replay keeps one for its cluster; a batch of records without rows
//           (a full-Nodes request, one node) gets its rows in ProfileScratch::batch.
//   read    row(id), through a NodeBatch.
//
// A NodeBatch is the nodes one Filter or Score call sees: the records and, for each, its row.
// A plugin reads the row for what rows hold and the record for the rest (labels, taints,
// scalars, reasons that name record fields).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "plugins/framework.h"
#include "plugins/interpretation.h"

namespace fleetsched::plugins {

class NodeColumns {
 public:
  static constexpr int32_t kNoUnits = -1;  // Row::unitsFree: the node has no primary scalar

  struct Row {
    int32_t gpuMemoryMiB = 0;
    int32_t unitsFree = kNoUnits;  // primary resource: allocatable - used, ≥ 0, capped at INT32_MAX
    uint16_t gpuModel = 0;
    uint16_t zone = 0;
    uint16_t maxFreeMilli = 0;  // the freest GPU's free milli (0 without per-GPU accounting)
    uint16_t usedMilli = 0;     // sum of gpuUsedMilli over the node's GPUs
    uint8_t gpuCount = 0;
    uint8_t freeWhole = 0;      // GPUs with nothing used
    CapacityType capacityType = CapacityType::Unknown;
    uint8_t flags = 0;          // kLive | kHasGpu | kUsedClamped
    uint16_t shape = kNoShape;  // see shapeCount()
  };
  static constexpr uint8_t kLive = 1;         // a node holds this row
  static constexpr uint8_t kHasGpu = 2;       // per-GPU ledger, or a scalar of one of the GPU resources
  static constexpr uint8_t kUsedClamped = 4;  // usedMilli / maxFreeMilli did not fit: read the record
  static_assert(sizeof(Row) == 24);
  // Row::shape of rows without a live node, and of live ones past the 65,535th distinct shape.
  static constexpr uint16_t kNoShape = 0;

  // Empties the table for rows below `rowLimit` and forgets its shapes; `resources` are the
  // profile's GPU resources: the primary one's scalar (allocatable − used) fills Row::unitsFree,
  // any of them sets kHasGpu.
  void reset(uint32_t rowLimit, const GpuResourceConfig& resources);
  // Fills row `row` from `node` (growing the table past its limit when needed).
  void set(uint32_t row, const NodeInfo& node);
  // Empties the rows in [begin, end) (no node holds them until set again).
  void clear(uint32_t begin, uint32_t end);

  std::string_view primary() const { return primary_; }
  const GpuResourceConfig& resources() const { return resources_; }
  const Row& row(uint32_t id) const { return rows_[id]; }
  const Row* data() const { return rows_.data(); }
  // Shapes are numbered 1..shapeCount()-1 (kNoShape below): rows of one shape have equal
  // gpuCount, gpuModel, gpuMemoryMiB, and unitsFree == kNoUnits or not.
  size_t shapeCount() const { return shapeKeys_.size() + 1; }

  // Owner's bookkeeping: which source version the rows describe (0: none yet).
  uint64_t version = 0;

 private:
  GpuResourceConfig resources_;
  std::string primary_;
  std::vector<Row> rows_;
  std::vector<uint64_t> shapeKeys_;  // shape s is shapeKeys_[s - 1]
  std::unordered_map<uint64_t, uint16_t> shapeOf_;
};

// The nodes of one Filter or Score call: nodes[i] is the record of the node whose row is
// rows().row(ids[i]). It reads like a span of record pointers (size, [i], iteration).
struct NodeBatch {
  NodeSpan nodes;
  std::span<const uint32_t> ids;
  const NodeColumns* table = nullptr;

  size_t size() const { return nodes.size(); }
  bool empty() const { return nodes.empty(); }
  const NodeInfo* operator[](size_t i) const { return nodes[i]; }
  auto begin() const { return nodes.begin(); }
  auto end() const { return nodes.end(); }
  const NodeColumns& rows() const { return *table; }
  const NodeColumns::Row& row(size_t i) const { return table->row(ids[i]); }
  NodeBatch first(size_t n) const { return {nodes.first(n), ids.first(n), table}; }
};

}  // namespace fleetsched::plugins
