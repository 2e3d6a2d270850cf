// The order in which kube-scheduler v1.36 hands an extender its candidate nodes, so the load
// generator sends what a real scheduler sends instead of one list repeated pod after pod.
//
// What kube-scheduler does (k8s.io/kubernetes v1.36.3, pkg/scheduler):
//   - its snapshot lists nodes zone by zone, round robin (backend/cache/node_tree.go, list());
//   - schedule_one.go findNodesThatPassFilters checks nodes[(nextStartNodeIndex + i) % n] on
//     `parallelism` goroutines (16 by default) through Parallelizer.Until, which hands out
//     chunks of chunkSizeFor(n, parallelism) = min(⌊√n⌋, n/parallelism + 1) consecutive pieces
//     in order (client-go workqueue.ParallelizeUntil); a feasible node is appended to the
//     result when its check finishes (atomic.AddInt32 on the length), so the list interleaves
//     the workers' chunks and differs from pod to pod;
//   - it stops at numFeasibleNodesToFind(percentageOfNodesToScore, n) feasible nodes (all of
//     them below 100 nodes; else n × percentage / 100, adaptive 50 − n/125 % with a floor of
//     5 % when the percentage is 0, and never under 100) and moves nextStartNodeIndex on by
//     the nodes it processed;
//   - findNodesThatPassExtenders sends that list, in that order, to the extender's filter;
//     prioritize gets the nodes the extender kept, in the extender's reply order.
//
// The model takes every node as passing kube-scheduler's own filters (the load generator's
// fleet has room for every pod) and each check as costing the same time ± 50 %, with the
// goroutines starting up to two checks apart; that reproduces the interleaving, not any
// particular host's timing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace fleetsched::tools::loadgen {

// kube-scheduler's defaults for the two knobs the order depends on. The project's manifests set
// percentageOfNodesToScore: 100 (a selective GPU filter must see every node).
inline constexpr int kKubeParallelism = 16;
inline constexpr int kKubePercentageOfNodesToScore = 100;

// parallelize.chunkSizeFor.
size_t kubeChunkSize(size_t nodes, int parallelism);
// Scheduler.numFeasibleNodesToFind (percentage 0: the adaptive default).
size_t kubeNodesToFind(size_t nodes, int percentage);

// The positions (into the snapshot's node list of `nodes` entries) of the nodes one scheduling
// cycle appends, in append order: `count` of them, checked from `start` on.
std::vector<uint32_t> kubeFilterOrder(size_t nodes, size_t start, size_t count, int parallelism, std::mt19937_64& rng);

// The snapshot's node list: indexes of nodes grouped by zone (zones in first-seen order, nodes in
// input order within a zone), taken round robin as nodeTree.list() does.
std::vector<uint32_t> kubeZoneRoundRobin(const std::vector<std::string_view>& zoneOfNode);

}  // namespace fleetsched::tools::loadgen
