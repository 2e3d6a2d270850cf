// NodeColumns: the few per-node facts the built-in Filter plugins read, packed into one
// 24-byte row per node id, so a 5,000-node filter walks ~120 KB of rows instead of chasing
// 5,000 NodeInfo records of ~430 bytes each (several cache misses per node). Rows also name
// their node's shape: nodes alike in everything a GPU filter's node-only checks read (GPU count,
// model, memory, whether the primary resource is a scalar) share one, so a filter can decide
// those checks once per shape (a fleet has tens) instead of once per node.
//
//   build   reset(idLimit, primary) then set(node) for every live node (any order); the owner
//           (e.g. the extender service) refreshes it per published snapshot version it serves,
//           clear() + set() over the id ranges that changed.
//           The table owns copies of everything it keeps (model names), so it stays valid after
//           the snapshot it came from is released.
//   read    row(id), modelName(modelId).
//
// The rows are a fast path: a ColumnFilter decides what it can from them (the same verdicts and
// reasons as its Filter) and leaves the rest to its ordinary Filter.
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
  static constexpr uint8_t kLive = 1;         // a node holds this id
  static constexpr uint8_t kHasGpu = 2;       // per-GPU ledger, or a scalar of one of the GPU resources
  static constexpr uint8_t kUsedClamped = 4;  // usedMilli / maxFreeMilli did not fit: read the record
  static_assert(sizeof(Row) == 24);
  // Row::shape of rows without a live node, and of live ones past the 65,535th distinct shape.
  static constexpr uint16_t kNoShape = 0;

  // Empties the table for ids below `idLimit`; `resources` are the profile's GPU resources: the
  // primary one's scalar (allocatable − used) fills Row::unitsFree, any of them sets kHasGpu.
  void reset(uint32_t idLimit, const GpuResourceConfig& resources);
  // Fills node.id's row from `node`.
  void set(const NodeInfo& node);
  // Empties the rows of ids in [begin, end) (no node holds them until set again).
  void clear(uint32_t begin, uint32_t end);

  uint32_t idLimit() const { return static_cast<uint32_t>(rows_.size()); }
  std::string_view primary() const { return primary_; }
  const GpuResourceConfig& resources() const { return resources_; }
  const Row& row(uint32_t id) const { return rows_[id]; }
  // Shapes are numbered 1..shapeCount()-1 (kNoShape below): rows of one shape have equal
  // gpuCount, gpuModel, gpuMemoryMiB, and unitsFree == kNoUnits or not.
  size_t shapeCount() const { return shapeKeys_.size() + 1; }
  const Row* rows() const { return rows_.data(); }
  // The name of an interned GPU model id seen on a live node; empty for ids never seen.
  std::string_view modelName(uint16_t model) const {
    return model < modelNames_.size() ? std::string_view(modelNames_[model]) : std::string_view{};
  }

  // Owner's bookkeeping: which source version the rows describe (0: none yet).
  uint64_t version = 0;

 private:
  GpuResourceConfig resources_;
  std::string primary_;
  std::vector<Row> rows_;
  std::vector<std::string> modelNames_;
  std::vector<uint64_t> shapeKeys_;  // shape s is shapeKeys_[s - 1]
  std::unordered_map<uint64_t, uint16_t> shapeOf_;
};

// What Profile::filterCodes knows about each node while the column filters run: one byte per
// node, so a 5,000-node verdict is 5 KB and a failure's reason is looked up once per distinct
// reason instead of being copied per node.
enum ColumnVerdict : uint8_t {
  kColumnUndecided = 0,  // left to the plugins' ordinary Filter (all of them, in order)
  kColumnPass = 1,       // passes every column filter run so far
  kColumnFailed = 2,     // the first failure code: v >= kColumnFailed is FailureCodes::status(v)
};

// The distinct failures of one filter run, numbered from kColumnFailed: a node's verdict byte
// names its Status. Statuses are equal when their codes and reasons' bytes are.
class FailureCodes {
 public:
  static constexpr size_t kMaxCodes = 256 - kColumnFailed;

  // Forgets every code; a plugin's own memo of codes (see epoch()) goes stale with it.
  void clear() {
    statuses_.clear();
    ++epoch_;
  }
  // The code for failure `s`; kColumnUndecided when kMaxCodes distinct ones are taken.
  uint8_t code(const Status& s) {
    for (size_t k = statuses_.size(); k-- > 0;) {  // newest first: failures come in runs
      const Status& e = statuses_[k];
      if (e.code == s.code && e.reason.size() == s.reason.size() &&
          (e.reason.data() == s.reason.data() || e.reason == s.reason)) {
        return static_cast<uint8_t>(kColumnFailed + k);
      }
    }
    if (statuses_.size() == kMaxCodes) return kColumnUndecided;
    statuses_.push_back(s);
    return static_cast<uint8_t>(kColumnFailed + statuses_.size() - 1);
  }
  const Status& status(uint8_t code) const { return statuses_[code - kColumnFailed]; }
  size_t size() const { return statuses_.size(); }
  // Changes with every clear(): plugins that cache codes per cycle compare it.
  uint64_t epoch() const { return epoch_; }

 private:
  std::vector<Status> statuses_;
  uint64_t epoch_ = 1;
};

// A scoring plugin that can also score from NodeColumns: Profile::scoreTotalsColumns calls
// preScoreColumns instead of preScore and, when it returns true, scoreColumns instead of score;
// when it returns false, preScore and score as usual. nodes[i] is node ids[i]'s record, for what
// the rows do not hold. Scores must equal score()'s.
class ColumnScorer {
 public:
  virtual bool preScoreColumns(CycleState& state, const ClusterState& cluster, int index, const NodeColumns& columns,
                               std::span<const uint32_t> ids, NodeSpan nodes) const = 0;
  virtual void scoreColumns(const CycleState& state, int index, const NodeColumns& columns,
                            std::span<const uint32_t> ids, NodeSpan nodes, std::span<int32_t> out) const = 0;

 protected:
  ~ColumnScorer() = default;
};

// A Filter plugin that can also judge nodes from NodeColumns. Profile::filterCodes uses it
// when every filtering plugin of the profile implements it.
class ColumnFilter {
 public:
  // After preFilter, for each i with verdict[i] == kColumnPass: leaves it when node ids[i]
  // surely passes this plugin's Filter; sets failures.code(s) when its Filter would surely
  // reject the node with exactly Status s (kColumnUndecided when the codes ran out is fine);
  // else sets kColumnUndecided. Other entries are not touched. Returns false when it cannot
  // judge this pod from columns at all; the caller then runs the ordinary Filter instead.
  virtual bool filterColumns(const CycleState& state, int index, const NodeColumns& columns,
                             std::span<const uint32_t> ids, std::span<uint8_t> verdict,
                             FailureCodes& failures) const = 0;

 protected:
  ~ColumnFilter() = default;
};

}  // namespace fleetsched::plugins
