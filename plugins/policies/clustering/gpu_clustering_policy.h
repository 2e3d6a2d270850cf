// GpuClustering (FGD paper baseline): GPU pods go where pods of the same shape (shared, 1, 2, 4,
// 8 whole GPUs) already run, then to empty nodes, then elsewhere; within a tier, fuller nodes
// first. CPU-only pods score 0 everywhere. Reads NodeInfo::gpuPodShapes.
#pragma once

#include <memory>

#include "plugins/framework.h"

namespace fleetsched::plugins::policies {

std::unique_ptr<Plugin> createGpuClusteringPolicy();

int32_t gpuClusteringScore(const NodeInfo& node, const PodInfo& pod);

}  // namespace fleetsched::plugins::policies
