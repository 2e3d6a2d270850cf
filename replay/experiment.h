// One replay experiment as the published evaluation runs it (spec/gpu-scheduling.md §3.3–3.4):
// GPU nodes only; pods sorted by name then shuffled once with the seed; the list tuned to
// tuneRatio × GPU capacity by cloning pods drawn with replacement from the name-sorted list;
// node names prefixed with a seeded 4-digit permutation (fixing the smallest-name tie-break);
// pods placed one at a time and never released; failures dropped. Metrics: allocation and
// fragmentation ratio per 1 % arrival bin, failed pods, per-pod decision latency.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codec/model.h"
#include "plugins/policies/fgd/frag_model.h"
#include "replay/trace.h"

namespace fleetsched::replay {

constexpr int kMaxBin = 130;  // arrival bins 0..130 % of GPU capacity

// A loaded trace, shared read-only by all the runs over it.
struct TraceData {
  std::string name;
  std::vector<NodeRow> nodes;  // GPU nodes only, sorted by name
  std::vector<PodRow> pods;    // sorted by name (the reference copy)
  // One codec::Pod per row, as a server would decode it: requests plus fleetsched.io/gpu-milli
  // and fleetsched.io/gpu-models annotations. Views point into `pods` and `annotationValues`.
  std::vector<codec::Pod> objects;
  std::vector<std::string> annotationValues;
  // Pod classes counted over the trace before tuning (CPU-only pods included); each policy cuts
  // its typical pods from them (plugins::policies::fragModelFor).
  plugins::policies::TypicalPods typical;
  // The published cut (95 %), which the fragmentation metric uses whatever the policy.
  std::shared_ptr<const plugins::policies::FragModel> typicalPods;
};

// Builds TraceData from rows (drops CPU-only nodes, sorts, learns typical pods).
std::shared_ptr<const TraceData> prepareTrace(std::string name, std::vector<NodeRow> nodes, std::vector<PodRow> pods);

struct ExperimentSpec {
  // A built-in policy (plugins::policies::policyNames(): the published pipeline, typical pods
  // learned from the whole trace up front), or with `config` the name of one of its profiles.
  std::string policy;
  uint64_t seed = 42;
  double tuneRatio = 1.3;  // <= 0: no tuning
  bool shuffle = true;
  size_t podLimit = 0;     // > 0: stop after this many attempts
  // FleetschedConfiguration YAML whose profile `policy` runs as `serve` runs it (plugins from
  // their args, FGD and Fleet learning typical pods online from the pods they see).
  std::shared_ptr<const std::string> config;
};

struct ExperimentResult {
  std::string trace;
  std::string policy;
  uint64_t seed = 0;
  size_t attempts = 0;
  size_t failed = 0;
  int64_t capacityMilli = 0;
  int64_t arrivedMilli = 0;
  int64_t usedMilli = 0;
  int64_t gpusTouched = 0;
  int64_t totalGpus = 0;
  // Per arrival bin (percent of GPU capacity): mean allocation ratio (percent) and mean
  // fragmentation ratio (percent of idle GPU); NaN where the bin and its neighbours are empty.
  std::array<double, kMaxBin + 1> allocation{};
  std::array<double, kMaxBin + 1> fragmentation{};
  double finalFragRatio = 0;    // Σ F / Σ idle, percent, after the last pod
  double finalFragMilli = 0;
  // Per-pod decision time (PreFilter to GPU choice), wall clock; and the same in thread CPU
  // time, which a shared, loaded machine does not inflate with preemption.
  double latencyP50Us = 0, latencyP90Us = 0, latencyP99Us = 0, latencyMaxUs = 0;
  double cpuP50Us = 0, cpuP99Us = 0;
  double seconds = 0;           // wall time of the whole experiment
  // "pod -> node gpu,gpu" per attempt ("pod -> -" when it failed), only when asked for.
  std::vector<std::string> placements;
};

// What an experiment submits, in order, and the node names it uses: the seeded shuffle and
// tuning, and the seeded name prefixes. The same for every policy given the trace and seed, so
// a live run (bench/replay/live.py) can submit exactly the replay's pods.
struct PlannedPod {
  uint32_t row;   // in TraceData::pods
  int32_t clone;  // -1: the original pod; else the i of "<name>-tuned-<i>"
};
struct ExperimentPlan {
  std::vector<PlannedPod> pods;         // attempt order, podLimit applied
  std::vector<std::string> nodeNames;   // nodeNames[i] is the name TraceData::nodes[i] gets
  std::string podName(const TraceData& trace, size_t attempt) const;
};
ExperimentPlan planExperiment(const TraceData& trace, const ExperimentSpec& spec);

ExperimentResult runExperiment(const TraceData& trace, const ExperimentSpec& spec, bool recordPlacements = false);

// Python's round(x, 2) for the values the reference analysis rounds (half to even on the binary value).
double roundTo2(double x);

}  // namespace fleetsched::replay
