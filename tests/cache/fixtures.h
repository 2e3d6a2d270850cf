// Fixture builders for cache tests: codec::Node / codec::Pod values whose strings live in the
// builder's own storage (the codec structs only view memory).
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model.h"
#include "plugins/annotations.h"

namespace fleetsched::cache::testing {

// Owns every string the built objects view. Keep it alive as long as the objects.
class Strings {
 public:
  std::string_view keep(std::string_view s) { return storage_.emplace_back(s); }

 private:
  std::deque<std::string> storage_;
};

class NodeMaker {
 public:
  NodeMaker(Strings& s, std::string_view name) : s_(s) {
    node_.name = s_.keep(name);
    node_.allocatable.milliCpu = 32000;
    node_.allocatable.memory = int64_t{128} << 30;
    node_.allocatable.pods = 110;
  }
  NodeMaker& label(std::string_view k, std::string_view v) {
    node_.labels.push_back({s_.keep(k), s_.keep(v)});
    return *this;
  }
  NodeMaker& zone(std::string_view z) { return label("topology.kubernetes.io/zone", z); }
  NodeMaker& gpus(int n, std::string_view product = "NVIDIA-A100-SXM4-80GB") {
    node_.allocatable.scalar.push_back({s_.keep("nvidia.com/gpu"), n});
    return label("nvidia.com/gpu.product", product);
  }
  NodeMaker& scalar(std::string_view name, int64_t n) {
    node_.allocatable.scalar.push_back({s_.keep(name), n});
    return *this;
  }
  NodeMaker& cpu(int64_t milli) {
    node_.allocatable.milliCpu = milli;
    return *this;
  }
  NodeMaker& taint(std::string_view k, std::string_view v) {
    node_.taints.push_back({s_.keep(k), s_.keep(v), codec::TaintEffect::NoSchedule});
    return *this;
  }
  codec::Node build() const { return node_; }

 private:
  Strings& s_;
  codec::Node node_;
};

class PodMaker {
 public:
  PodMaker(Strings& s, std::string_view uid) : s_(s) {
    pod_.uid = s_.keep(uid);
    pod_.name = pod_.uid;
    pod_.namespace_ = "default";
    pod_.phase = codec::PodPhase::Running;
  }
  PodMaker& on(std::string_view node) {
    pod_.nodeName = s_.keep(node);
    return *this;
  }
  PodMaker& cpu(int64_t milli) {
    pod_.requests.milliCpu = milli;
    return *this;
  }
  PodMaker& memory(int64_t bytes) {
    pod_.requests.memory = bytes;
    return *this;
  }
  PodMaker& gpus(int64_t n, std::string_view resource = "nvidia.com/gpu") {
    pod_.requests.scalar.push_back({s_.keep(resource), n});
    return *this;
  }
  PodMaker& annotation(std::string_view k, std::string_view v) {
    pod_.annotations.push_back({s_.keep(k), s_.keep(v)});
    return *this;
  }
  PodMaker& gpuIndex(std::string_view v) { return annotation(plugins::annotations::kGpuIndex, v); }
  PodMaker& gpuMilli(std::string_view v) { return annotation(plugins::annotations::kGpuMilli, v); }
  PodMaker& label(std::string_view k, std::string_view v) {
    pod_.labels.push_back({s_.keep(k), s_.keep(v)});
    return *this;
  }
  PodMaker& owner(std::string_view kind, std::string_view name) {
    pod_.ownerReferences.push_back({"apps/v1", s_.keep(kind), s_.keep(name), "owner-uid", true});
    return *this;
  }
  PodMaker& schedulerName(std::string_view v) {
    pod_.schedulerName = s_.keep(v);
    return *this;
  }
  PodMaker& phase(codec::PodPhase p) {
    pod_.phase = p;
    return *this;
  }
  PodMaker& terminating() {
    pod_.terminating = true;
    return *this;
  }
  codec::Pod build() const { return pod_; }

 private:
  Strings& s_;
  codec::Pod pod_;
};

}  // namespace fleetsched::cache::testing
