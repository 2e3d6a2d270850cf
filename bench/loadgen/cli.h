// `fleetsched loadgen`: wires runLoadgen into a CLI11 app (the main binary and the standalone
// tool share one definition of the flags).
#pragma once

namespace CLI {
class App;
}

namespace fleetsched::bench::loadgen {

// Adds the `loadgen` subcommand; a non-zero exit code from runLoadgen becomes CLI::RuntimeError.
CLI::App* addLoadgenCommand(CLI::App& app);

}  // namespace fleetsched::bench::loadgen
