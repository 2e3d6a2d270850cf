// Cycle: one pod's scheduling cycle through a Profile, and everything it needs between the
// steps: the CycleState (the derived PodInfo, the plugins' per-pod slots), the ProfileScratch
// (rows built for records without any, feasible subsets, score buffers), the filter's verdicts
// and their failure numbering. It is the one driver of the pipeline: the extender's evaluator,
// the C ABI of the in-process plugin, replay, and reserving a pod on a node
// (cache::reserveOnNode) all run their cycles through it, so a step added to the cycle is added
// once.
//
//   begin(profile, pod, cluster)   PreFilter; a failure is every node's verdict
//   filter(batch)                  a verdict per node: kPass or a code of failures()
//   feasible(batch)                the nodes whose verdict is kPass
//   scoreTotals / extenderScores   over the feasible nodes
//   filterOne(node)                one node's Status, outside the batch's verdicts
//   selectGpus(node)               the GPUs the pod gets there
//
// A Cycle belongs to one thread at a time and is reused across pods: once its buffers have grown
// to the largest batch, a cycle allocates nothing on the passing path. The profile, pod and
// cluster given to begin() are borrowed until the next begin(); batches and spans returned point
// into the cycle and stay valid until its next step.
#pragma once

#include <span>
#include <vector>

#include "codec/model.h"
#include "plugins/framework.h"
#include "plugins/node_columns.h"
#include "plugins/profile.h"

namespace fleetsched::plugins {

class Cycle {
 public:
  // Starts the cycle of `pod` under `profile` against `cluster`: derives the PodInfo and runs every
  // PreFilter. A non-success status applies to every node (filter() gives each its code).
  Status begin(const Profile& profile, const codec::Pod& pod, const ClusterState& cluster);

  bool started() const { return profile_ != nullptr; }
  // PreFilter succeeded: the pod may fit some node.
  bool admitted() const { return admitted_; }
  const Status& preFilterStatus() const { return preFilter_; }
  const Profile& profile() const { return *profile_; }
  const codec::Pod& sourcePod() const { return *pod_; }
  const PodInfo& pod() const { return state_.pod; }
  const CycleState& state() const { return state_; }

  // Every node of `nodes` judged: verdict i is nodes[i]'s, kPass or a code of failures(); after a
  // failed PreFilter every node gets its code. The span is the cycle's, writable (the evaluator
  // turns a nominated node's retry into a pass), valid until the next filter().
  std::span<Verdict> filter(const NodeBatch& nodes);
  // What the codes of the last filter() stand for (numbered from 1).
  const FailureCodes& failures() const { return scratch_.failures(); }
  const Status& failure(Verdict code) const { return scratch_.failures().status(code); }

  // The nodes of `nodes` (the batch the last filter() judged) that passed, in order; their
  // positions in `nodes`: feasibleIndex().
  NodeBatch feasible(const NodeBatch& nodes) { return scratch_.feasible(nodes, verdicts_); }
  std::span<const uint32_t> feasibleIndex() const { return scratch_.feasibleIndex(); }

  // A batch over records that have no rows, with rows built in the cycle's scratch.
  NodeBatch batch(NodeSpan nodes) { return scratch_.batch(nodes, profile_->gpuResources()); }

  // Weighted 0..100 totals (replay's exact ranking) or the wire's 0..10 for `feasible`.
  std::span<const int64_t> scoreTotals(const NodeBatch& feasible) {
    return profile_->scoreTotals(state_, *cluster_, feasible, scratch_);
  }
  void extenderScores(const NodeBatch& feasible, std::span<int32_t> out) {
    profile_->extenderScores(state_, *cluster_, feasible, out, scratch_);
  }

  // One node's Status for the cycle's pod (reserve's re-check, preemption's what-if), with rows
  // built for it. Leaves the last filter()'s verdicts as they were; its failure codes do not
  // survive (failures() then numbers this node's).
  Status filterOne(const NodeInfo& node);

  // The GPUs `node` gives the pod (Profile::selectGpus).
  bool selectGpus(const NodeInfo& node, GpuAssignment& out) const { return profile_->selectGpus(state_, node, out); }

 private:
  const Profile* profile_ = nullptr;
  const codec::Pod* pod_ = nullptr;
  const ClusterState* cluster_ = nullptr;
  Status preFilter_;
  bool admitted_ = false;
  CycleState state_;
  ProfileScratch scratch_;
  std::vector<Verdict> verdicts_;
  Status one_[1];
};

}  // namespace fleetsched::plugins
