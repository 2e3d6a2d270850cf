#include "plugins/gpu/gpu_plugin.h"

#include <algorithm>
#include <array>
#include <vector>

#include "plugins/annotations.h"
#include "plugins/args_reader.h"
#include "plugins/gpu_select.h"
#include "plugins/node_columns.h"
#include "plugins/reciprocal.h"
#include "plugins/reason_cache.h"

namespace fleetsched::plugins::gpu {
namespace {

constexpr Status kBadModels{Code::UnschedulableAndUnresolvable,
                            "invalid annotation fleetsched.io/gpu-models: want model names separated by '|'"};
constexpr Status kBadMinMemory{Code::UnschedulableAndUnresolvable,
                               "invalid annotation fleetsched.io/gpu-min-memory: want a positive integer (MiB)"};
constexpr Status kBadPolicy{Code::UnschedulableAndUnresolvable,
                            "invalid annotation fleetsched.io/gpu-policy: want binpack or spread"};

// Bounds under which scoreColumns' 32-bit arithmetic cannot overflow: memory × 100 and
// (used + demand) × 100 stay below 2^31.
constexpr int64_t kNarrowMemoryMiB = 20'000'000;
constexpr int64_t kNarrowPodMilli = 20'000'000;

// Per GPU count g: the reciprocal of 10·g, so util = min((used + demand) / (10·g), 100), which
// is (used + demand) · 100 / (g · 1000) exactly.
constexpr std::array<Reciprocal, 256> kUtilDivisors = [] {
  std::array<Reciprocal, 256> t{};
  for (uint32_t g = 1; g < 256; ++g) t[g] = Reciprocal(10 * g);
  return t;
}();

enum ReasonKind : uint32_t { kNoGpu, kTooFew, kNotFree, kNotFreeShared, kNotFreeUnits, kModel, kMemory };

// Per-pod state: the pod's GPU constraints, parsed once in PreFilter.
struct GpuCycle final : PluginState {
  bool perGpu = false;  // the pod's resource is the primary one: use per-GPU accounting
  Policy policy = Policy::Binpack;
  // Allowed-model sets, all of which must contain the node's model (nodeSelector, required
  // affinity, annotation). Flattened: set k is values[setEnd[k-1] .. setEnd[k]).
  std::vector<std::string_view> allowed;
  std::vector<uint32_t> setEnd;
  std::vector<std::string_view> denied;
  // Verdict per interned model id: 0 = not computed, 1 = allowed, 2 = rejected.
  std::array<uint8_t, 256> modelVerdict{};
  int64_t minMemoryMiB = 0;
  int32_t maxMemoryMiB = 0;  // over the scored nodes (PreScore)
  ReasonCache reasons;
  // filterColumns' verdicts, valid while codesEpoch is the FailureCodes' epoch (0: none yet).
  // Per node shape (NodeColumns::Row::shape): kColumnPass when the node-only checks pass, a
  // failure code or kColumnUndecided when they decide, kShapeUnknown until first seen. Per
  // (free GPUs, GPU count): the code of "not enough free" (0: not taken yet).
  static constexpr uint16_t kShapeUnknown = 0xFFFF;
  static constexpr size_t kCounts = kMaxGpusPerNode + 1;
  uint64_t codesEpoch = 0;
  std::vector<uint16_t> shapeVerdict;
  std::array<uint8_t, kCounts * kCounts> notFreeCode{};

  void useCodes(const FailureCodes& failures, size_t shapes) {
    if (codesEpoch == failures.epoch() && shapeVerdict.size() == shapes) return;
    codesEpoch = failures.epoch();
    shapeVerdict.assign(shapes, kShapeUnknown);
    notFreeCode.fill(0);
  }

  void reset() {
    perGpu = false;
    policy = Policy::Binpack;
    allowed.clear();
    setEnd.clear();
    denied.clear();
    modelVerdict.fill(0);
    minMemoryMiB = 0;
    maxMemoryMiB = 0;
    reasons.clear();
    codesEpoch = 0;
  }
  bool constrainsModel() const { return !setEnd.empty() || !denied.empty(); }

