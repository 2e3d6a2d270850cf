// DotProduct (FGD paper baseline, dimExtMethod=merge, normMethod=max): the dot product of the
// node's free (CPU, GPU) and the pod's demand, both normalised by one 128-core 8-GPU machine,
// halved; score = floor(100 * (1 - d)). Small products win, so pods go where little room is left.
#pragma once

#include <memory>

#include "plugins/framework.h"

namespace fleetsched::plugins::policies {

std::unique_ptr<Plugin> createDotProductPolicy();

// The per-node score, exposed for the tests.
int32_t dotProductScore(const NodeInfo& node, const PodInfo& pod);

}  // namespace fleetsched::plugins::policies
