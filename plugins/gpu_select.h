// GPU choice inside a chosen node, from the node's per-GPU accounting (NodeInfo::gpuUsedMilli).
//
// Best fit (the default everywhere, and the pipeline's fallback): a shared pod (one GPU, less
// than 1000 milli) gets the GPU whose remaining share fits tightest, lowest index on ties;
// whole-GPU pods get the lowest-index fully free GPUs. Most free (the GPU plugin's spread
// policy) gives a shared pod the GPU with the largest remaining share instead.
#pragma once

#include "plugins/framework.h"

namespace fleetsched::plugins {

enum class GpuChoice : uint8_t { BestFit, MostFree };

// Fills `out` and returns true when the node has enough GPUs for the pod; returns false (and
// leaves out.count == 0) otherwise. A pod without GPU demand gets an empty assignment.
bool selectGpus(const PodInfo& pod, const NodeInfo& node, GpuAssignment& out,
                GpuChoice choice = GpuChoice::BestFit);

}  // namespace fleetsched::plugins
