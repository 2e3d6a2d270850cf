// fleetsched: one binary, subcommands in the habit of kubectl and etcdctl.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "bench/fleet/cli.h"
#include "bench/loadgen/cli.h"
#include "cmd/fleetsched/serve.h"
#include "fleetsched_version.h"
//REPLAY #include "replay/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"fleetsched: a scheduling engine for Kubernetes GPU fleets"};
  app.require_subcommand(1);

  fleetsched::cmd::ServeOptions serve;
  fleetsched::cmd::addServeCommand(app, serve);

  //REPLAY fleetsched::replay::Options replay;
  //REPLAY fleetsched::replay::addReplayCommand(app, replay);
  fleetsched::bench::fleet::addGenFleetCommand(app);
  fleetsched::bench::loadgen::addLoadgenCommand(app);

  app.add_subcommand("version", "Print the version")->callback([] {
    std::printf("fleetsched %s\n", FLEETSCHED_VERSION);
  });
  CLI11_PARSE(app, argc, argv);
  return 0;
}
