// fleetsched-replay: the replay subcommand as its own binary, until it is folded into
// `fleetsched replay`.
#include <CLI/CLI.hpp>

#include "replay/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"fleetsched-replay: replay GPU traces through the placement policies"};
  fleetsched::replay::Options options;
  fleetsched::replay::addReplayOptions(app, options);
  CLI11_PARSE(app, argc, argv);
  return fleetsched::replay::runCommand(options);
}