  bool modelAllowed(std::string_view model) const {
    uint32_t begin = 0;
    for (uint32_t end : setEnd) {
      bool in = false;
      for (uint32_t k = begin; k < end; ++k) in = in || allowed[k] == model;
      if (!in) return false;
      begin = end;
    }
    for (auto d : denied) {
      if (d == model) return false;
    }
    return true;
  }
};

class GpuPlugin final : public Plugin, public ColumnFilter, public ColumnScorer {
 public:
  explicit GpuPlugin(Args args) : args_(std::move(args)), primary_(args_.resources.primary()) {}

  std::string_view name() const override { return kName; }
  bool filters() const override { return true; }
  bool scores() const override { return true; }

  Status preFilter(CycleState& state, const ClusterState&, int index) const override {
    auto* c = dynamic_cast<GpuCycle*>(state.slot(index));
    if (c == nullptr) {
      state.setSlot(index, std::make_unique<GpuCycle>());
      c = static_cast<GpuCycle*>(state.slot(index));
    }
    c->reset();
    const PodInfo& pod = state.pod;
    c->policy = args_.policy;
    const codec::Pod& p = *pod.pod;
    if (const auto* v = codec::findKey(p.annotations, annotations::kGpuPolicy)) {
      if (*v == "binpack") {
        c->policy = Policy::Binpack;
      } else if (*v == "spread") {
        c->policy = Policy::Spread;
      } else {
        return kBadPolicy;
      }
    }
    if (!pod.wantsGpu()) return {};
    c->perGpu = !primary_.empty() && pod.gpuResource == primary_;

    if (const auto* v = codec::findKey(p.nodeSelector, args_.productLabel)) {
      c->allowed.push_back(*v);
      c->setEnd.push_back(static_cast<uint32_t>(c->allowed.size()));
    }
    addAffinity(p, *c);
    if (const auto* v = codec::findKey(p.annotations, annotations::kGpuModels)) {
      std::string_view rest = *v;
      const size_t before = c->allowed.size();
      while (!rest.empty()) {
        const size_t bar = rest.find('|');
        std::string_view m = rest.substr(0, bar);
        while (!m.empty() && m.front() == ' ') m.remove_prefix(1);
        while (!m.empty() && m.back() == ' ') m.remove_suffix(1);
        if (!m.empty()) c->allowed.push_back(m);
        rest = bar == std::string_view::npos ? std::string_view{} : rest.substr(bar + 1);
      }
      if (c->allowed.size() == before) return kBadModels;
      c->setEnd.push_back(static_cast<uint32_t>(c->allowed.size()));
    }
    if (const auto* v = codec::findKey(p.annotations, annotations::kGpuMinMemory)) {
      if (!parseDecimal(*v, c->minMemoryMiB) || c->minMemoryMiB < 1) return kBadMinMemory;
    }
    return {};
  }

