// Adds the `replay` subcommand to a CLI11 app. The subcommand's callback runs
// replay::runCommand and turns a non-zero result into CLI::RuntimeError(code), which
// fleetsched exits with.
#pragma once

#include <CLI/CLI.hpp>

#include "replay/replay.h"

namespace fleetsched::replay {

// `options` must outlive app.parse().
CLI::App* addReplayCommand(CLI::App& app, Options& options);

}  // namespace fleetsched::replay
