// fleetsched: one binary, subcommands in the habit of kubectl and etcdctl.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "fleetsched_version.h"

int main(int argc, char** argv) {
  CLI::App app{"fleetsched: a scheduling engine for Kubernetes GPU fleets"};
  app.require_subcommand(1);
  auto* version = app.add_subcommand("version", "Print the version");
  version->callback([] { std::printf("fleetsched %s\n", FLEETSCHED_VERSION); });
  CLI11_PARSE(app, argc, argv);
  return 0;
}
