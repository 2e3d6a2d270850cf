// `fleetsched loadgen` and `fleetsched null-extender`: wire runLoadgen and runNullExtender into a
// CLI11 app.
#pragma once

namespace CLI {
class App;
}

namespace fleetsched::tools::loadgen {

// Adds the `loadgen` subcommand; a non-zero exit code from runLoadgen becomes CLI::RuntimeError.
CLI::App* addLoadgenCommand(CLI::App& app);

// Adds the `null-extender` subcommand (the benchmark floor: it answers, it decides nothing);
// runNullExtender's exit code 2 becomes a usage error, 1 a failure.
CLI::App* addNullExtenderCommand(CLI::App& app);

}  // namespace fleetsched::tools::loadgen
