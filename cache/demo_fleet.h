// The embedded demo GPU fleet: what `fleetsched serve` schedules against when no node source is
// given. 48 nodes over three zones of one region, deterministic:
//
//   node pool        instance         GPUs                          nodes  capacity
//   a100             p4de.24xlarge    8 × NVIDIA-A100-SXM4-80GB     6      on-demand
//   h100             p5.48xlarge      8 × NVIDIA-H100-80GB-HBM3     6      4 on-demand, 2 reserved (capacity block)
//   a10g             g5.12xlarge      4 × NVIDIA-A10G               9      spot and on-demand
//   l4               g6.12xlarge      4 × NVIDIA-L4                 9      spot and on-demand
//   t4               g4dn.xlarge      1 × Tesla-T4                  6      spot and on-demand
//   cpu              m6i.4xlarge      none                          12     spot and on-demand
//
// Labels are the ones EKS, Karpenter and NVIDIA GPU feature discovery put on such nodes; the
// capacity type is given by karpenter.sh/capacity-type on Karpenter pools and by
// eks.amazonaws.com/capacityType on managed node groups, so both label families are exercised.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "codec/model.h"

namespace fleetsched::cache {

struct DemoFleet {
  std::vector<codec::Node> nodes;  // views into `storage`
  std::deque<std::string> storage;
};

// Built once on first use; immutable afterwards (safe to read from any thread).
const DemoFleet& demoFleet();

// The same fleet as a `kubectl get nodes -o json` NodeList document.
std::string demoFleetJson();

}  // namespace fleetsched::cache
