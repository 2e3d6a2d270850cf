// `fleetsched gen-fleet`: writes a benchmark corpus (nodes list file, pending pods, optional
// bound pods, optional ExtenderArgs request bodies) into a folder. runGenFleet does the work;
// addGenFleetCommand wires it into a CLI11 app.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace fleetsched::tools::fleet {

struct GenFleetOptions {
  std::string outDir = "corpus";
  size_t nodes = 1000;
  size_t pods = 1000;
  size_t boundPods = 0;  // pods generated bound to nodes (bound-pods.json), for usage accounting
  uint64_t seed = 1;
  double cpuOnlyFraction = 0.2;
  size_t minNodeBytes = 10 * 1024;
  size_t maxNodeBytes = 14 * 1024;
  std::string region = "us-west-2";
  int zones = 3;
  bool compact = false;       // list files compact instead of kubectl's indented, sorted form
  size_t requests = 0;        // request bodies per mode written as NDJSON (0: none)
  size_t fullModeNodes = 500;  // nodes in each full-mode body (the first N of the fleet)
  bool quiet = false;
};

// Returns a process exit code; prints one line per file written and errors to stderr.
int runGenFleet(const GenFleetOptions& options);

// Adds the `gen-fleet` subcommand to `app`; its callback runs runGenFleet and turns a non-zero
// result into CLI::RuntimeError (fleetsched exits with that code).
CLI::App* addGenFleetCommand(CLI::App& app);

}  // namespace fleetsched::tools::fleet
