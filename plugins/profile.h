// Profile: one scheduling pipeline, an ordered list of (plugin, weight), shared read-only by
// every request. A cycle for one pod runs
//
//   preFilter(pod)        derive PodInfo, run every PreFilter (a failure rejects all nodes)
//   filter(nodes)         Filter plugin by plugin; a node rejected by one plugin is not shown
//                         to the next and keeps that first failing Status
//   scoreTotals(feasible) PreScore → Score → NormalizeScore per plugin, clamped to 0..100,
//                         summed with the weights (exact int64 ranking, what replay uses)
//   extenderScores(...)   totals → 0..kMaxExtenderScore for the wire (see toExtenderScores)
//   selectGpus(node)      plugins in order (not those of weight 0), then best fit
//
// The caller owns a CycleState and a ProfileScratch per thread and reuses them across pods;
// once the scratch has grown to the largest batch, a cycle allocates nothing on the passing
// path. Spans returned by filter/scoreTotals point into the scratch and stay valid until its
// next use.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/framework.h"
#include "plugins/interpretation.h"
#include "plugins/node_columns.h"

namespace fleetsched::plugins {

// Reusable per-thread buffers for Profile runs.
class ProfileScratch {
 public:
  // Original positions (in the span given to filter) of the feasible nodes filter returned.
  std::span<const uint32_t> feasibleIndex() const { return {index_.data(), live_}; }
  // What the failure codes of the last filterCodes run stand for.
  const FailureCodes& failures() const { return failures_; }

 private:
  friend class Profile;
  std::vector<const NodeInfo*> candidates_;
  std::vector<uint32_t> index_;
  std::vector<Status> verdicts_;
  std::vector<int32_t> pluginScores_;
  std::vector<int64_t> totals_;
  std::vector<int32_t> narrowTotals_;
  // filterColumns: a verdict byte per node, the nodes left to filter() and their places.
  std::vector<uint8_t> pass_;
  std::vector<const NodeInfo*> slowNodes_;
  std::vector<uint32_t> slowIndex_;
  std::vector<Status> slowOut_;
  FailureCodes failures_;
  size_t live_ = 0;
};

class Profile {
 public:
  struct Entry {
    std::unique_ptr<Plugin> plugin;
    int32_t weight = 1;  // 0: the plugin filters only (neither its Score nor its GPU choice runs)
  };

  Profile(std::string name, GpuResourceConfig gpuResources, std::vector<Entry> plugins);

  std::string_view name() const { return name_; }
  const GpuResourceConfig& gpuResources() const { return gpuResources_; }
  std::span<const Entry> plugins() const { return plugins_; }

  // Starts the cycle for `pod` in `state` (reset first). A non-success status applies to every
  // node: the pod cannot be placed anywhere (e.g. an invalid annotation).
  Status preFilter(const codec::Pod& pod, CycleState& state, const ClusterState& cluster) const;

  // Runs the Filter plugins over `nodes` after a successful preFilter. out[i] receives the
  // verdict for nodes[i] (out.size() == nodes.size()). Returns the feasible nodes in input order.
  NodeSpan filter(const CycleState& state, NodeSpan nodes, std::span<Status> out, ProfileScratch& scratch) const;

  // preFilter + filter; when preFilter fails every node gets its status and no node is feasible.
  NodeSpan runFilter(const codec::Pod& pod, CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                     std::span<Status> out, ProfileScratch& scratch) const;

