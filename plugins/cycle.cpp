#include "plugins/cycle.h"

namespace fleetsched::plugins {

Status Cycle::begin(const Profile& profile, const codec::Pod& pod, const ClusterState& cluster) {
  profile_ = &profile;
  pod_ = &pod;
  cluster_ = &cluster;
  preFilter_ = profile.preFilter(pod, state_, cluster);
  admitted_ = preFilter_.ok();
  return preFilter_;
}

std::span<Verdict> Cycle::filter(const NodeBatch& nodes) {
  verdicts_.resize(nodes.size());
  profile_->filterAfter(preFilter_, state_, nodes, verdicts_, scratch_);
  return verdicts_;
}

Status Cycle::filterOne(const NodeInfo& node) {
  if (!admitted_) return preFilter_;
  const NodeInfo* one[1] = {&node};
  profile_->filter(state_, NodeSpan(one, 1), one_, scratch_);
  return one_[0];
}

}  // namespace fleetsched::plugins
