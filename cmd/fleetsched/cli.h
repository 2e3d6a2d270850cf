// The root of fleetsched's command line, in the habit of kubectl: `--help` and `help [COMMAND]`
// list the commands, `--version` and `version [-o json|yaml]` describe the build, and every
// failure maps to one of three exit codes.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace fleetsched::cmd {

// Exit codes of every fleetsched command (documented in `fleetsched --help`).
inline constexpr int kExitOk = 0;       // success, help and version included
inline constexpr int kExitFailure = 1;  // the command ran and failed (files, network, a bad config)
inline constexpr int kExitUsage = 2;    // bad command line: unknown command or flag, bad flag value

// What `fleetsched version` reports (and /metrics' fleetsched_build_info).
struct BuildInfo {
  std::string version;
  std::string gitCommit = "unknown";
  std::string gitCommitDate = "unknown";
  std::string buildDate;
  std::string compiler;
};
BuildInfo buildInfo();

// Sets up the root app before any subcommand is added: its name, help formatter, flag defaults
// shown in help, --version and the exit-code footer. Subcommands inherit the formatter and the
// option defaults.
void configureRoot(CLI::App& app);

// Adds `version` and `help`; call after the other subcommands so that help lists them all.
void addVersionCommand(CLI::App& app);
void addHelpCommand(CLI::App& app);

// Parses and runs the command line; returns the process exit code (kExit*).
int run(CLI::App& app, int argc, char** argv);

}  // namespace fleetsched::cmd
