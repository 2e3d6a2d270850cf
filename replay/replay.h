// `fleetsched replay`: runs trace-replay experiments (traces × policies × seeds) in process,
// spread over worker threads, and reports them: a table on stdout (measured vs published
// allocation at 100 % and 130 % arrival), runs.csv, curves.csv, summary.csv and summary.json
// in the output folder, and allocation.png (one line per policy, one panel per trace) when
// python3 can plot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fleetsched::replay {

struct Options {
  std::string traceDir;             // folder with openb_node_list_gpu_node.csv and pod lists
  std::string nodeFile;             // overrides traceDir/openb_node_list_gpu_node.csv
  std::vector<std::string> traces;  // names (default -> openb_pod_list_default.csv) or CSV paths
  std::vector<std::string> policies;
  std::vector<uint64_t> seeds;
  double tuneRatio = 1.3;
  bool shuffle = true;
  size_t podLimit = 0;
  unsigned jobs = 0;                // 0: one per core
  std::string outDir = "replay-out";
  bool plot = true;
  std::string plotScript;           // default: replay/plot_allocation.py under FLEETSCHED_SOURCE_ROOT or .
  bool progress = true;
};

// Defaults for the empty fields: the five anchor traces, every policy, seeds 42..51, the trace
// folder from FLEETSCHED_OPENB_DIR.
Options withDefaults(Options o);

// Runs the experiments and writes the report; returns the process exit code.
int runCommand(const Options& options);

// Published mean allocation (%) at 100 % and 130 % arrival for an anchor trace and a baseline
// policy (spec/gpu-scheduling.md §4); false when there is none.
bool publishedAllocation(const std::string& trace, const std::string& policy, double& at100, double& at130);

}  // namespace fleetsched::replay
