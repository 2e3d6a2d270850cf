#include "plugins/profile.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

#include "plugins/gpu_select.h"

namespace fleetsched::plugins {

Profile::Profile(std::string name, GpuResourceConfig gpuResources, std::vector<Entry> plugins)
    : name_(std::move(name)), gpuResources_(std::move(gpuResources)), plugins_(std::move(plugins)) {
  assert(plugins_.size() <= static_cast<size_t>(CycleState::kMaxPlugins));
  int64_t maxTotal = 0;
  for (const Entry& e : plugins_) maxTotal += int64_t{e.weight} * kMaxNodeScore;
  narrowTotals_ = maxTotal <= INT32_MAX;
}

NodeBatch ProfileScratch::batch(NodeSpan nodes, const GpuResourceConfig& resources) {
  // The table keeps its shapes across batches (no allocation once they have been seen) until
  // the resources change.
  if (rows_.version == 0 || rows_.resources().resourceNames != resources.resourceNames) {
    rows_.reset(0, resources);
    rows_.version = 1;
  }
  const auto n = static_cast<uint32_t>(nodes.size());
  for (uint32_t i = 0; i < n; ++i) rows_.set(i, *nodes[i]);
  for (auto i = static_cast<uint32_t>(positions_.size()); i < n; ++i) positions_.push_back(i);
  return {nodes, std::span<const uint32_t>(positions_).first(n), &rows_};
}

NodeBatch ProfileScratch::feasible(const NodeBatch& nodes, std::span<const Verdict> verdict) {
  // Gathered without a branch per node: every entry written, the count moved past a pass.
  const size_t n = nodes.size();
  candidates_.resize(n + 1);
  candidateIds_.resize(n + 1);
  index_.resize(n + 1);
  size_t live = 0;
  for (size_t i = 0; i < n; ++i) {
    candidates_[live] = nodes.nodes[i];
    candidateIds_[live] = nodes.ids[i];
    index_[live] = static_cast<uint32_t>(i);
    live += verdict[i] == kPass;
  }
  live_ = live;
  return {NodeSpan(candidates_.data(), live), std::span<const uint32_t>(candidateIds_.data(), live), nodes.table};
}

Status Profile::preFilter(const codec::Pod& pod, CycleState& state, const ClusterState& cluster) const {
  state.reset();
  Status s = derivePodInfo(pod, gpuResources_, state.pod);
  if (!s.ok()) return s;
  for (size_t i = 0; i < plugins_.size(); ++i) {
    s = plugins_[i].plugin->preFilter(state, cluster, static_cast<int>(i));
    if (!s.ok()) return s;
  }
  return {};
}

void Profile::filter(const CycleState& state, const NodeBatch& nodes, std::span<Verdict> verdict,
                     ProfileScratch& scratch) const {
  assert(verdict.size() == nodes.size());
  scratch.failures_.clear();
  std::fill(verdict.begin(), verdict.end(), kPass);
  // Every plugin over every node, in plugin order: a plugin judges only the nodes still
  // passing, so a node keeps its first failure.
  for (size_t p = 0; p < plugins_.size(); ++p) {
    const Plugin& plugin = *plugins_[p].plugin;
    if (plugin.filters()) plugin.filter(state, static_cast<int>(p), nodes, verdict, scratch.failures_);
  }
}

void Profile::filterAfter(const Status& preFilter, const CycleState& state, const NodeBatch& nodes,
                          std::span<Verdict> verdict, ProfileScratch& scratch) const {
  if (preFilter.ok()) return filter(state, nodes, verdict, scratch);
  scratch.failures_.clear();
  std::fill(verdict.begin(), verdict.end(), scratch.failures_.code(preFilter));
}

void Profile::runFilter(const codec::Pod& pod, CycleState& state, const ClusterState& cluster,
                        const NodeBatch& nodes, std::span<Verdict> verdict, ProfileScratch& scratch) const {
  filterAfter(preFilter(pod, state, cluster), state, nodes, verdict, scratch);
}

NodeSpan Profile::filter(const CycleState& state, NodeSpan nodes, std::span<Status> out,
                         ProfileScratch& scratch) const {
  assert(out.size() == nodes.size());
  const NodeBatch batch = scratch.batch(nodes, gpuResources_);
  scratch.verdicts_.resize(nodes.size());
  filter(state, batch, scratch.verdicts_, scratch);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Verdict v = scratch.verdicts_[i];
    out[i] = v == kPass ? Status{} : scratch.failures_.status(v);
  }
  return scratch.feasible(batch, scratch.verdicts_).nodes;
}

NodeSpan Profile::runFilter(const codec::Pod& pod, CycleState& state, const ClusterState& cluster,
                            NodeSpan nodes, std::span<Status> out, ProfileScratch& scratch) const {
  const Status s = preFilter(pod, state, cluster);
  if (s.ok()) return filter(state, nodes, out, scratch);
  std::fill(out.begin(), out.end(), s);
  scratch.live_ = 0;
  return {};
}

