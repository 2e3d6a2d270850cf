#include "plugins/fit/fit_plugin.h"

#include "plugins/args_reader.h"
#include "plugins/node_columns.h"

namespace fleetsched::plugins::fit {
namespace {

class FitPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kName; }
  bool filters() const override { return true; }

  void filter(const CycleState& state, int, const NodeBatch& nodes, std::span<Verdict> verdict,
              FailureCodes& failures) const override {
    const int64_t cpu = state.pod.milliCpu, mem = state.pod.memory;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (verdict[i] != kPass) continue;
      const NodeInfo& n = *nodes[i];
      if (n.allocPods > 0 && n.usedPods + 1 > n.allocPods) {
        verdict[i] = failures.code({Code::Unschedulable, "Too many pods"});
      } else if (cpu > 0 && n.usedMilliCpu + cpu > n.allocMilliCpu) {
        verdict[i] = failures.code({cpu > n.allocMilliCpu ? Code::UnschedulableAndUnresolvable : Code::Unschedulable,
                                    "Insufficient cpu"});
      } else if (mem > 0 && n.usedMemory + mem > n.allocMemory) {
        verdict[i] = failures.code({mem > n.allocMemory ? Code::UnschedulableAndUnresolvable : Code::Unschedulable,
                                    "Insufficient memory"});
      }
    }
  }
};

}  // namespace

std::optional<Args> parseArgs(const YAML::Node& node, std::string& error) {
  ArgsReader r(node);
  if (!r.finish(error)) return std::nullopt;
  return Args{};
}

std::unique_ptr<Plugin> create(const Args&) { return std::make_unique<FitPlugin>(); }

std::unique_ptr<Plugin> createFromYaml(const YAML::Node& args, std::string& error) {
  auto a = parseArgs(args, error);
  return a ? create(*a) : nullptr;
}

}  // namespace fleetsched::plugins::fit
