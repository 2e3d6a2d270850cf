#include "plugins/zone/zone_plugin.h"

#include <algorithm>

#include "plugins/annotations.h"
#include "plugins/args_reader.h"
#include "plugins/node_columns.h"

namespace fleetsched::plugins::zone {
namespace {

constexpr int32_t kNeutral = kMaxNodeScore / 2;
constexpr Status kBadPolicy{Code::UnschedulableAndUnresolvable,
                            "invalid annotation fleetsched.io/zone-policy: want spread or pack"};

struct ZoneCycle final : PluginState {
  Policy policy = Policy::Spread;
  bool hasWorkload = false;
  std::string workload;
  std::vector<uint32_t> count;  // per zone id: pods of the workload
  std::vector<int64_t> free;    // per zone id: free GPU milli (or CPU) on the scored nodes
  std::vector<uint8_t> seen;    // per zone id: a scored node is in the zone
  mutable std::vector<int32_t> zoneScore;  // per zone id: Score's result (scratch)
  // PreScore's result: score = base + scale * value, min–max over the seen zones.
  bool neutral = true;
  bool useFree = false;
  int64_t lo = 0, hi = 0;
};

class ZonePlugin final : public Plugin {
 public:
  explicit ZonePlugin(Args args) : args_(std::move(args)) {}

  std::string_view name() const override { return kName; }
  bool scores() const override { return true; }

  Status preFilter(CycleState& state, const ClusterState&, int index) const override {
    auto* c = dynamic_cast<ZoneCycle*>(state.slot(index));
    if (c == nullptr) {
      state.setSlot(index, std::make_unique<ZoneCycle>());
      c = static_cast<ZoneCycle*>(state.slot(index));
    }
    const codec::Pod& pod = *state.pod.pod;
    c->policy = args_.policy;
    if (const auto* v = codec::findKey(pod.annotations, annotations::kZonePolicy)) {
      if (*v == "spread") {
        c->policy = Policy::Spread;
      } else if (*v == "pack") {
        c->policy = Policy::Pack;
      } else {
        return kBadPolicy;
      }
    }
    c->hasWorkload = plugins::workloadKey(pod, args_.workloadLabels, c->workload);
    c->neutral = true;
    return {};
  }

  void preScore(CycleState& state, const ClusterState& cluster, int index, const NodeBatch& nodes) const override {
    auto& c = *static_cast<ZoneCycle*>(state.slot(index));
    c.neutral = true;
    if (!c.hasWorkload) return;
    const uint32_t zones = cluster.zoneCount();
    if (zones <= 1) return;  // no node has a zone
    // assign() reuses capacity: no allocation once the zone table has been seen.
    c.count.assign(zones, 0);
    c.seen.assign(zones, 0);
    cluster.workloadZoneCounts(c.workload, c.count);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const uint16_t z = nodes.row(i).zone;
      if (z != 0 && z < zones) c.seen[z] = 1;
    }
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t z = 1; z < zones; ++z) {
      if (!c.seen[z]) continue;
      lo = std::min<int64_t>(lo, c.count[z]);
      hi = std::max<int64_t>(hi, c.count[z]);
    }
    c.useFree = false;
    if (lo == INT64_MAX) return;  // no scored node has a zone
    if (c.policy == Policy::Pack && hi == 0) {
      // A gang's first pod: pack toward the zone with the most free capacity for it (GPU milli
      // from the rows; CPU, or a ledger the rows could not sum, from the record).
      const bool gpu = state.pod.wantsGpu();
      c.free.assign(zones, 0);
      for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeColumns::Row& r = nodes.row(i);
        if (r.zone == 0 || r.zone >= zones) continue;
        const int64_t free = !gpu || (r.flags & NodeColumns::kUsedClamped)
                                 ? freeOn(state, *nodes[i])
                                 : int64_t{r.gpuCount} * kMilliPerGpu - r.usedMilli;
        c.free[r.zone] += std::max<int64_t>(0, free);
      }
      lo = INT64_MAX, hi = INT64_MIN;
      for (uint32_t z = 1; z < zones; ++z) {
        if (!c.seen[z]) continue;
        lo = std::min(lo, c.free[z]);
        hi = std::max(hi, c.free[z]);
      }
      c.useFree = true;
    }
    if (hi == lo) return;
    c.lo = lo;
    c.hi = hi;
    c.neutral = false;
  }

  void score(const CycleState& state, int index, const NodeBatch& nodes, std::span<int32_t> out) const override {
    const auto& c = *static_cast<const ZoneCycle*>(state.slot(index));
    if (c.neutral) {
      std::fill(out.begin(), out.end(), kNeutral);
      return;
    }
    const int64_t range = c.hi - c.lo;
    const bool higherIsBetter = c.policy == Policy::Pack;
    const size_t zones = c.seen.size();
    // A score depends only on the zone: one division per zone, then a lookup per node.
    c.zoneScore.assign(zones, kNeutral);
    for (size_t z = 1; z < zones; ++z) {
      const int64_t v = c.useFree ? c.free[z] : int64_t{c.count[z]};
      const int64_t s = (v - c.lo) * kMaxNodeScore / range;
      c.zoneScore[z] = static_cast<int32_t>(higherIsBetter ? s : kMaxNodeScore - s);
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const uint16_t z = nodes.row(i).zone;
      out[i] = z < zones ? c.zoneScore[z] : kNeutral;  // zone 0 holds kNeutral
    }
  }

 private:
  // Free capacity of `n` for the pod: GPU milli for GPU pods, else CPU milli.
  static int64_t freeOn(const CycleState& state, const NodeInfo& n) {
    if (!state.pod.wantsGpu()) return n.allocMilliCpu - n.usedMilliCpu;
    int64_t f = int64_t{n.gpuCount} * kMilliPerGpu;
    for (int g = 0; g < n.gpuCount; ++g) f -= n.gpuUsedMilli[g];
    return f;
  }

  Args args_;
};

}  // namespace

std::optional<Args> parseArgs(const YAML::Node& node, std::string& error) {
  Args a;
  ArgsReader r(node);
  std::string policy = "spread";
  r.getEnum("policy", policy, {"spread", "pack"});
  a.policy = policy == "pack" ? Policy::Pack : Policy::Spread;
  r.getStringList("workloadLabels", a.workloadLabels, false);
  if (!r.finish(error)) return std::nullopt;
  return a;
}

std::unique_ptr<Plugin> create(const Args& args) { return std::make_unique<ZonePlugin>(args); }

std::unique_ptr<Plugin> createFromYaml(const YAML::Node& args, std::string& error) {
  auto a = parseArgs(args, error);
  return a ? create(*a) : nullptr;
}

}  // namespace fleetsched::plugins::zone
