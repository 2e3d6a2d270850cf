#include "replay/pipeline.h"

#include <algorithm>
#include <charconv>

#include "plugins/annotations.h"
#include "plugins/policies/policy_common.h"

namespace fleetsched::replay {

using plugins::CycleState;
using plugins::NodeInfo;
using plugins::NodeSpan;
using plugins::PodInfo;
using plugins::Status;

plugins::PodInfo derivePodInfo(const codec::Pod& pod) {
  PodInfo info;
  info.pod = &pod;
  info.milliCpu = pod.requests.milliCpu;
  info.memory = pod.requests.memory;
  info.gpuResource = kGpuResource;
  info.gpuCount = static_cast<int32_t>(pod.requests.get(kGpuResource));
  info.gpuMilli = plugins::kMilliPerGpu;
  if (info.gpuCount == 1) {
    if (const auto* v = codec::findKey(pod.annotations, plugins::annotations::kGpuMilli)) {
      int32_t milli = 0;
      auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), milli);
      if (ec == std::errc() && ptr == v->data() + v->size() && milli > 0 && milli <= plugins::kMilliPerGpu) {
        info.gpuMilli = milli;
      }
    }
  }
  if (info.gpuCount == 0) info.gpuMilli = 0;
  return info;
}

namespace {

constexpr std::string_view kInsufficientCpu = "Insufficient cpu";
constexpr std::string_view kInsufficientMemory = "Insufficient memory";
constexpr std::string_view kTooManyPods = "Too many pods";
constexpr std::string_view kNoGpu = "node has no GPUs";
constexpr std::string_view kWrongModel = "GPU model not allowed by fleetsched.io/gpu-models";
constexpr std::string_view kInsufficientGpu = "not enough GPUs with the requested share free";

class ResourceFitFilter final : public plugins::Plugin {
 public:
  std::string_view name() const override { return "ReplayResourceFit"; }
  bool filters() const override { return true; }
  void filter(const CycleState& state, int, NodeSpan nodes, std::span<Status> out) const override {
    const PodInfo& p = state.pod;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& n = *nodes[i];
      if (n.allocMilliCpu - n.usedMilliCpu < p.milliCpu) {
        out[i] = {plugins::Code::Unschedulable, kInsufficientCpu};
      } else if (n.allocMemory - n.usedMemory < p.memory) {
        out[i] = {plugins::Code::Unschedulable, kInsufficientMemory};
      } else if (n.usedPods >= n.allocPods) {
        out[i] = {plugins::Code::Unschedulable, kTooManyPods};
      }
    }
  }
};

struct AllowedModels final : plugins::PluginState {
  std::vector<std::string_view> models;  // views into the pod's annotation
};

class GpuFitFilter final : public plugins::Plugin {
 public:
  std::string_view name() const override { return "ReplayGpuFit"; }
  bool filters() const override { return true; }

  Status preFilter(CycleState& state, const plugins::ClusterState&, int index) const override {
    auto allowed = std::make_unique<AllowedModels>();
    if (state.pod.pod != nullptr) {
      if (const auto* v = codec::findKey(state.pod.pod->annotations, plugins::annotations::kGpuModels)) {
        std::string_view list = *v;
        while (!list.empty()) {
          const size_t bar = list.find('|');
          if (bar != 0) allowed->models.push_back(list.substr(0, bar));
          list = bar == std::string_view::npos ? std::string_view{} : list.substr(bar + 1);
        }
      }
    }
    state.setSlot(index, std::move(allowed));
    return {};
  }

  void filter(const CycleState& state, int index, NodeSpan nodes, std::span<Status> out) const override {
    const PodInfo& p = state.pod;
    if (!p.wantsGpu()) return;
    const auto* allowed = static_cast<const AllowedModels*>(state.slot(index));
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& n = *nodes[i];
      if (n.gpuCount == 0) {
        out[i] = {plugins::Code::UnschedulableAndUnresolvable, kNoGpu};
        continue;
      }
      if (allowed != nullptr && !allowed->models.empty() &&
          std::find(allowed->models.begin(), allowed->models.end(), n.gpuModelName) == allowed->models.end()) {
        out[i] = {plugins::Code::UnschedulableAndUnresolvable, kWrongModel};
        continue;
      }
      int fit = 0;
      for (int g = 0; g < n.gpuCount; ++g) fit += n.gpuFreeMilli(g) >= p.gpuMilli;
      if (fit < p.gpuCount) out[i] = {plugins::Code::Unschedulable, kInsufficientGpu};
    }
  }
};

}  // namespace

std::unique_ptr<plugins::Plugin> createResourceFitFilter() { return std::make_unique<ResourceFitFilter>(); }
std::unique_ptr<plugins::Plugin> createGpuFitFilter() { return std::make_unique<GpuFitFilter>(); }

Pipeline::Pipeline(std::vector<std::unique_ptr<plugins::Plugin>> filters,
                   std::vector<std::pair<std::unique_ptr<plugins::Plugin>, int32_t>> scorers)
    : filters_(std::move(filters)), scorers_(std::move(scorers)) {}

Decision Pipeline::decide(const codec::Pod& pod, const Cluster& cluster) {
  Decision d;
  CycleState state;
  state.pod = derivePodInfo(pod);
  d.pod = state.pod;
  // Slots: filters first, then scorers.
  const int scorerBase = static_cast<int>(filters_.size());
  for (size_t i = 0; i < filters_.size(); ++i) {
    if (!filters_[i]->preFilter(state, cluster, static_cast<int>(i)).ok()) return d;
  }
  for (size_t i = 0; i < scorers_.size(); ++i) {
    if (!scorers_[i].first->preFilter(state, cluster, scorerBase + static_cast<int>(i)).ok()) return d;
  }

  const NodeSpan all = cluster.nodes();
  verdicts_.assign(all.size(), Status{});
  for (size_t i = 0; i < filters_.size(); ++i) filters_[i]->filter(state, static_cast<int>(i), all, verdicts_);
  feasible_.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    if (verdicts_[i].ok()) feasible_.push_back(all[i]);
  }
  if (feasible_.empty()) return d;

  total_.assign(feasible_.size(), 0);
  scratch_.resize(feasible_.size());
  for (size_t i = 0; i < scorers_.size(); ++i) {
    const int slot = scorerBase + static_cast<int>(i);
    auto& [plugin, weight] = scorers_[i];
    plugin->preScore(state, cluster, slot, feasible_);
    std::fill(scratch_.begin(), scratch_.end(), 0);
    plugin->score(state, slot, feasible_, scratch_);
    plugin->normalizeScore(state, slot, scratch_);
    for (size_t n = 0; n < feasible_.size(); ++n) total_[n] += int64_t{weight} * scratch_[n];
  }

  size_t best = 0;
  for (size_t n = 1; n < feasible_.size(); ++n) {
    if (total_[n] > total_[best] ||
        (total_[n] == total_[best] && cluster.nameRank(feasible_[n]->id) < cluster.nameRank(feasible_[best]->id))) {
      best = n;
    }
  }
  const NodeInfo& chosen = *feasible_[best];
  if (state.pod.wantsGpu()) {
    bool picked = false;
    for (size_t i = 0; i < scorers_.size() && !picked; ++i) {
      picked = scorers_[i].first->selectGpus(state, scorerBase + static_cast<int>(i), chosen, d.gpus);
    }
    if (!picked && !plugins::policies::pickBestFitGpus(chosen, state.pod, d.gpus)) return d;
  }
  d.node = static_cast<int>(chosen.id);
  return d;
}

}  // namespace fleetsched::replay
