#include "plugins/policies/fgd/online_typical.h"

#include "plugins/annotations.h"

namespace fleetsched::plugins::policies {

std::shared_ptr<FragCache> OnlineTypicalPods::observe(const PodInfo& pod) {
  std::string_view models;
  if (pod.pod != nullptr) {
    if (const auto* v = codec::findKey(pod.pod->annotations, annotations::kGpuModels)) models = *v;
  }
  typical_.observe(pod, models);
  if (typical_.observed() >= nextRebuild_) {
    cache_ = std::make_shared<FragCache>(std::make_shared<FragModel>(typical_.classes()), scale_);
    nextRebuild_ = nextRebuild_ < kRebuildEvery ? nextRebuild_ * 2 : nextRebuild_ + kRebuildEvery;
  }
  return cache_;
}

}  // namespace fleetsched::plugins::policies
