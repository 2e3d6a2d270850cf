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

// Bounds under which score's 32-bit arithmetic cannot overflow: memory × 100 and
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
  // filter's memo of codes, valid while codesEpoch is the FailureCodes' epoch (0: none yet).
  // Per node shape (NodeColumns::Row::shape): the node-only checks' verdict (or kByScalar),
  // kShapeUnknown until first decided. Per (free GPUs, GPU count): the code of "not enough
  // free", kNotFreeUnknown until first needed.
  static constexpr Verdict kShapeUnknown = ~Verdict{0};
  static constexpr Verdict kByScalar = kShapeUnknown - 1;  // see shapeCode
  static constexpr Verdict kNotFreeUnknown = ~Verdict{0};
  static constexpr size_t kCounts = kMaxGpusPerNode + 1;
  uint64_t codesEpoch = 0;
  std::vector<Verdict> shapeVerdict;
  std::array<Verdict, kCounts * kCounts> notFreeCode{};

  void useCodes(const FailureCodes& failures, size_t shapes) {
    if (codesEpoch == failures.epoch() && shapeVerdict.size() == shapes) return;
    codesEpoch = failures.epoch();
    shapeVerdict.assign(shapes, kShapeUnknown);
    notFreeCode.fill(kNotFreeUnknown);
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

class GpuPlugin final : public Plugin {
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

  // The node-only checks (GPU resource, model, memory, count) are decided once per row shape
  // where the shape fixes their inputs, from the first node of the shape; free GPUs per node
  // from the rows, with selects instead of branches where which nodes pass is data. The record
  // is read for what the rows do not hold: the scalar of a pod's non-primary resource (MIG
  // profiles), unknown model ids, and a reason naming the allocatable count.
  void filter(const CycleState& state, int index, const NodeBatch& nodes, std::span<Verdict> verdict,
              FailureCodes& failures) const override {
    const PodInfo& pod = state.pod;
    if (!pod.wantsGpu()) return;
    auto& c = *static_cast<GpuCycle*>(state.slot(index));
    if (!c.perGpu) {  // no per-GPU ledger for this pod's resource: its scalar, from the record
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (verdict[i] == kPass) verdict[i] = byScalar(state, c, *nodes[i], failures);
      }
      return;
    }
    const NodeColumns& rows = nodes.rows();
    c.useCodes(failures, rows.shapeCount());
    const int32_t need = pod.gpuCount;
    const int32_t milli = pod.gpuMilli;
    const bool units = args_.countWholeDevices;
    // Locals, not members: the calls on the rare paths would make the compiler reload those.
    const NodeColumns::Row* rowData = rows.data();
    const uint32_t* ids = nodes.ids.data();
    const Verdict* shapeVerdict = c.shapeVerdict.data();
    Verdict* notFreeCode = c.notFreeCode.data();
    // One loop, compiled for whether the rows count this plugin's primary resource (else the
    // record has its units) and whether the pod takes whole GPUs.
    auto judge = [&]<bool kRowUnits, bool kWhole>() {
      for (size_t i = 0; i < nodes.size(); ++i) {
        const Verdict before = verdict[i];
        const NodeColumns::Row& r = rowData[ids[i]];
        Verdict byShape = shapeVerdict[r.shape];
        if (byShape >= GpuCycle::kByScalar) {  // not decided yet, or by the scalar: rare
          if (byShape == GpuCycle::kShapeUnknown) byShape = shapeCode(state, c, nodes, i, kRowUnits, failures);
          if (byShape == GpuCycle::kByScalar) {
            if (before == kPass) verdict[i] = byScalar(state, c, *nodes[i], failures);
            continue;
          }
        }
        // GPUs with `milli` free: counted for whole GPUs; a shared pod (need 1) fits when the
        // freest one has room.
        int32_t freeNow;
        if constexpr (kWhole) {
          freeNow = r.freeWhole;
        } else {
          freeNow = need == 1 ? int32_t{r.maxFreeMilli >= milli} : freeGpus(*nodes[i], milli);
        }
        const bool enough = freeNow >= need;
        Verdict& notFree = notFreeCode[static_cast<size_t>(freeNow) * GpuCycle::kCounts + r.gpuCount];
        // Which nodes have enough free or pass the shape's checks is data: masks, not branches
        // (GCC made the ?: selects branches), and a branch only where a code is still to be made.
        // With kPass == 0: v = byShape == kPass ? (enough ? kPass : notFree) : byShape.
        static_assert(kPass == 0);
        const Verdict byNode = notFree & (static_cast<Verdict>(enough) - 1);
        Verdict v = byShape | (byNode & (static_cast<Verdict>(byShape != kPass) - 1));
        if (v == GpuCycle::kNotFreeUnknown) {
          v = notFree = failures.code({Code::Unschedulable, notFreeReason(state, c, pod, freeNow, r.gpuCount)});
        }
        int32_t unitsFree;
        if constexpr (kRowUnits) {
          unitsFree = r.unitsFree;
        } else {
          unitsFree = unitsOf(*nodes[i], primary_);
        }
        // Fewer units free than needed (kNoUnits, -1, compares as the largest unsigned).
        const bool unitsShort = units & (static_cast<uint32_t>(unitsFree) < static_cast<uint32_t>(need));
        if (unitsShort && v == kPass) v = failures.code({Code::Unschedulable, unitsReason(state, c, pod, *nodes[i])});
        verdict[i] = before == kPass ? v : before;
      }
    };
    const bool rowUnits = rows.primary() == primary_;
    if (milli >= kMilliPerGpu) {
      rowUnits ? judge.operator()<true, true>() : judge.operator()<false, true>();
    } else {
      rowUnits ? judge.operator()<true, false>() : judge.operator()<false, false>();
    }
  }

  void preScore(CycleState& state, const ClusterState&, int index, const NodeBatch& nodes) const override {
    auto& c = *static_cast<GpuCycle*>(state.slot(index));
    int32_t maxMem = 0;
    for (size_t i = 0; i < nodes.size(); ++i) maxMem = std::max(maxMem, nodes.row(i).gpuMemoryMiB);
    c.maxMemoryMiB = maxMem;
  }

  void score(const CycleState& state, int index, const NodeBatch& nodes, std::span<int32_t> out) const override {
    const PodInfo& pod = state.pod;
    const auto& c = *static_cast<const GpuCycle*>(state.slot(index));
    if (!pod.wantsGpu()) {
      if (!args_.steerCpuPods) return;  // neutral: all 0
      // kHasGpu is the rows' reading of their own GPU resources: the record when they are others.
      const bool rowsKnow = nodes.rows().resources().resourceNames == args_.resources.resourceNames;
      for (size_t i = 0; i < nodes.size(); ++i) {
        const bool gpu = rowsKnow ? (nodes.row(i).flags & NodeColumns::kHasGpu) != 0 : hasGpu(*nodes[i]);
        out[i] = gpu ? 0 : kMaxNodeScore;
      }
      return;
    }
    const int64_t mw = args_.memoryWeight, pw = args_.policyWeight, wsum = mw + pw;
    const int64_t maxMem = c.maxMemoryMiB;
    const int64_t podMilli = pod.gpuTotalMilli();
    const bool spread = c.policy == Policy::Spread;
    // The usual node (per-GPU ledger, memory and demand of sane size) in unsigned 32-bit
    // arithmetic: no operand can overflow it, so the quotients are the 64-bit formula's below,
    // at a fraction of the cost of three 64-bit divisions per node.
    const bool narrowPod = c.perGpu && maxMem > 0 && maxMem <= kNarrowMemoryMiB && podMilli >= 0 &&
                           podMilli <= kNarrowPodMilli && mw <= kMaxNodeScore && pw <= kMaxNodeScore;
    static_assert(kMaxNodeScore * 10 == kMilliPerGpu, "kUtilDivisors: (x·100)/(g·1000) = x/(10·g)");
    const Reciprocal byMaxMem(narrowPod ? static_cast<uint32_t>(maxMem) : 1);
    const Reciprocal byWsum(static_cast<uint32_t>(wsum));
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeColumns::Row& r = nodes.row(i);
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
      // Share of the node's GPUs in use once the pod is placed: binpack fills busy nodes first,
      // spread keeps the most headroom.
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

  // The checks that read the node alone, given its count of the pod's resource: kPass, or the
  // failure's code.
  static Verdict nodeChecks(const CycleState& state, GpuCycle& c, const NodeInfo& n, int64_t total,
                            FailureCodes& failures) {
    const PodInfo& pod = state.pod;
    auto fail = [&](std::string_view reason) { return failures.code({Code::UnschedulableAndUnresolvable, reason}); };
    if (total <= 0) return fail(noGpuReason(state, c, pod));
    if (c.constrainsModel() && !modelOk(c, n)) return fail(modelReason(state, c, n.gpuModel, n.gpuModelName));
    if (c.minMemoryMiB > 0 && n.gpuMemoryMiB < c.minMemoryMiB) return fail(memoryReason(state, c, n.gpuMemoryMiB));
    if (pod.gpuCount > total) return fail(tooFewReason(state, c, pod, total));
    return kPass;
  }

  // Node i's node-only verdict, for a per-GPU pod: kByScalar for a node without a ledger whose
  // scalar of the resource the rows do not rule out (byScalar judges it from the record), else
  // nodeChecks by its ledger (or, with neither, none). Kept for the row's shape where the shape
  // fixes it: GPU count, units or not, and the model's verdict for a known model id.
  static Verdict shapeCode(const CycleState& state, GpuCycle& c, const NodeBatch& nodes, size_t i, bool rowUnits,
                           FailureCodes& failures) {
    const NodeColumns::Row& r = nodes.row(i);
    const bool scalar = r.gpuCount == 0 && (!rowUnits || r.unitsFree != NodeColumns::kNoUnits);
    const Verdict v = scalar ? GpuCycle::kByScalar : nodeChecks(state, c, *nodes[i], r.gpuCount, failures);
    if (r.shape != NodeColumns::kNoShape &&
        (scalar || !c.constrainsModel() || (r.gpuModel != 0 && r.gpuModel < c.modelVerdict.size()))) {
      c.shapeVerdict[r.shape] = v;
    }
    return v;
  }

  // The whole verdict for a node without the per-GPU ledger for this pod: its scalar's count.
  static Verdict byScalar(const CycleState& state, GpuCycle& c, const NodeInfo& n, FailureCodes& failures) {
    const PodInfo& pod = state.pod;
    const ScalarResource* sc = n.scalar(pod.gpuResource);
    const int64_t total = sc != nullptr ? sc->allocatable : 0;
    const Verdict v = nodeChecks(state, c, n, total, failures);
    if (v != kPass) return v;
    const int64_t free = std::max<int64_t>(0, sc->allocatable - sc->used);
    if (free >= pod.gpuCount) return kPass;
    return failures.code({Code::Unschedulable, notFreeReason(state, c, pod, free, total)});
  }

  // GPUs of `n`'s ledger with at least `milli` free.
  static int32_t freeGpus(const NodeInfo& n, int32_t milli) {
    int32_t free = 0;
    for (int g = 0; g < n.gpuCount; ++g) free += n.gpuFreeMilli(g) >= milli;
    return free;
  }

  // Row::unitsFree of `n` for `resource`.
  static int32_t unitsOf(const NodeInfo& n, std::string_view resource) {
    const ScalarResource* s = n.scalar(resource);
    if (s == nullptr) return NodeColumns::kNoUnits;
    return static_cast<int32_t>(std::clamp<int64_t>(s->allocatable - s->used, 0, INT32_MAX));
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

  // kube-scheduler charges every pod a whole unit of the resource whatever its share.
  static std::string_view unitsReason(const CycleState& state, GpuCycle& c, const PodInfo& pod, const NodeInfo& n) {
    const ScalarResource* whole = n.scalar(pod.gpuResource);
    const int64_t units = std::max<int64_t>(0, whole->allocatable - whole->used);
    return c.reasons.get(kNotFreeUnits, units, whole->allocatable, state, [&] {
      return std::to_string(units) + " of " + std::to_string(whole->allocatable) + " " + std::string(pod.gpuResource) +
             " units free as kube-scheduler counts them, pod needs " + std::to_string(pod.gpuCount);
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
