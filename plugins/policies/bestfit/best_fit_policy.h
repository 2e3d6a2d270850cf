// BestFit (FGD paper baseline): the node whose free CPU and GPU after placement are smallest
// (half weight each, normalised by a 128-core 8-GPU machine) wins; raw scores are min-max
// normalised across the feasible nodes with integer arithmetic.
#pragma once

#include <memory>

#include "plugins/framework.h"

namespace fleetsched::plugins::policies {

std::unique_ptr<Plugin> createBestFitPolicy();

int32_t bestFitRawScore(const NodeInfo& node, const PodInfo& pod);
// Rescales to 0..100 in place: (s - min) * 100 / (max - min); all 0 when max == min.
void minMaxNormalize(std::span<int32_t> scores);

}  // namespace fleetsched::plugins::policies