  void filter(const CycleState& state, int index, NodeSpan nodes, std::span<Status> out) const override {
    const PodInfo& pod = state.pod;
    if (!pod.wantsGpu()) return;
    auto& c = *static_cast<GpuCycle*>(state.slot(index));
    const bool checkModel = c.constrainsModel();
    const int32_t need = pod.gpuCount;
    const int32_t milli = pod.gpuMilli;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& n = *nodes[i];
      int64_t total;
      const ScalarResource* sc = nullptr;
      // Per-GPU accounting when the node has it; otherwise the resource count (a node builder
      // that fills only the scalar, or a non-primary resource such as a MIG profile).
      const bool perGpu = c.perGpu && n.gpuCount > 0;
      if (perGpu) {
        total = n.gpuCount;
      } else {
        sc = n.scalar(pod.gpuResource);
        total = sc != nullptr ? sc->allocatable : 0;
      }
      if (total <= 0) {
        out[i] = {Code::UnschedulableAndUnresolvable, noGpuReason(state, c, pod)};
        continue;
      }
      if (checkModel && !modelOk(c, n)) {
        out[i] = {Code::UnschedulableAndUnresolvable, modelReason(state, c, n.gpuModel, n.gpuModelName)};
        continue;
      }
      if (c.minMemoryMiB > 0 && n.gpuMemoryMiB < c.minMemoryMiB) {
        out[i] = {Code::UnschedulableAndUnresolvable, memoryReason(state, c, n.gpuMemoryMiB)};
        continue;
      }
      if (need > total) {
        out[i] = {Code::UnschedulableAndUnresolvable, tooFewReason(state, c, pod, total)};
        continue;
      }
      int64_t free;
      if (perGpu) {
        free = 0;
        for (int g = 0; g < n.gpuCount; ++g) free += (kMilliPerGpu - n.gpuUsedMilli[g]) >= milli;
        // kube-scheduler charges every pod a whole unit of the resource whatever its share.
        if (args_.countWholeDevices && free >= need) {
          if (const ScalarResource* whole = n.scalar(pod.gpuResource)) {
            const int64_t units = std::max<int64_t>(0, whole->allocatable - whole->used);
            if (units < need) {
              out[i] = {Code::Unschedulable, c.reasons.get(kNotFreeUnits, units, whole->allocatable, state, [&] {
                          return std::to_string(units) + " of " + std::to_string(whole->allocatable) + " " +
                                 std::string(pod.gpuResource) + " units free as kube-scheduler counts them, pod needs " +
                                 std::to_string(need);
                        })};
              continue;
            }
          }
        }
      } else {
        free = std::max<int64_t>(0, sc->allocatable - sc->used);
      }
      if (free < need) out[i] = {Code::Unschedulable, notFreeReason(state, c, pod, free, total)};
    }
  }

  // filter() above from the rows, per-GPU case: the same checks in the same order, with the
  // same reasons. Left to filter(): nodes without the per-GPU ledger that still have the
  // resource, unknown model ids, and too few units as kube-scheduler counts them.
  bool filterColumns(const CycleState& state, int index, const NodeColumns& columns, std::span<const uint32_t> ids,
                     std::span<uint8_t> verdict, FailureCodes& failures) const override {
    const PodInfo& pod = state.pod;
    if (!pod.wantsGpu()) return true;  // filter() passes every node
    auto& c = *static_cast<GpuCycle*>(state.slot(index));
    // Scalar-only resources (MIG profiles) and a table built for another resource: filter().
    if (!c.perGpu || columns.primary() != primary_) return false;
    const int32_t need = pod.gpuCount;
    const int32_t milli = pod.gpuMilli;
    if (milli < kMilliPerGpu && need != 1) return false;  // derivePodInfo never makes one
    c.useCodes(failures, columns.shapeCount());
    const bool whole = milli >= kMilliPerGpu;
    const bool units = args_.countWholeDevices;
    const NodeColumns::Row* rows = columns.rows();
    const uint32_t limit = columns.idLimit();
    uint16_t* shapeVerdict = c.shapeVerdict.data();
    // filter()'s checks in its order: those that read only the node's shape are decided once
    // per shape, the rest (free GPUs, units) per node, with selects instead of branches where
    // which nodes pass is data.
    for (size_t i = 0; i < ids.size(); ++i) {
      const uint8_t before = verdict[i];
      const uint32_t id = ids[i];
      if (id >= limit) {
        if (before == kColumnPass) verdict[i] = kColumnUndecided;
        continue;
      }
      const NodeColumns::Row& r = rows[id];
      uint16_t byShape = shapeVerdict[r.shape];
      if (byShape == GpuCycle::kShapeUnknown) byShape = shapeVerdict[r.shape] = decideShape(state, c, columns, r, failures);
      // GPUs with `milli` free: counted for whole GPUs; a shared pod (need 1) fits when the
      // freest one has room, and none has when it does not.
      const int32_t freeNow = whole ? r.freeWhole : int32_t{r.maxFreeMilli >= milli};
      const bool enough = freeNow >= need;
      uint8_t& notFree = c.notFreeCode[static_cast<size_t>(freeNow) * GpuCycle::kCounts + r.gpuCount];
      if (!enough && notFree == 0 && byShape == kColumnPass) {
        notFree = failures.code({Code::Unschedulable, notFreeReason(state, c, pod, freeNow, r.gpuCount)});
      }
      // Too few units as kube-scheduler counts them: its reason names the allocatable count,
      // which the rows do not hold: filter().
      const bool unitsShort = units & (r.unitsFree != NodeColumns::kNoUnits) & (r.unitsFree < need);
      const uint8_t byNode = enough ? (unitsShort ? uint8_t{kColumnUndecided} : uint8_t{kColumnPass}) : notFree;
      const uint8_t v = byShape == kColumnPass ? byNode : static_cast<uint8_t>(byShape);
      verdict[i] = before == kColumnPass ? v : before;
    }
    return true;
  }

