#include "replay/cli.h"

#include <memory>
#include <string>

namespace fleetsched::replay {

namespace {

// "42-51" or "42,43,50" (or a mix) -> the seed list.
std::vector<uint64_t> parseSeeds(const std::vector<std::string>& items) {
  std::vector<uint64_t> seeds;
  for (const auto& item : items) {
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      seeds.push_back(std::stoull(item));
      continue;
    }
    const uint64_t lo = std::stoull(item.substr(0, dash)), hi = std::stoull(item.substr(dash + 1));
    if (hi < lo) throw CLI::ValidationError("--seeds", item + ": empty range");
    for (uint64_t s = lo; s <= hi; ++s) seeds.push_back(s);
  }
  return seeds;
}

// Fills `o` from the options on `cmd`.
void addReplayOptions(CLI::App& cmd, Options& o) {
  auto seeds = std::make_shared<std::vector<std::string>>();
  cmd.add_option("--trace-dir", o.traceDir,
                 "Folder holding the openb CSVs (default: $FLEETSCHED_OPENB_DIR)");
  cmd.add_option("--nodes", o.nodeFile, "Node list CSV (default: <trace-dir>/openb_node_list_gpu_node.csv)");
  cmd.add_option("--traces", o.traces,
                 "Pod lists: names (default, cpu100, ...) or CSV paths (default: the five anchor traces)")
      ->delimiter(',');
  cmd.add_option("--policies", o.policies,
                 "Policies: random, dotprod, clustering, packing, bestfit, fgd, fleet (default: all)")
      ->delimiter(',');
  cmd.add_option("--config", o.configFile,
                 "FleetschedConfiguration: replay each of its profiles as serve runs it, named by profile "
                 "(with --policies, next to those)");
  cmd.add_option("--seeds", *seeds, "Seeds, e.g. 42-51 or 42,43 (default: 42-51)")->delimiter(',');
  cmd.add_option("--tune-ratio", o.tuneRatio, "Tune the pod list to this multiple of GPU capacity (<= 0: off)")
      ->capture_default_str();
  cmd.add_flag("!--no-shuffle", o.shuffle, "Keep file order instead of one seeded shuffle");
  cmd.add_option("--max-pods", o.podLimit, "Stop each experiment after this many pods (0: all)");
  cmd.add_option("-j,--jobs", o.jobs, "Experiments run in parallel (default: one per core)");
  cmd.add_option("-o,--out", o.outDir, "Folder for runs.csv, curves.csv, summary.csv/json, allocation.png")
      ->capture_default_str();
  cmd.add_flag("!--no-plot", o.plot, "Skip the PNG plot");
  cmd.add_option("--plot-script", o.plotScript, "Plot script (default: replay/plot_allocation.py)");
  cmd.add_flag("!--no-progress", o.progress, "No progress bar");
  cmd.add_flag("--write-placements", o.writePlacements,
               "Also write every run's placements (pod -> node gpus) to placements-<trace>-<policy>-<seed>.txt");
  cmd.add_option("--write-plan", o.planDir,
                 "Also write each trace and seed's pods in submission order and its named nodes to this folder "
                 "(<trace>-<seed>-pods.csv, -nodes.csv), for a live run of the same experiment");
  cmd.parse_complete_callback([seeds, &o] { o.seeds = parseSeeds(*seeds); });
}

}  // namespace

CLI::App* addReplayCommand(CLI::App& app, Options& options) {
  CLI::App* cmd = app.add_subcommand("replay", "Replay a GPU trace through the placement policies");
  addReplayOptions(*cmd, options);
  cmd->footer(
      "Examples:\n"
      "  # every policy over the five anchor traces, seeds 42-51 (the published table)\n"
      "  fleetsched replay --trace-dir openb -o replay-out\n"
      "  # two policies, one trace, three seeds, no plot\n"
      "  fleetsched replay --trace-dir openb --traces default --policies fgd,fleet --seeds 42-44 --no-plot\n"
      "  # each profile of a FleetschedConfiguration next to FGD\n"
      "  fleetsched replay --trace-dir openb --config profiles.yaml --policies fgd");
  cmd->callback([&options] {
    if (const int rc = runCommand(options); rc != 0) throw CLI::RuntimeError(rc);
  });
  return cmd;
}

}  // namespace fleetsched::replay
