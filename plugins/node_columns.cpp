#include "plugins/node_columns.h"

#include <algorithm>
#include <limits>

namespace fleetsched::plugins {

void NodeColumns::reset(uint32_t rowLimit, const GpuResourceConfig& resources) {
  resources_ = resources;
  primary_.assign(resources.primary());
  rows_.assign(rowLimit, Row{});
  shapeKeys_.clear();
  shapeOf_.clear();
  version = 0;
}

void NodeColumns::clear(uint32_t begin, uint32_t end) {
  end = std::min<uint32_t>(end, static_cast<uint32_t>(rows_.size()));
  for (uint32_t id = begin; id < end; ++id) rows_[id] = Row{};
}

void NodeColumns::set(uint32_t row, const NodeInfo& n) {
  if (row >= rows_.size()) rows_.resize(row + 1);
  Row& r = rows_[row];
  r = Row{};
  r.flags = kLive;
  r.gpuMemoryMiB = n.gpuMemoryMiB;
  r.gpuModel = n.gpuModel;
  r.zone = n.zone;
  r.capacityType = n.capacityType;
  const int count = std::min<int>(n.gpuCount, kMaxGpusPerNode);
  r.gpuCount = static_cast<uint8_t>(count);
  int32_t maxFree = 0, used = 0, whole = 0;
  for (int g = 0; g < count; ++g) {
    maxFree = std::max<int32_t>(maxFree, n.gpuFreeMilli(g));
    used += n.gpuUsedMilli[g];
    whole += n.gpuUsedMilli[g] == 0;
  }
  // A ledger is never over-charged, but clamp so a bad one cannot wrap the narrow columns.
  if (maxFree > UINT16_MAX || used > UINT16_MAX) r.flags |= kUsedClamped;
  r.maxFreeMilli = static_cast<uint16_t>(std::clamp<int32_t>(maxFree, 0, UINT16_MAX));
  r.usedMilli = static_cast<uint16_t>(std::clamp<int32_t>(used, 0, UINT16_MAX));
  r.freeWhole = static_cast<uint8_t>(whole);
  if (!primary_.empty()) {
    if (const ScalarResource* s = n.scalar(primary_)) {
      const int64_t free = std::max<int64_t>(0, s->allocatable - s->used);
      r.unitsFree = static_cast<int32_t>(std::min<int64_t>(free, std::numeric_limits<int32_t>::max()));
    }
  }
  bool hasGpu = count > 0;
  for (uint8_t s = 0; s < n.scalarCount && !hasGpu; ++s) {
    if (n.scalars[s].allocatable <= 0) continue;
    for (const auto& name : resources_.resourceNames) hasGpu = hasGpu || GpuResourceConfig::matches(name, n.scalars[s].name);
  }
  if (hasGpu) r.flags |= kHasGpu;
  const uint64_t key = uint64_t{static_cast<uint32_t>(r.gpuMemoryMiB)} | uint64_t{r.gpuModel} << 32 |
                       uint64_t{r.gpuCount} << 48 | uint64_t{r.unitsFree == kNoUnits} << 56;
  auto [it, added] = shapeOf_.try_emplace(key, kNoShape);
  if (added && shapeKeys_.size() < UINT16_MAX) {
    shapeKeys_.push_back(key);
    it->second = static_cast<uint16_t>(shapeKeys_.size());
  }
  r.shape = it->second;
}

}  // namespace fleetsched::plugins
