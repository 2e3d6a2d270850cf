// Profile: one scheduling pipeline, an ordered list of (plugin, weight), shared read-only by
// every request. A cycle for one pod runs
//
//   preFilter(pod)        derive PodInfo, run every PreFilter (a failure rejects all nodes)
//   filter(batch)         Filter plugin by plugin into a verdict per node (kPass or a failure
//                         code, scratch.failures() says which Status): a node rejected by one
//                         plugin keeps that first failing Status
//   scoreTotals(feasible) PreScore → Score → NormalizeScore per plugin, clamped to 0..100,
//                         summed with the weights (exact int64 ranking, what replay uses)
//   extenderScores(...)   totals → 0..kMaxExtenderScore for the wire (see toExtenderScores)
//   selectGpus(node)      plugins in order (not those of weight 0), then best fit
//
// Plugins see a NodeBatch (records and rows). A caller holding rows for its nodes (the service's
// snapshot rows, replay's cluster) passes them; one holding records only gets rows built in the
// scratch by ProfileScratch::batch, or uses the NodeSpan / Status forms below, which do that.
//
// plugins::Cycle (cycle.h) drives these steps for every production caller, owning the
// CycleState and ProfileScratch per thread and reusing them across pods;
// once the scratch has grown to the largest batch, a cycle allocates nothing on the passing
// path. Batches and spans returned point into the scratch and stay valid until its next use.
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
  // A batch over `nodes` with their rows built here for `resources` (row i is nodes[i]'s).
  NodeBatch batch(NodeSpan nodes, const GpuResourceConfig& resources);
  // The nodes of `nodes` whose verdict is kPass, in order, as a batch over the same rows.
  NodeBatch feasible(const NodeBatch& nodes, std::span<const Verdict> verdict);
  // Original positions (in the batch given to feasible) of the nodes it returned.
  std::span<const uint32_t> feasibleIndex() const { return {index_.data(), live_}; }
  // What the failure codes of the last filter run stand for.
  const FailureCodes& failures() const { return failures_; }

 private:
  friend class Profile;
  std::vector<const NodeInfo*> candidates_;
  std::vector<uint32_t> candidateIds_;
  std::vector<uint32_t> index_;
  std::vector<uint32_t> positions_;  // 0, 1, 2, …: the ids of batch()'s rows
  NodeColumns rows_;
  std::vector<Verdict> verdicts_;
  std::vector<int32_t> pluginScores_;
  std::vector<int64_t> totals_;
  std::vector<int32_t> narrowTotals_;
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

  // Runs the Filter plugins over `nodes` after a successful preFilter: verdict[i] receives
  // nodes[i]'s (verdict.size() == nodes.size()), kPass or a code of scratch.failures().
  void filter(const CycleState& state, const NodeBatch& nodes, std::span<Verdict> verdict,
              ProfileScratch& scratch) const;
  // filter after a preFilter that returned `preFilter`: when it failed, every node gets its code.
  void filterAfter(const Status& preFilter, const CycleState& state, const NodeBatch& nodes, std::span<Verdict> verdict,
                   ProfileScratch& scratch) const;
  // preFilter + filterAfter.
  void runFilter(const codec::Pod& pod, CycleState& state, const ClusterState& cluster, const NodeBatch& nodes,
                 std::span<Verdict> verdict, ProfileScratch& scratch) const;

  // filter for records without rows: out[i] receives nodes[i]'s Status. Returns the feasible
  // nodes in input order (their positions: scratch.feasibleIndex()).
  NodeSpan filter(const CycleState& state, NodeSpan nodes, std::span<Status> out, ProfileScratch& scratch) const;
  // preFilter + that filter; when preFilter fails every node gets its status and none is feasible.
  NodeSpan runFilter(const codec::Pod& pod, CycleState& state, const ClusterState& cluster, NodeSpan nodes,
                     std::span<Status> out, ProfileScratch& scratch) const;

  // Weighted sum of the scoring plugins' 0..100 scores for each node of `nodes` (normally the
  // feasible ones). Higher is better; the result has nodes.size() entries.
  std::span<const int64_t> scoreTotals(CycleState& state, const ClusterState& cluster, const NodeBatch& nodes,
                                       ProfileScratch& scratch) const;

  // scoreTotals mapped to the wire range; out.size() == nodes.size().
  void extenderScores(CycleState& state, const ClusterState& cluster, const NodeBatch& nodes, std::span<int32_t> out,
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
  std::string name_;
  GpuResourceConfig gpuResources_;
  std::vector<Entry> plugins_;
  bool narrowTotals_ = false;  // every weighted total fits 32 bits
};

}  // namespace fleetsched::plugins