  void preScore(CycleState& state, const ClusterState&, int index, NodeSpan nodes) const override {
    auto& c = *static_cast<GpuCycle*>(state.slot(index));
    int32_t maxMem = 0;
    for (const NodeInfo* n : nodes) maxMem = std::max(maxMem, n->gpuMemoryMiB);
    c.maxMemoryMiB = maxMem;
  }

  void score(const CycleState& state, int index, NodeSpan nodes, std::span<int32_t> out) const override {
    const PodInfo& pod = state.pod;
    const auto& c = *static_cast<const GpuCycle*>(state.slot(index));
    if (!pod.wantsGpu()) {
      if (!args_.steerCpuPods) return;  // neutral: all 0
      for (size_t i = 0; i < nodes.size(); ++i) out[i] = hasGpu(*nodes[i]) ? 0 : kMaxNodeScore;
      return;
    }
    const int64_t mw = args_.memoryWeight, pw = args_.policyWeight, wsum = mw + pw;
    const int64_t maxMem = c.maxMemoryMiB;
    const int64_t podMilli = pod.gpuTotalMilli();
    const bool spread = c.policy == Policy::Spread;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& n = *nodes[i];
      const int64_t mem = maxMem > 0 ? int64_t{n.gpuMemoryMiB} * kMaxNodeScore / maxMem : 0;
      int64_t used, cap;
      if (c.perGpu && n.gpuCount > 0) {
        used = 0;
        for (int g = 0; g < n.gpuCount; ++g) used += n.gpuUsedMilli[g];
        cap = int64_t{n.gpuCount} * kMilliPerGpu;
      } else {
        const ScalarResource* sc = n.scalar(pod.gpuResource);
        used = sc != nullptr ? sc->used * kMilliPerGpu : 0;
        cap = sc != nullptr ? sc->allocatable * kMilliPerGpu : 0;
      }
      // Share of the node's GPUs in use once the pod is placed: binpack fills busy nodes first,
      // spread keeps the most headroom.
      int64_t util = cap > 0 ? std::clamp<int64_t>((used + podMilli) * kMaxNodeScore / cap, 0, kMaxNodeScore) : 0;
      if (spread && cap > 0) util = kMaxNodeScore - util;
      out[i] = static_cast<int32_t>((mw * mem + pw * util) / wsum);
    }
  }

  bool preScoreColumns(CycleState& state, const ClusterState&, int index, const NodeColumns& columns,
                       std::span<const uint32_t> ids, NodeSpan) const override {
    // CPU pods are steered by kHasGpu, which the rows hold for the profile's GPU resources.
    if (!state.pod.wantsGpu() && args_.steerCpuPods &&
        columns.resources().resourceNames != args_.resources.resourceNames) {
      return false;
    }
    auto& c = *static_cast<GpuCycle*>(state.slot(index));
    const NodeColumns::Row* rows = columns.rows();
    int32_t maxMem = 0;
    for (uint32_t id : ids) maxMem = std::max(maxMem, rows[id].gpuMemoryMiB);
    c.maxMemoryMiB = maxMem;
    return true;
  }

