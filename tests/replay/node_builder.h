// Fixture builders for policy tests: NodeBuilder().gpus(8, "G2").cpu(96000).used({500, 0}).build()
#pragma once

#include <initializer_list>
#include <string_view>

#include "plugins/framework.h"

namespace fleetsched::testing {

class NodeBuilder {
 public:
  NodeBuilder& id(uint32_t v) { n_.id = v; return *this; }
  NodeBuilder& name(std::string_view v) { n_.name = v; return *this; }
  NodeBuilder& gpus(int count, std::string_view model) {
    n_.gpuCount = static_cast<uint8_t>(count);
    n_.gpuModelName = model;
    n_.gpuModel = 1;
    return *this;
  }
  NodeBuilder& cpu(int64_t alloc, int64_t used = 0) { n_.allocMilliCpu = alloc; n_.usedMilliCpu = used; return *this; }
  NodeBuilder& memory(int64_t alloc, int64_t used = 0) { n_.allocMemory = alloc; n_.usedMemory = used; return *this; }
  // Per-GPU used milli, from GPU 0.
  NodeBuilder& used(std::initializer_list<int> perGpu) {
    int i = 0;
    for (int u : perGpu) n_.gpuUsedMilli[i++] = static_cast<uint16_t>(u);
    return *this;
  }
  NodeBuilder& shapes(uint32_t s) { n_.gpuPodShapes = s; return *this; }
  plugins::NodeInfo build() const {
    plugins::NodeInfo n = n_;
    if (n.allocMemory == 0) n.allocMemory = int64_t{1} << 40;
    if (n.allocPods == 0) n.allocPods = 1001;
    return n;
  }

 private:
  plugins::NodeInfo n_;
};

inline plugins::PodInfo podInfo(int64_t cpu, int32_t gpus, int32_t milli, int64_t memory = 0) {
  plugins::PodInfo p;
  p.milliCpu = cpu;
  p.memory = memory;
  p.gpuCount = gpus;
  p.gpuMilli = gpus > 0 ? milli : 0;
  return p;
}

}  // namespace fleetsched::testing
