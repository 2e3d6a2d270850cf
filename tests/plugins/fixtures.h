// Fixture builders for plugin tests: PodBuilder / NodeBuilder make codec::Pod and NodeInfo by
// hand (no JSON), FakeCluster answers ClusterState, and Harness runs one loaded profile.
#pragma once

#include <deque>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model.h"
#include "plugins/annotations.h"
#include "plugins/config.h"
#include "plugins/framework.h"
#include "plugins/profile.h"

namespace fleetsched::plugins::testing {

// Keeps a string for the life of the test process; codec objects only hold views.
inline std::string_view intern(std::string s) {
  static std::deque<std::string> store;
  store.push_back(std::move(s));
  return store.back();
}

// Interned GPU model ids as the cache would assign them (1, 2, ...).
inline uint16_t modelId(std::string_view model) {
  static std::map<std::string, uint16_t, std::less<>> ids;
  auto it = ids.find(model);
  if (it != ids.end()) return it->second;
  const auto id = static_cast<uint16_t>(ids.size() + 1);
  ids.emplace(std::string(model), id);
  return id;
}

class PodBuilder {
 public:
  PodBuilder() {
    pod_.name = "pod";
    pod_.namespace_ = "ns";
  }
  PodBuilder& name(std::string n) { pod_.name = intern(std::move(n)); return *this; }
  PodBuilder& ns(std::string n) { pod_.namespace_ = intern(std::move(n)); return *this; }
  PodBuilder& schedulerName(std::string n) { pod_.schedulerName = intern(std::move(n)); return *this; }
  PodBuilder& cpu(int64_t milli) { pod_.requests.milliCpu = milli; return *this; }
  PodBuilder& memory(int64_t bytes) { pod_.requests.memory = bytes; return *this; }
  PodBuilder& request(std::string resource, int64_t n) {
    pod_.requests.scalar.push_back({intern(std::move(resource)), n});
    return *this;
  }
  PodBuilder& gpu(int64_t n) { return request("nvidia.com/gpu", n); }
  PodBuilder& annotation(std::string k, std::string v) {
    pod_.annotations.push_back({intern(std::move(k)), intern(std::move(v))});
    return *this;
  }
  PodBuilder& label(std::string k, std::string v) {
    pod_.labels.push_back({intern(std::move(k)), intern(std::move(v))});
    return *this;
  }
  PodBuilder& milli(int m) { return annotation(std::string(annotations::kGpuMilli), std::to_string(m)); }
  // nodeSelector on the GPU product label.
  PodBuilder& model(std::string m) {
    pod_.nodeSelector.push_back({"nvidia.com/gpu.product", intern(std::move(m))});
    return *this;
  }
  PodBuilder& models(std::string list) { return annotation(std::string(annotations::kGpuModels), std::move(list)); }
  PodBuilder& minMemory(std::string mib) {
    return annotation(std::string(annotations::kGpuMinMemory), std::move(mib));
  }
  // Adds one required node-affinity term with one requirement.
  PodBuilder& affinity(std::string key, codec::SelectorOp op, std::initializer_list<std::string> values) {
    codec::NodeSelectorRequirement r{intern(std::move(key)), op, {}};
    for (const auto& v : values) r.values.push_back(intern(v));
    pod_.requiredNodeAffinity.push_back({{r}, {}});
    return *this;
  }
  PodBuilder& toleration(std::string key, bool exists = true, std::string value = "") {
    pod_.tolerations.push_back({intern(std::move(key)), exists, intern(std::move(value)), codec::TaintEffect::None});
    return *this;
  }
  PodBuilder& spotTolerant() { return annotation(std::string(annotations::kSpotTolerant), "true"); }
  PodBuilder& owner(std::string kind, std::string name, bool controller = true) {
    pod_.ownerReferences.push_back({"apps/v1", intern(std::move(kind)), intern(std::move(name)), "uid", controller});
    return *this;
  }
  codec::Pod build() const { return pod_; }

 private:
  codec::Pod pod_;
};

class NodeBuilder {
 public:
  NodeBuilder() {
    n_.name = "node";
    n_.allocMilliCpu = 64000;
    n_.allocMemory = int64_t{512} << 30;
    n_.allocPods = 110;
  }
  NodeBuilder& name(std::string s) { n_.name = intern(std::move(s)); return *this; }
  NodeBuilder& gpus(int count, int32_t memoryMiB = 81920) {
    n_.gpuCount = static_cast<uint8_t>(count);
    n_.gpuMemoryMiB = memoryMiB;
    return *this;
  }
  // Used milli per GPU, from GPU 0 on.
  NodeBuilder& used(std::initializer_list<int> milli) {
    int i = 0;
    for (int m : milli) n_.gpuUsedMilli[i++] = static_cast<uint16_t>(m);
    return *this;
  }
  // The first k GPUs fully used.
  NodeBuilder& usedWhole(int k) {
    for (int i = 0; i < k; ++i) n_.gpuUsedMilli[i] = kMilliPerGpu;
    return *this;
  }
  NodeBuilder& model(std::string m) {
    n_.gpuModel = modelId(m);
    n_.gpuModelName = intern(std::move(m));
    return *this;
  }
  NodeBuilder& memoryMiB(int32_t mib) { n_.gpuMemoryMiB = mib; return *this; }
  NodeBuilder& capacity(CapacityType t) { n_.capacityType = t; return *this; }
  NodeBuilder& spot() { return capacity(CapacityType::Spot); }
  NodeBuilder& zone(uint16_t id) {
    n_.zone = id;
    n_.zoneName = intern("zone-" + std::to_string(id));
    return *this;
  }
  NodeBuilder& cpu(int64_t alloc, int64_t used) { n_.allocMilliCpu = alloc; n_.usedMilliCpu = used; return *this; }
  NodeBuilder& mem(int64_t alloc, int64_t used) { n_.allocMemory = alloc; n_.usedMemory = used; return *this; }
  NodeBuilder& pods(int64_t alloc, int64_t used) { n_.allocPods = alloc; n_.usedPods = used; return *this; }
  NodeBuilder& scalar(std::string name, int64_t alloc, int64_t used) {
    n_.scalars[n_.scalarCount++] = {intern(std::move(name)), alloc, used};
    return *this;
  }
  NodeInfo build() const { return n_; }

