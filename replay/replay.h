// `fleetsched replay`: runs trace-replay experiments (traces × policies × seeds) in process,
// spread over worker threads, and reports them: a table on stdout (measured vs published
// allocation at 100 % and 130 % arrival), runs.csv, curves.csv, summary.csv and summary.json
// in the output folder, and allocation.png (one line per policy, one panel per trace) when
// python3 can plot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "replay/experiment.h"

namespace fleetsched::replay {

struct Options {
  std::string traceDir;             // folder with openb_node_list_gpu_node.csv and pod lists
  std::string nodeFile;             // overrides traceDir/openb_node_list_gpu_node.csv
  std::vector<std::string> traces;  // names (default -> openb_pod_list_default.csv) or CSV paths
  std::vector<std::string> policies;  // built-in policies (plugins::policies::policyNames())
  // A FleetschedConfiguration: each of its profiles is replayed too, as `serve` runs it
  // (ExperimentSpec::config), under the profile's name.
  std::string configFile;
  std::vector<uint64_t> seeds;
  double tuneRatio = 1.3;
  bool shuffle = true;
  size_t podLimit = 0;
  unsigned jobs = 0;                // 0: one per core
  std::string outDir = "replay-out";
  bool plot = true;
  // Also write each run's placements, one line per attempt ("pod -> node gpu,gpu" or "pod -> -"),
  // to placements-<trace>-<policy>-<seed>.txt in outDir.
  bool writePlacements = false;
  std::string plotScript;           // default: replay/plot_allocation.py under FLEETSCHED_SOURCE_ROOT or .
  bool progress = true;
  // When set, each (trace, seed)'s pods in submission order and its node list (with the seeded
  // names) are written there as <trace>-<seed>-pods.csv and <trace>-<seed>-nodes.csv, in the
  // trace files' columns: what a live run needs to submit the replay's pods to a real cluster.
  std::string planDir;
};

// Defaults for the empty fields: the five anchor traces, every built-in policy (none when a
// config is given), seeds 42..51, the trace folder from FLEETSCHED_OPENB_DIR.
Options withDefaults(Options o);

// Loads the traces and runs every (trace, policy, seed) experiment on o.jobs threads; nullopt and
// a message in `error` when an input cannot be read.
std::optional<std::vector<ExperimentResult>> runExperiments(const Options& options, std::string& error);

// One trace × policy over its seeds: mean allocation at 100 % and 130 % arrival, the largest
// distance of one seed from the mean, and the published mean when replay/published_allocation.csv
// has one.
struct Summary {
  std::string trace, policy;
  size_t runs = 0;
  double at100 = 0, at130 = 0, spread100 = 0, spread130 = 0;
  double frag130 = 0, failed = 0, seconds = 0, p50 = 0, p99 = 0, cpuP50 = 0, cpuP99 = 0;
  bool hasPublished = false;
  double pub100 = 0, pub130 = 0;
};
// Per trace and policy, in the order they first appear in `results`.
std::vector<Summary> summarise(const std::vector<ExperimentResult>& results);

// Runs the experiments and writes the report; returns the process exit code.
int runCommand(const Options& options);

}  // namespace fleetsched::replay