  // filter() for nodes that have rows in `columns` (ids[i] is nodes[i]'s id, the rows describe
  // the same version of them), as a byte per node: verdict[i] is kColumnPass, or a failure code
  // (>= kColumnFailed) whose Status is scratch.failures().status(verdict[i]) — the same verdicts
  // filter() gives. The plugins' column filters prove most verdicts from the rows; filter() runs
  // only over the nodes left. Returns false, deciding nothing, when a filtering plugin has no
  // column filter or declines the pod, or the run has more distinct failures than codes.
  bool filterCodes(const CycleState& state, NodeSpan nodes, std::span<const uint32_t> ids, const NodeColumns& columns,
                   std::span<uint8_t> verdict, ProfileScratch& scratch) const;
  // preFilter + filterCodes; when preFilter fails every node gets its failure's code.
  bool runFilterCodes(const codec::Pod& pod, CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                      std::span<const uint32_t> ids, const NodeColumns& columns, std::span<uint8_t> verdict,
                      ProfileScratch& scratch) const;
  // filter() through filterCodes when it can: the same statuses and feasible nodes.
  NodeSpan filterColumns(const CycleState& state, NodeSpan nodes, std::span<const uint32_t> ids,
                         const NodeColumns& columns, std::span<Status> out, ProfileScratch& scratch) const;
  // preFilter + filterColumns, as runFilter.
  NodeSpan runFilterColumns(const codec::Pod& pod, CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                            std::span<const uint32_t> ids, const NodeColumns& columns, std::span<Status> out,
                            ProfileScratch& scratch) const;
  // True when every filtering plugin has a column filter (filterCodes can avoid filter()).
  bool hasColumnFilters() const { return columnFilters_; }

  // Weighted sum of the scoring plugins' 0..100 scores for each node of `nodes` (normally the
  // feasible ones). Higher is better; the result has nodes.size() entries.
  std::span<const int64_t> scoreTotals(CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                                       ProfileScratch& scratch) const;

  // scoreTotals for nodes with rows in `columns` (ids[i] is nodes[i]'s id): the same totals,
  // with each plugin that has a column scorer reading the rows.
  std::span<const int64_t> scoreTotalsColumns(CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                                              std::span<const uint32_t> ids, const NodeColumns& columns,
                                              ProfileScratch& scratch) const;
  // extenderScores through scoreTotalsColumns.
  void extenderScoresColumns(CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                             std::span<const uint32_t> ids, const NodeColumns& columns, std::span<int32_t> out,
                             ProfileScratch& scratch) const;

  // scoreTotals mapped to the wire range; out.size() == nodes.size().
  void extenderScores(CycleState& state, const ClusterState& cluster, NodeSpan nodes, std::span<int32_t> out,
                      ProfileScratch& scratch) const;

  // Maps totals to 0..kMaxExtenderScore by min–max over the given nodes: the best nodes (equal
  // to the maximum) get exactly kMaxExtenderScore, the others floor(10·(t−min)/(max−min)) ≤ 9,
  // and all nodes get kMaxExtenderScore when they tie. Why not a weighted mean rounded to
  // 0..10: kube-scheduler adds the extender's score to its own (LeastAllocated spreads), so
  // rounding a mean folds near-equal candidates together and lets kube-scheduler's spreading
  // undo a binpacking decision; min–max keeps the extender's top choice strictly on top.
  static void toExtenderScores(std::span<const int64_t> totals, std::span<int32_t> out);

  // The GPUs `node` gives the pod of the current cycle: the first plugin that chooses wins,
  // else best fit. Returns false when the node cannot hold the pod's GPUs. Pods without GPU
  // demand, or whose GPU resource has no per-GPU accounting (not the primary resource, or a
  // node without the per-GPU ledger), get an empty assignment (the device plugin chooses) and
  // true; Filter has already checked the count.
  bool selectGpus(const CycleState& state, const NodeInfo& node, GpuAssignment& out) const;

 private:
  // preFilter for runFilter*: false after writing its rejection into every entry of `out`.
  bool admit(const codec::Pod& pod, CycleState& state, const ClusterState& cluster, std::span<Status> out,
             ProfileScratch& scratch) const;
  // scoreTotals; with `columns`, plugins that have a column scorer read the rows instead.
  std::span<const int64_t> sumScores(CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                                     std::span<const uint32_t> ids, const NodeColumns* columns,
                                     ProfileScratch& scratch) const;

  std::string name_;
  GpuResourceConfig gpuResources_;
  std::vector<Entry> plugins_;
  bool columnFilters_ = false;
  bool narrowTotals_ = false;  // every weighted total fits 32 bits
};

}  // namespace fleetsched::plugins