 private:
  NodeInfo n_;
};

// Owns NodeInfo records at stable addresses and the pointer array a NodeSpan views.
class Nodes {
 public:
  Nodes() = default;
  Nodes(std::initializer_list<NodeInfo> nodes) {
    for (const auto& n : nodes) add(n);
  }
  const NodeInfo& add(NodeInfo n) {
    n.id = static_cast<uint32_t>(store_.size());
    store_.push_back(n);
    ptrs_.push_back(&store_.back());
    return store_.back();
  }
  NodeSpan span() const { return ptrs_; }
  const NodeInfo& operator[](size_t i) const { return *ptrs_[i]; }
  size_t size() const { return ptrs_.size(); }

 private:
  std::deque<NodeInfo> store_;
  std::vector<const NodeInfo*> ptrs_;
};

class FakeCluster final : public ClusterState {
 public:
  explicit FakeCluster(uint32_t zones = 4) : zones_(zones) {}
  uint32_t zoneCount() const override { return zones_; }
  void workloadZoneCounts(std::string_view workload, std::span<uint32_t> perZone) const override {
    lastWorkload = std::string(workload);
    auto it = counts_.find(std::string(workload));
    if (it == counts_.end()) return;
    for (const auto& [zone, n] : it->second) {
      if (zone < perZone.size()) perZone[zone] += n;
    }
  }
  void set(std::string workload, uint16_t zone, uint32_t n) { counts_[workload][zone] = n; }
  mutable std::string lastWorkload;

 private:
  uint32_t zones_;
  std::map<std::string, std::map<uint16_t, uint32_t>> counts_;
};

// A FleetschedConfiguration with one profile "test" holding one plugin and its args (YAML flow
// text such as "{policy: spread}"; empty for defaults).
inline std::string singlePluginYaml(std::string_view plugin, std::string_view args) {
  std::string y = "apiVersion: fleetsched.io/v1alpha1\nkind: FleetschedConfiguration\nprofiles:\n- name: test\n"
                  "  plugins:\n  - {name: " + std::string(plugin) + ", weight: 1}\n";
  if (!args.empty()) {
    y += "  pluginConfig:\n  - name: " + std::string(plugin) + "\n    args: " + std::string(args) + "\n";
  }
  return y;
}

// Runs one profile over a node set, as the extender does for one pod.
class Harness {
 public:
  explicit Harness(Config config) : config_(std::move(config)) {}
  static Harness single(std::string_view plugin, std::string_view args = "") {
    std::string error;
    auto c = loadConfig(singlePluginYaml(plugin, args), error);
    if (!c) throw std::runtime_error("bad test config: " + error);
    return Harness(std::move(*c));
  }

  const Profile& profile() const { return config_.profiles().front(); }

  std::vector<Status> filter(const codec::Pod& pod, const Nodes& nodes) {
    pod_ = pod;
    std::vector<Status> out(nodes.size());
    profile().runFilter(pod_, state, cluster, nodes.span(), out, scratch);
    return out;
  }
  Status filterOne(const codec::Pod& pod, const NodeInfo& node) {
    Nodes n{node};
    return filter(pod, n).front();
  }
  // PreFilter + weighted totals over all nodes (feasible or not).
  std::vector<int64_t> totals(const codec::Pod& pod, const Nodes& nodes) {
    pod_ = pod;
    const Status s = profile().preFilter(pod_, state, cluster);
    if (!s.ok()) throw std::runtime_error("preFilter failed: " + std::string(s.reason));
    auto t = profile().scoreTotals(state, cluster, scratch.batch(nodes.span(), profile().gpuResources()), scratch);
    return {t.begin(), t.end()};
  }
  Status preFilter(const codec::Pod& pod) {
    pod_ = pod;
    return profile().preFilter(pod_, state, cluster);
  }

  CycleState state;
  ProfileScratch scratch;
  FakeCluster cluster;

 private:
  Config config_;
  codec::Pod pod_;
};

}  // namespace fleetsched::plugins::testing
