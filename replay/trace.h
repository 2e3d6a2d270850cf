// Readers for the openb trace CSVs (Alibaba cluster-trace-gpu-v2023): the node list
// (sn,cpu_milli,memory_mib,gpu,model) and both pod-list shapes, 11 columns
// (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
// deletion_time,scheduled_time) and 5 columns (name,cpu_milli,memory_mib,num_gpu,gpu_milli).
// Columns are found by header name, so extra columns are ignored. A malformed row fails the
// whole read with "<source>:<line>: <what>"; nothing is guessed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsched::replay {

struct NodeRow {
  std::string name;
  int64_t milliCpu = 0;
  int64_t memoryMiB = 0;
  int32_t gpuCount = 0;
  std::string gpuModel;  // empty for CPU-only nodes
};

struct PodRow {
  std::string name;
  int64_t milliCpu = 0;
  int64_t memoryMiB = 0;
  int32_t gpuCount = 0;
  int32_t gpuMilli = 0;  // per GPU; clamped to 1000; 0 for CPU-only pods
  std::string gpuSpec;   // allowed models, '|'-separated; empty (or "nan" in the file) = any
};

// Parse file contents; `source` names the input in error messages.
bool parseNodeList(std::string_view text, std::string_view source, std::vector<NodeRow>& out, std::string& error);
bool parsePodList(std::string_view text, std::string_view source, std::vector<PodRow>& out, std::string& error);

bool readNodeList(const std::string& path, std::vector<NodeRow>& out, std::string& error);
bool readPodList(const std::string& path, std::vector<PodRow>& out, std::string& error);

}  // namespace fleetsched::replay