  void scoreColumns(const CycleState& state, int index, const NodeColumns& columns, std::span<const uint32_t> ids,
                    NodeSpan nodes, std::span<int32_t> out) const override {
    const PodInfo& pod = state.pod;
    const auto& c = *static_cast<const GpuCycle*>(state.slot(index));
    const NodeColumns::Row* rows = columns.rows();
    if (!pod.wantsGpu()) {
      if (!args_.steerCpuPods) return;  // neutral: all 0
      for (size_t i = 0; i < ids.size(); ++i) out[i] = (rows[ids[i]].flags & NodeColumns::kHasGpu) ? 0 : kMaxNodeScore;
      return;
    }
    // score() above, reading the rows; the scalar case and a clamped row read the record.
    const int64_t mw = args_.memoryWeight, pw = args_.policyWeight, wsum = mw + pw;
    const int64_t maxMem = c.maxMemoryMiB;
    const int64_t podMilli = pod.gpuTotalMilli();
    const bool spread = c.policy == Policy::Spread;
    // The usual node (per-GPU ledger, memory and demand of sane size) in unsigned 32-bit
    // arithmetic: no operand can overflow it, so the quotients are score()'s, at a fraction of
    // the cost of three 64-bit divisions per node.
    const bool narrowPod = c.perGpu && maxMem > 0 && maxMem <= kNarrowMemoryMiB && podMilli >= 0 &&
                           podMilli <= kNarrowPodMilli && mw <= kMaxNodeScore && pw <= kMaxNodeScore;
    static_assert(kMaxNodeScore * 10 == kMilliPerGpu, "kUtilDivisors: (x·100)/(g·1000) = x/(10·g)");
    const Reciprocal byMaxMem(narrowPod ? static_cast<uint32_t>(maxMem) : 1);
    const Reciprocal byWsum(static_cast<uint32_t>(wsum));
    for (size_t i = 0; i < ids.size(); ++i) {
      const NodeColumns::Row& r = rows[ids[i]];
      if (narrowPod && r.gpuCount > 0 && r.gpuMemoryMiB >= 0 && !(r.flags & NodeColumns::kUsedClamped)) {
        const uint32_t mem = byMaxMem.divide(static_cast<uint32_t>(r.gpuMemoryMiB) * kMaxNodeScore);
        uint32_t util = std::min<uint32_t>(
            kUtilDivisors[r.gpuCount].divide(r.usedMilli + static_cast<uint32_t>(podMilli)), kMaxNodeScore);
        if (spread) util = kMaxNodeScore - util;
        out[i] = static_cast<int32_t>(
            byWsum.divide(static_cast<uint32_t>(mw) * mem + static_cast<uint32_t>(pw) * util));
        continue;
      }
      const int64_t mem = maxMem > 0 ? int64_t{r.gpuMemoryMiB} * kMaxNodeScore / maxMem : 0;
      int64_t used, cap;
      if (c.perGpu && r.gpuCount > 0) {
        used = r.usedMilli;
        if (r.flags & NodeColumns::kUsedClamped) {
          used = 0;
          for (int g = 0; g < nodes[i]->gpuCount; ++g) used += nodes[i]->gpuUsedMilli[g];
        }
        cap = int64_t{r.gpuCount} * kMilliPerGpu;
      } else {
        const ScalarResource* sc = nodes[i]->scalar(pod.gpuResource);
        used = sc != nullptr ? sc->used * kMilliPerGpu : 0;
        cap = sc != nullptr ? sc->allocatable * kMilliPerGpu : 0;
      }
      int64_t util = cap > 0 ? std::clamp<int64_t>((used + podMilli) * kMaxNodeScore / cap, 0, kMaxNodeScore) : 0;
      if (spread && cap > 0) util = kMaxNodeScore - util;
      out[i] = static_cast<int32_t>((mw * mem + pw * util) / wsum);
    }
  }

