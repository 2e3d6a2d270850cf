#include "plugins/profile.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>

#include "plugins/gpu_select.h"

namespace fleetsched::plugins {

Profile::Profile(std::string name, GpuResourceConfig gpuResources, std::vector<Entry> plugins)
    : name_(std::move(name)), gpuResources_(std::move(gpuResources)), plugins_(std::move(plugins)) {
  assert(plugins_.size() <= static_cast<size_t>(CycleState::kMaxPlugins));
  int64_t maxTotal = 0;
  for (const Entry& e : plugins_) maxTotal += int64_t{e.weight} * kMaxNodeScore;
  narrowTotals_ = maxTotal <= INT32_MAX;
  columnFilters_ = std::all_of(plugins_.begin(), plugins_.end(), [](const Entry& e) {
    return !e.plugin->filters() || dynamic_cast<const ColumnFilter*>(e.plugin.get()) != nullptr;
  });
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

NodeSpan Profile::filter(const CycleState& state, NodeSpan nodes, std::span<Status> out,
                         ProfileScratch& scratch) const {
  assert(out.size() == nodes.size());
  const size_t n = nodes.size();
  // assign/resize reuse the scratch's capacity: no allocation once it has seen a batch this big.
  scratch.candidates_.assign(nodes.begin(), nodes.end());
  scratch.index_.resize(n);
  // Plugins write failures only. Every verdict is left Success after use (failures are reset
  // as they are moved out), so the buffer needs no clearing per plugin: that was a 120 KB
  // memset per plugin per 5,000-node request.
  scratch.verdicts_.resize(n);
  for (size_t i = 0; i < n; ++i) scratch.index_[i] = static_cast<uint32_t>(i);
  std::fill(out.begin(), out.end(), Status{});

  size_t live = n;
  for (size_t p = 0; p < plugins_.size() && live > 0; ++p) {
    const Plugin& plugin = *plugins_[p].plugin;
    if (!plugin.filters()) continue;
    plugin.filter(state, static_cast<int>(p), NodeSpan(scratch.candidates_.data(), live),
                  std::span<Status>(scratch.verdicts_.data(), live));
    // Compact the survivors in place; a rejected node keeps this (its first) failing status.
    size_t kept = 0;
    for (size_t j = 0; j < live; ++j) {
      if (scratch.verdicts_[j].ok()) {
        scratch.candidates_[kept] = scratch.candidates_[j];
        scratch.index_[kept] = scratch.index_[j];
        ++kept;
      } else {
        out[scratch.index_[j]] = scratch.verdicts_[j];
        scratch.verdicts_[j] = Status{};
      }
    }
    live = kept;
  }
  scratch.live_ = live;
  return NodeSpan(scratch.candidates_.data(), live);
}

bool Profile::admit(const codec::Pod& pod, CycleState& state, const ClusterState& cluster, std::span<Status> out,
                    ProfileScratch& scratch) const {
  const Status s = preFilter(pod, state, cluster);
  if (s.ok()) return true;
  std::fill(out.begin(), out.end(), s);
  scratch.live_ = 0;
  return false;
}

NodeSpan Profile::runFilter(const codec::Pod& pod, CycleState& state, const ClusterState& cluster,
                            NodeSpan nodes, std::span<Status> out, ProfileScratch& scratch) const {
  return admit(pod, state, cluster, out, scratch) ? filter(state, nodes, out, scratch) : NodeSpan{};
}

bool Profile::filterCodes(const CycleState& state, NodeSpan nodes, std::span<const uint32_t> ids,
                          const NodeColumns& columns, std::span<uint8_t> verdict, ProfileScratch& scratch) const {
  assert(verdict.size() == nodes.size() && ids.size() == nodes.size());
  if (!columnFilters_) return false;
  const size_t n = nodes.size();
  FailureCodes& failures = scratch.failures_;
  failures.clear();
  std::fill(verdict.begin(), verdict.end(), kColumnPass);
  // In plugin order, each over the nodes still passing: a node keeps its first failure, and a
  // node one plugin leaves undecided is not judged by the later ones (filter() below runs them
  // all on it, in order).
  for (size_t p = 0; p < plugins_.size(); ++p) {
    const Plugin& plugin = *plugins_[p].plugin;
    if (!plugin.filters()) continue;
    const auto* columnFilter = dynamic_cast<const ColumnFilter*>(&plugin);
    if (!columnFilter->filterColumns(state, static_cast<int>(p), columns, ids, verdict, failures)) return false;
  }

  // The undecided, gathered without a branch per node. Most runs have none, which memchr
  // tells at memory speed instead of a pass over every node.
  // (n == 0: an empty NodeNames list, whose verdict span has no data to hand memchr.)
  if (n == 0 || std::memchr(verdict.data(), kColumnUndecided, n) == nullptr) return true;
  scratch.slowIndex_.resize(n);
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    scratch.slowIndex_[m] = static_cast<uint32_t>(i);
    m += verdict[i] == kColumnUndecided;
  }
  if (m == 0) return true;
  scratch.slowNodes_.resize(m);
  for (size_t k = 0; k < m; ++k) scratch.slowNodes_[k] = nodes[scratch.slowIndex_[k]];
  scratch.slowOut_.resize(m);
  filter(state, NodeSpan(scratch.slowNodes_.data(), m), scratch.slowOut_, scratch);
  for (size_t k = 0; k < m; ++k) {
    const Status& s = scratch.slowOut_[k];
    const uint8_t v = s.ok() ? uint8_t{kColumnPass} : failures.code(s);
    if (v == kColumnUndecided) return false;  // out of codes
    verdict[scratch.slowIndex_[k]] = v;
  }
  return true;
}

bool Profile::runFilterCodes(const codec::Pod& pod, CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                             std::span<const uint32_t> ids, const NodeColumns& columns, std::span<uint8_t> verdict,
                             ProfileScratch& scratch) const {
  const Status s = preFilter(pod, state, cluster);
  if (!s.ok()) {
    scratch.failures_.clear();
    std::fill(verdict.begin(), verdict.end(), scratch.failures_.code(s));
    return true;
  }
  return filterCodes(state, nodes, ids, columns, verdict, scratch);
}

NodeSpan Profile::filterColumns(const CycleState& state, NodeSpan nodes, std::span<const uint32_t> ids,
                                const NodeColumns& columns, std::span<Status> out, ProfileScratch& scratch) const {
  assert(out.size() == nodes.size() && ids.size() == nodes.size());
  const size_t n = nodes.size();
  scratch.pass_.resize(n);
  if (!filterCodes(state, nodes, ids, columns, scratch.pass_, scratch)) return filter(state, nodes, out, scratch);
  const uint8_t* verdict = scratch.pass_.data();
  scratch.candidates_.resize(n);
  scratch.index_.resize(n);
  size_t live = 0;
  for (size_t i = 0; i < n; ++i) {
    if (verdict[i] == kColumnPass) {
      out[i] = Status{};
      scratch.candidates_[live] = nodes[i];
      scratch.index_[live] = static_cast<uint32_t>(i);
      ++live;
    } else {
      out[i] = scratch.failures_.status(verdict[i]);
    }
  }
  scratch.live_ = live;
  return NodeSpan(scratch.candidates_.data(), live);
}

NodeSpan Profile::runFilterColumns(const codec::Pod& pod, CycleState& state, const ClusterState& cluster,
                                   NodeSpan nodes, std::span<const uint32_t> ids, const NodeColumns& columns,
                                   std::span<Status> out, ProfileScratch& scratch) const {
  return admit(pod, state, cluster, out, scratch) ? filterColumns(state, nodes, ids, columns, out, scratch)
                                                  : NodeSpan{};
}

std::span<const int64_t> Profile::scoreTotals(CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                                              ProfileScratch& scratch) const {
  return sumScores(state, cluster, nodes, {}, nullptr, scratch);
}

std::span<const int64_t> Profile::scoreTotalsColumns(CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                                                     std::span<const uint32_t> ids, const NodeColumns& columns,
                                                     ProfileScratch& scratch) const {
  assert(ids.size() == nodes.size());
  for (uint32_t id : ids) {
    if (id >= columns.idLimit()) return sumScores(state, cluster, nodes, {}, nullptr, scratch);
  }
  return sumScores(state, cluster, nodes, ids, &columns, scratch);
}

std::span<const int64_t> Profile::sumScores(CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                                            std::span<const uint32_t> ids, const NodeColumns* columns,
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
    const auto* scorer = columns != nullptr ? dynamic_cast<const ColumnScorer*>(&plugin) : nullptr;
    if (scorer != nullptr && scorer->preScoreColumns(state, cluster, idx, *columns, ids, nodes)) {
      scorer->scoreColumns(state, idx, *columns, ids, nodes, out);
    } else {
      plugin.preScore(state, cluster, idx, nodes);
      plugin.score(state, idx, nodes, out);
    }
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

void Profile::extenderScoresColumns(CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                                    std::span<const uint32_t> ids, const NodeColumns& columns,
                                    std::span<int32_t> out, ProfileScratch& scratch) const {
  toExtenderScores(scoreTotalsColumns(state, cluster, nodes, ids, columns, scratch), out);
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

void Profile::extenderScores(CycleState& state, const ClusterState& cluster, NodeSpan nodes,
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
