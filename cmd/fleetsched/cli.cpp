#include "cmd/fleetsched/cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "cmd/fleetsched/build_info.h"
#include "fleetsched_version.h"

namespace fleetsched::cmd {

namespace {

// CLI11's formatter, with flag names as a user types them (`--no-shuffle`, not the
// `--no-shuffle{false}` CLI11 prints for a flag that stores a default value) and an option's
// default shown once: as `=VALUE`, unless its description states it ("(default: one per core)")
// or it is an empty list.
class Formatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string opts = CLI::Formatter::make_option_opts(opt);
    const std::string& value = opt->get_default_str();
    if (!value.empty() && (value == "[]" || opt->get_description().find("(default") != std::string::npos)) {
      if (const size_t at = opts.find("=" + value); at != std::string::npos) opts.erase(at, value.size() + 1);
    }
    return opts;
  }

  std::string make_option_name(const CLI::Option* opt, bool positional) const override {
    if (positional) return CLI::Formatter::make_option_name(opt, positional);
    std::string names;
    for (const auto& s : opt->get_snames()) names += (names.empty() ? "-" : ",-") + s;
    for (const auto& l : opt->get_lnames()) names += (names.empty() ? "--" : ",--") + l;
    return names;
  }
};

// __DATE__ ("Dec  5 2026") and __TIME__ as RFC 3339 (GCC takes both from SOURCE_DATE_EPOCH when
// it is set, for reproducible builds). This file is rebuilt whenever the commit changes.
std::string buildDate() {
  static const char* const kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  const std::string date = __DATE__;
  const std::string month = date.substr(0, 3);
  const int m = static_cast<int>(std::string(kMonths).find(month) / 3) + 1;
  const int day = std::stoi(date.substr(4, 2));
  char out[32];
  std::snprintf(out, sizeof out, "%s-%02d-%02dT%sZ", date.substr(7, 4).c_str(), m, day, __TIME__);
  return out;
}

}  // namespace

BuildInfo buildInfo() {
  BuildInfo b;
  b.version = FLEETSCHED_VERSION;
  b.compiler = FLEETSCHED_COMPILER;
  const std::string git = FLEETSCHED_GIT_INFO;
  const size_t space = git.find(' ');
  if (space != std::string::npos) {
    b.gitCommit = git.substr(0, space);
    b.gitCommitDate = git.substr(space + 1);
  }
  b.buildDate = buildDate();
  return b;
}

namespace {

struct Library {
  const char* name;
  const char* version;
};
constexpr Library kLibraries[] = {
    {"libuv", FLEETSCHED_LIBUV_VERSION},       {"simdjson", FLEETSCHED_SIMDJSON_VERSION},
    {"yaml-cpp", FLEETSCHED_YAMLCPP_VERSION},  {"CLI11", CLI11_VERSION},
    {"mimalloc", FLEETSCHED_MIMALLOC_VERSION},
};

std::string versionLine() {
  const BuildInfo b = buildInfo();
  return "fleetsched " + b.version + " (commit " + b.gitCommit.substr(0, 12) + ", built " + b.buildDate +
         ", " + b.compiler + ")";
}

// The values are ours (versions, hashes, dates): none carries a quote or a backslash.
std::string versionJson() {
  const BuildInfo b = buildInfo();
  std::ostringstream o;
  o << "{\n  \"version\": \"" << b.version << "\",\n  \"gitCommit\": \"" << b.gitCommit
    << "\",\n  \"gitCommitDate\": \"" << b.gitCommitDate << "\",\n  \"buildDate\": \"" << b.buildDate
    << "\",\n  \"compiler\": \"" << b.compiler << "\",\n  \"libraries\": {";
  const char* sep = "\n";
  for (const auto& l : kLibraries) {
    o << sep << "    \"" << l.name << "\": \"" << l.version << "\"";
    sep = ",\n";
  }
  o << "\n  }\n}\n";
  return o.str();
}

std::string versionYaml() {
  const BuildInfo b = buildInfo();
  std::ostringstream o;
  o << "version: " << b.version << "\ngitCommit: \"" << b.gitCommit << "\"\ngitCommitDate: \""
    << b.gitCommitDate
    << "\"\nbuildDate: \"" << b.buildDate << "\"\ncompiler: " << b.compiler << "\nlibraries:\n";
  for (const auto& l : kLibraries) o << "  " << l.name << ": \"" << l.version << "\"\n";
  return o.str();
}

const CLI::App* findCommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (s->get_name() == name) return s;
  }
  return nullptr;
}