  bool selectGpus(const CycleState& state, int index, const NodeInfo& node, GpuAssignment& out) const override {
    const auto* c = dynamic_cast<const GpuCycle*>(state.slot(index));
    if (c == nullptr || !c->perGpu) return false;
    // The node may no longer fit (state moved since Filter): report it with an empty assignment.
    plugins::selectGpus(state.pod, node, out,
                        c->policy == Policy::Spread ? GpuChoice::MostFree : GpuChoice::BestFit);
    return true;
  }

 private:
  // Required node affinity: terms are ORed, so it constrains the model only when every term
  // has an In requirement on the product label (the union of their values). NotIn is honoured
  // for a single term, the usual case.
  void addAffinity(const codec::Pod& p, GpuCycle& c) const {
    const auto& terms = p.requiredNodeAffinity;
    if (terms.empty()) return;
    const size_t before = c.allowed.size();
    bool everyTerm = true;
    for (const auto& t : terms) {
      bool found = false;
      for (const auto& r : t.matchExpressions) {
        if (r.key != args_.productLabel) continue;
        if (r.op == codec::SelectorOp::In) {
          found = true;
          c.allowed.insert(c.allowed.end(), r.values.begin(), r.values.end());
        } else if (r.op == codec::SelectorOp::NotIn && terms.size() == 1) {
          c.denied.insert(c.denied.end(), r.values.begin(), r.values.end());
        }
      }
      everyTerm = everyTerm && found;
    }
    if (everyTerm) {
      c.setEnd.push_back(static_cast<uint32_t>(c.allowed.size()));
    } else {
      c.allowed.resize(before);
    }
  }

  static bool modelOk(GpuCycle& c, const NodeInfo& n) {
    if (n.gpuModel == 0 || n.gpuModel >= c.modelVerdict.size()) return c.modelAllowed(n.gpuModelName);
    uint8_t& v = c.modelVerdict[n.gpuModel];
    if (v == 0) v = c.modelAllowed(n.gpuModelName) ? 1 : 2;
    return v == 1;
  }

  bool hasGpu(const NodeInfo& n) const {
    if (n.gpuCount > 0) return true;
    for (uint8_t s = 0; s < n.scalarCount; ++s) {
      if (n.scalars[s].allocatable <= 0) continue;
      for (const auto& r : args_.resources.resourceNames) {
        if (GpuResourceConfig::matches(r, n.scalars[s].name)) return true;
      }
    }
    return false;
  }

  // filter()'s node-only checks for the nodes of `r`'s shape: kColumnPass when they pass, else
  // the failure's code, or kColumnUndecided when the rows cannot tell (no live node, no ledger
  // but a scalar, an unknown model id).
  static uint8_t decideShape(const CycleState& state, GpuCycle& c, const NodeColumns& columns,
                             const NodeColumns::Row& r, FailureCodes& failures) {
    const PodInfo& pod = state.pod;
    auto fail = [&](std::string_view reason) {
      return failures.code({Code::UnschedulableAndUnresolvable, reason});
    };
    if (r.shape == NodeColumns::kNoShape || (r.flags & NodeColumns::kLive) == 0) return kColumnUndecided;
    const int32_t total = r.gpuCount;
    if (total == 0) {
      // No ledger: filter() takes the resource's scalar; without one the node has none.
      return r.unitsFree == NodeColumns::kNoUnits ? fail(noGpuReason(state, c, pod)) : uint8_t{kColumnUndecided};
    }
    if (c.constrainsModel()) {
      if (r.gpuModel == 0 || r.gpuModel >= c.modelVerdict.size()) return kColumnUndecided;
      uint8_t& v = c.modelVerdict[r.gpuModel];
      if (v == 0) v = c.modelAllowed(columns.modelName(r.gpuModel)) ? 1 : 2;
      if (v != 1) return fail(modelReason(state, c, r.gpuModel, columns.modelName(r.gpuModel)));
    }
    if (c.minMemoryMiB > 0 && r.gpuMemoryMiB < c.minMemoryMiB) return fail(memoryReason(state, c, r.gpuMemoryMiB));
    if (pod.gpuCount > total) return fail(tooFewReason(state, c, pod, total));
    return kColumnPass;
  }

