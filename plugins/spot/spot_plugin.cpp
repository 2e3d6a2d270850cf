#include "plugins/spot/spot_plugin.h"

#include "plugins/annotations.h"
#include "plugins/args_reader.h"
#include "plugins/node_columns.h"

namespace fleetsched::plugins::spot {
namespace {

struct SpotCycle final : PluginState {
  bool tolerant = false;
};

class SpotPlugin final : public Plugin, public ColumnFilter, public ColumnScorer {
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

  void filter(const CycleState& state, int index, NodeSpan nodes, std::span<Status> out) const override {
    if (static_cast<const SpotCycle*>(state.slot(index))->tolerant) return;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i]->capacityType == CapacityType::Spot) out[i] = {Code::UnschedulableAndUnresolvable, kNotTolerant};
    }
  }

  bool filterColumns(const CycleState& state, int index, const NodeColumns& columns, std::span<const uint32_t> ids,
                     std::span<uint8_t> verdict, FailureCodes& failures) const override {
    if (static_cast<const SpotCycle*>(state.slot(index))->tolerant) return true;
    const uint8_t notTolerant = failures.code({Code::UnschedulableAndUnresolvable, kNotTolerant});
    const NodeColumns::Row* rows = columns.rows();
    const uint32_t limit = columns.idLimit();
    for (size_t i = 0; i < ids.size(); ++i) {
      const uint8_t v = verdict[i];
      const uint32_t id = ids[i];
      if (id >= limit) {
        if (v == kColumnPass) verdict[i] = kColumnUndecided;
        continue;
      }
      // Which nodes are spot is data, not a pattern: select with masks. (Written as a ?: select,
      // GCC branched on the capacity type and mispredicted on half the fleet.)
      const auto spot = static_cast<uint8_t>(-static_cast<int>(rows[id].capacityType == CapacityType::Spot));
      const auto pass = static_cast<uint8_t>(-static_cast<int>(v == kColumnPass));
      verdict[i] = static_cast<uint8_t>(v ^ ((v ^ notTolerant) & spot & pass));
    }
    return true;
  }

  bool preScoreColumns(CycleState&, const ClusterState&, int, const NodeColumns&, std::span<const uint32_t>,
                       NodeSpan) const override {
    return true;  // no PreScore
  }

  void scoreColumns(const CycleState& state, int index, const NodeColumns& columns, std::span<const uint32_t> ids,
                    NodeSpan, std::span<int32_t> out) const override {
    if (!static_cast<const SpotCycle*>(state.slot(index))->tolerant) return;
    const int32_t onSpot = args_.preferSpot ? kMaxNodeScore : 0;
    const int32_t offSpot = kMaxNodeScore - onSpot;
    const NodeColumns::Row* rows = columns.rows();
    for (size_t i = 0; i < ids.size(); ++i) out[i] = rows[ids[i]].capacityType == CapacityType::Spot ? onSpot : offSpot;
  }

  void score(const CycleState& state, int index, NodeSpan nodes, std::span<int32_t> out) const override {
    // Intolerant pods only ever see non-spot nodes: they all score the same (neutral).
    if (!static_cast<const SpotCycle*>(state.slot(index))->tolerant) return;
    const int32_t onSpot = args_.preferSpot ? kMaxNodeScore : 0;
    const int32_t offSpot = kMaxNodeScore - onSpot;
    for (size_t i = 0; i < nodes.size(); ++i) {
      out[i] = nodes[i]->capacityType == CapacityType::Spot ? onSpot : offSpot;
    }
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