std::string commandList(const CLI::App& app) {
  std::string list = "Available commands:\n";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    std::string name = sub->get_name();
    name.resize(std::max<size_t>(name.size(), 12), ' ');
    list += "  " + name + "  " + sub->get_description() + "\n";
  }
  return list;
}

// The command the error belongs to: "fleetsched" or "fleetsched serve".
std::string commandPath(const CLI::App& app) {
  std::string path = app.get_name();
  const CLI::App* cur = &app;
  while (true) {
    const auto parsed = cur->get_subcommands();
    if (parsed.empty()) break;
    cur = parsed.front();
    path += " " + cur->get_name();
  }
  return path;
}

}  // namespace

void configureRoot(CLI::App& app) {
  app.name("fleetsched");
  app.formatter(std::make_shared<Formatter>());
  // Every option's help shows its default (an empty one shows nothing).
  app.option_defaults()->always_capture_default();
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", [] { return versionLine(); }, "Print the version and exit");
  app.footer(
      "Run 'fleetsched help COMMAND' or 'fleetsched COMMAND --help' for a command's flags and examples.\n"
      "\n"
      "Exit status:\n"
      "  0  success (help and version included)\n"
      "  1  the command ran and failed: a file, the network, a configuration it could not use\n"
      "  2  usage error: an unknown command or flag, a missing or bad flag value");
}

void addVersionCommand(CLI::App& app) {
  auto format = std::make_shared<std::string>();
  CLI::App* cmd =
      app.add_subcommand("version", "Print the version, commit, build date, compiler and libraries");
  cmd->add_option("-o,--output", *format, "Output format (default: one line of text)")
      ->check(CLI::IsMember({"json", "yaml"}).description(""))
      ->type_name("json|yaml");
  cmd->footer(
      "Examples:\n"
      "  fleetsched version\n"
      "  fleetsched version -o json\n"
      "  fleetsched --version");
  cmd->callback([format] {
    if (*format == "json") {
      std::cout << versionJson();
    } else if (*format == "yaml") {
      std::cout << versionYaml();
    } else {
      std::cout << versionLine() << "\n";
    }
  });
}

void addHelpCommand(CLI::App& app) {
  auto topic = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("help", "Help about any command");
  cmd->add_option("command", *topic, "The command to explain (default: fleetsched itself)");
  cmd->footer(
      "Examples:\n"
      "  fleetsched help\n"
      "  fleetsched help serve");
  cmd->callback([&app, topic] {
    if (topic->empty()) {
      // app.help() would show the selected command's help, this one's.
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return;
    }
    const CLI::App* sub = findCommand(app, *topic);
    if (sub == nullptr) {
      std::string list = commandList(app);
      list.pop_back();  // the error adds its own line end
      throw CLI::ValidationError("unknown command \"" + *topic + "\" for \"fleetsched\"\n" + list);
    }
    std::cout << sub->help(app.get_name());
  });
}

int run(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    // A command's own failure: 1, or 2 where the command itself judged its flags unusable.
    const int code = e.get_exit_code();
    return code == kExitUsage ? kExitUsage : (code == kExitOk ? kExitOk : kExitFailure);
  } catch (const CLI::Success& e) {
    return app.exit(e) == 0 ? kExitOk : kExitFailure;  // --help, --version
  } catch (const CLI::ParseError& e) {
    // An unknown command reads to CLI11 as a stray argument of the root.
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-' &&
        findCommand(app, argv[1]) == nullptr) {
      std::cerr << "Error: unknown command \"" << argv[1] << "\" for \"fleetsched\"\n"
                << commandList(app) << "Run 'fleetsched --help' for usage.\n";
      return kExitUsage;
    }
    const std::string path = commandPath(app);
    std::cerr << "Error: " << e.what() << "\nRun '" << path << " --help' for usage.\n";
    return kExitUsage;
  }
  if (app.get_subcommands().empty()) {
    std::cerr << "Error: a command is required\n"
              << commandList(app) << "Run 'fleetsched --help' for usage.\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace fleetsched::cmd