  static std::string_view noGpuReason(const CycleState& state, GpuCycle& c, const PodInfo& pod) {
    return c.reasons.get(kNoGpu, 0, 0, state, [&] {
      return "node has no " + std::string(pod.gpuResource) + " (Node does not have GPU)";
    });
  }

  static std::string_view modelReason(const CycleState& state, GpuCycle& c, uint16_t model, std::string_view name) {
    auto format = [&] {
      return "GPU model " + (name.empty() ? std::string("unknown") : std::string(name)) + " not allowed";
    };
    if (model == 0) return state.keep(format());
    return c.reasons.get(kModel, model, 0, state, format);
  }

  static std::string_view memoryReason(const CycleState& state, GpuCycle& c, int32_t memoryMiB) {
    return c.reasons.get(kMemory, memoryMiB, 0, state, [&] {
      return "GPU memory " + (memoryMiB > 0 ? std::to_string(memoryMiB) + " MiB" : std::string("unknown")) +
             " < required " + std::to_string(c.minMemoryMiB) + " MiB";
    });
  }

  static std::string_view tooFewReason(const CycleState& state, GpuCycle& c, const PodInfo& pod, int64_t total) {
    return c.reasons.get(kTooFew, total, 0, state, [&] {
      return "node has " + std::to_string(total) + " " + std::string(pod.gpuResource) + ", pod needs " +
             std::to_string(pod.gpuCount);
    });
  }

  static std::string_view notFreeReason(const CycleState& state, GpuCycle& c, const PodInfo& pod, int64_t free,
                                        int64_t total) {
    if (pod.gpuMilli < kMilliPerGpu) {
      return c.reasons.get(kNotFreeShared, free, total, state, [&] {
        return std::to_string(free) + " of " + std::to_string(total) + " " + std::string(pod.gpuResource) +
               " have " + std::to_string(pod.gpuMilli) + " milli free, pod needs " + std::to_string(pod.gpuCount);
      });
    }
    return c.reasons.get(kNotFree, free, total, state, [&] {
      return std::to_string(free) + " of " + std::to_string(total) + " " + std::string(pod.gpuResource) +
             " free, pod needs " + std::to_string(pod.gpuCount);
    });
  }

  Args args_;
  std::string_view primary_;  // into args_.resources
};

}  // namespace

std::optional<Args> parseArgs(const YAML::Node& node, std::string& error) {
  Args a;
  ArgsReader r(node);
  r.getStringList("resourceNames", a.resources.resourceNames, true);
  std::string policy = "binpack";
  r.getEnum("policy", policy, {"binpack", "spread"});
  a.policy = policy == "spread" ? Policy::Spread : Policy::Binpack;
  int64_t mw = a.memoryWeight, pw = a.policyWeight;
  r.getInt("memoryWeight", mw, 0, 100);
  r.getInt("policyWeight", pw, 0, 100);
  r.getBool("steerCpuPods", a.steerCpuPods);
  r.getBool("countWholeDevices", a.countWholeDevices);
  r.getString("productLabel", a.productLabel);
  if (!r.finish(error)) return std::nullopt;
  if (mw + pw == 0) {
    error = "memoryWeight and policyWeight: at least one must be > 0";
    return std::nullopt;
  }
  a.memoryWeight = static_cast<int32_t>(mw);
  a.policyWeight = static_cast<int32_t>(pw);
  return a;
}

std::unique_ptr<Plugin> create(const Args& args) { return std::make_unique<GpuPlugin>(args); }

std::unique_ptr<Plugin> createFromYaml(const YAML::Node& args, std::string& error) {
  auto a = parseArgs(args, error);
  return a ? create(*a) : nullptr;
}

}  // namespace fleetsched::plugins::gpu
