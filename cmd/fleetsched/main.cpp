// fleetsched: one binary, subcommands in the habit of kubectl and etcdctl.
#include <CLI/CLI.hpp>

#include "cmd/fleetsched/cli.h"
#include "cmd/fleetsched/serve.h"
#include "replay/cli.h"
#include "tools/fleet/cli.h"
#include "tools/loadgen/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"fleetsched: a scheduling engine for Kubernetes GPU fleets"};
  fleetsched::cmd::configureRoot(app);

  fleetsched::cmd::ServeOptions serve;
  fleetsched::cmd::addServeCommand(app, serve);
  fleetsched::replay::Options replay;
  fleetsched::replay::addReplayCommand(app, replay);
  fleetsched::tools::fleet::addGenFleetCommand(app);
  fleetsched::tools::loadgen::addLoadgenCommand(app);
  fleetsched::tools::loadgen::addNullExtenderCommand(app);
  fleetsched::cmd::addVersionCommand(app);
  fleetsched::cmd::addHelpCommand(app);

  return fleetsched::cmd::run(app, argc, argv);
}
