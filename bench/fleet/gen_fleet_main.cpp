// Standalone `gen-fleet` for use before (and besides) the main binary.
#include <CLI/CLI.hpp>

#include "bench/fleet/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"fleetsched benchmark corpus generator"};
  app.require_subcommand(1);
  fleetsched::bench::fleet::addGenFleetCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
