#include "plugins/spot/spot_plugin.h"

#include "plugins/annotations.h"
#include "plugins/args_reader.h"
#include "plugins/node_columns.h"

namespace fleetsched::plugins::spot {
namespace {

struct SpotCycle final : PluginState {
  bool tolerant = false;
};

class SpotPlugin final : public Plugin {
 public:
  explicit SpotPlugin(Args args) : args_(std::move(args)) {}

  std::string_view name() const override { return kName; }
  bool filters() const override { return true; }
  bool scores() const override { return true; }

  Status preFilter(CycleState& state, const ClusterState&, int index) const override {
    auto* c = dynamic_cast<SpotCycle*>(state.slot(index));
    if (c == nullptr) {
      state.setSlot(index, std::make_unique<SpotCycle>());
      c = static_cast<SpotCycle*>(state.slot(index));
    }
    c->tolerant = isSpotTolerant(*state.pod.pod, args_.tolerationKeys);
    return {};
  }

  void filter(const CycleState& state, int index, const NodeBatch& nodes, std::span<Verdict> verdict,
              FailureCodes& failures) const override {
    if (static_cast<const SpotCycle*>(state.slot(index))->tolerant) return;
    const Verdict notTolerant = failures.code({Code::UnschedulableAndUnresolvable, kNotTolerant});
    for (size_t i = 0; i < nodes.size(); ++i) {
      // Which nodes are spot is data, not a pattern: select with masks. (Written as a ?: select,
      // GCC branched on the capacity type and mispredicted on half the fleet.)
      const Verdict v = verdict[i];
      const Verdict spot = -static_cast<Verdict>(nodes.row(i).capacityType == CapacityType::Spot);
      const Verdict pass = -static_cast<Verdict>(v == kPass);
      verdict[i] = v ^ ((v ^ notTolerant) & spot & pass);
    }
  }

  void score(const CycleState& state, int index, const NodeBatch& nodes, std::span<int32_t> out) const override {
    // Intolerant pods only ever see non-spot nodes: they all score the same (neutral).
    if (!static_cast<const SpotCycle*>(state.slot(index))->tolerant) return;
    const int32_t onSpot = args_.preferSpot ? kMaxNodeScore : 0;
    const int32_t offSpot = kMaxNodeScore - onSpot;
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = nodes.row(i).capacityType == CapacityType::Spot ? onSpot : offSpot;
  }

 private:
  Args args_;
};

}  // namespace

bool isSpotTolerant(const codec::Pod& pod, const std::vector<std::string>& tolerationKeys) {
  if (const auto* v = codec::findKey(pod.annotations, annotations::kSpotTolerant)) {
    if (*v == "true") return true;
  }
  for (const auto& t : pod.tolerations) {
    if (t.key.empty() && t.opExists) return true;
    for (const auto& k : tolerationKeys) {
      if (t.key == k) return true;
    }
  }
  return false;
}

std::optional<Args> parseArgs(const YAML::Node& node, std::string& error) {
  Args a;
  ArgsReader r(node);
  r.getBool("preferSpot", a.preferSpot);
  r.getStringList("tolerationKeys", a.tolerationKeys, false);
  if (!r.finish(error)) return std::nullopt;
  return a;
}

std::unique_ptr<Plugin> create(const Args& args) { return std::make_unique<SpotPlugin>(args); }

std::unique_ptr<Plugin> createFromYaml(const YAML::Node& args, std::string& error) {
  auto a = parseArgs(args, error);
  return a ? create(*a) : nullptr;
}

}  // namespace fleetsched::plugins::spot
