// GpuPacking (FGD paper baseline): top up a partly used GPU (tightest first), else open fully
// free GPUs on a node already in use, else open an idle node (smaller idle nodes first). CPU-only
// pods score 0 everywhere.
#pragma once

#include <memory>

#include "plugins/framework.h"

namespace fleetsched::plugins::policies {

std::unique_ptr<Plugin> createGpuPackingPolicy();

int32_t gpuPackingScore(const NodeInfo& node, const PodInfo& pod);

}  // namespace fleetsched::plugins::policies
