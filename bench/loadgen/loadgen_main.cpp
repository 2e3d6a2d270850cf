// Standalone `loadgen` (and `gen-fleet`) for use before (and besides) the main binary.
#include <CLI/CLI.hpp>

#include "bench/fleet/cli.h"
#include "bench/loadgen/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"fleetsched benchmark tools"};
  app.require_subcommand(1);
  fleetsched::bench::fleet::addGenFleetCommand(app);
  fleetsched::bench::loadgen::addLoadgenCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
