// Adds the `replay` subcommand to a CLI11 app. The subcommand's callback runs
// replay::runCommand and turns a non-zero result into CLI::RuntimeError(code), which
// CLI11_PARSE / app.exit() return as the exit code.
#pragma once

#include <CLI/CLI.hpp>

#include "replay/replay.h"

namespace fleetsched::replay {

// `options` must outlive app.parse().
CLI::App* addReplayCommand(CLI::App& app, Options& options);

// Fills `options` from the options on `cmd` itself (for a binary whose root is replay).
void addReplayOptions(CLI::App& cmd, Options& options);

}  // namespace fleetsched::replay