std::span<const int64_t> Profile::scoreTotals(CycleState& state, const ClusterState& cluster, const NodeBatch& nodes,
                                              ProfileScratch& scratch) const {
  const size_t n = nodes.size();
  scratch.totals_.resize(n);
  scratch.pluginScores_.resize(n);
  int32_t* scores = scratch.pluginScores_.data();
  int64_t* totals = scratch.totals_.data();
  // Sums in 32-bit lanes when every weighted total fits (the usual weights do: 10 / 5 / 3 sum
  // to 1,800 at most), widened once at the end; else straight in 64 bits.
  int32_t* narrow = nullptr;
  if (narrowTotals_) {
    scratch.narrowTotals_.assign(n, 0);
    narrow = scratch.narrowTotals_.data();
  } else {
    std::fill_n(totals, n, 0);
  }
  for (size_t p = 0; p < plugins_.size(); ++p) {
    const Plugin& plugin = *plugins_[p].plugin;
    if (!plugin.scores() || plugins_[p].weight == 0) continue;
    const int idx = static_cast<int>(p);
    std::fill_n(scores, n, 0);
    const std::span<int32_t> out(scores, n);
    plugin.preScore(state, cluster, idx, nodes);
    plugin.score(state, idx, nodes, out);
    plugin.normalizeScore(state, idx, nodes, out);
    const int32_t w = plugins_[p].weight;
    if (narrow != nullptr) {
      for (size_t j = 0; j < n; ++j) narrow[j] += w * std::clamp(scores[j], 0, kMaxNodeScore);
    } else {
      for (size_t j = 0; j < n; ++j) {
        assert(scores[j] >= 0 && scores[j] <= kMaxNodeScore);
        totals[j] += int64_t{w} * std::clamp(scores[j], 0, kMaxNodeScore);
      }
    }
  }
  if (narrow != nullptr) {
    for (size_t j = 0; j < n; ++j) totals[j] = narrow[j];
  }
  return {totals, n};
}

namespace {
__extension__ typedef __int128 Wide;  // 10 × a range near INT64_MAX
}  // namespace

void Profile::toExtenderScores(std::span<const int64_t> totals, std::span<int32_t> out) {
  assert(out.size() == totals.size());
  if (totals.empty()) return;
  // Min and max in four independent lanes: std::minmax_element branched per element on data,
  // and a single cmov chain waits on itself every element (64-bit lanes: no SIMD min/max in
  // the baseline x86-64 this builds for).
  const size_t n = totals.size();
  int64_t lo[4], hi[4];
  for (size_t j = 0; j < 4; ++j) lo[j] = hi[j] = totals[0];
  size_t at = 0;
  for (; at + 4 <= n; at += 4) {
    for (size_t j = 0; j < 4; ++j) {
      lo[j] = std::min(lo[j], totals[at + j]);
      hi[j] = std::max(hi[j], totals[at + j]);
    }
  }
  for (; at < n; ++at) {
    lo[0] = std::min(lo[0], totals[at]);
    hi[0] = std::max(hi[0], totals[at]);
  }
  const int64_t min = std::min(std::min(lo[0], lo[1]), std::min(lo[2], lo[3]));
  const int64_t max = std::max(std::max(hi[0], hi[1]), std::max(hi[2], hi[3]));
  const int64_t range = max - min;
  constexpr int64_t kSteps = kMaxExtenderScore;
  if (range == 0) {
    std::fill(out.begin(), out.end(), kMaxExtenderScore);
    return;
  }
  // floor(10·d/range) is the number of k in 1..9 with 10·d >= k·range, i.e. d >= ceil(k·range/10),
  // and the top (d == range) passes a tenth step, range itself: ten compares per node instead
  // of a 64-bit division, in 32-bit lanes when the range fits (totals are weighted sums of
  // 0..100 scores: it does).
  int64_t step[kSteps];
  for (int64_t k = 1; k <= kSteps; ++k) step[k - 1] = static_cast<int64_t>((Wide{k} * range + kSteps - 1) / kSteps);
  const int64_t* t = totals.data();
  int32_t* o = out.data();
  if (range <= INT32_MAX) {
    int32_t s32[kSteps];
    for (int64_t k = 0; k < kSteps; ++k) s32[k] = static_cast<int32_t>(step[k]);
    for (size_t i = 0; i < n; ++i) {
      const auto d = static_cast<int32_t>(t[i] - min);
      int32_t score = 0;
      for (int64_t k = 0; k < kSteps; ++k) score += d >= s32[k] ? 1 : 0;
      o[i] = score;
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t d = t[i] - min;
    int32_t score = 0;
    for (int64_t k = 0; k < kSteps; ++k) score += d >= step[k] ? 1 : 0;
    o[i] = score;
  }
}

void Profile::extenderScores(CycleState& state, const ClusterState& cluster, const NodeBatch& nodes,
                             std::span<int32_t> out, ProfileScratch& scratch) const {
  toExtenderScores(scoreTotals(state, cluster, nodes, scratch), out);
}

bool Profile::selectGpus(const CycleState& state, const NodeInfo& node, GpuAssignment& out) const {
  out = GpuAssignment{};
  const PodInfo& pod = state.pod;
  if (!pod.wantsGpu() || pod.gpuResource != gpuResources_.primary() || node.gpuCount == 0) return true;
  for (size_t p = 0; p < plugins_.size(); ++p) {
    if (plugins_[p].weight == 0) continue;  // a filter-only plugin does not place either
    if (plugins_[p].plugin->selectGpus(state, static_cast<int>(p), node, out)) return out.count > 0;
  }
  return plugins::selectGpus(pod, node, out, GpuChoice::BestFit);
}

}  // namespace fleetsched::plugins
