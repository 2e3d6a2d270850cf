#include "plugins/policies/fgd/online_typical.h"

#include "plugins/annotations.h"

namespace fleetsched::plugins::policies {

std::shared_ptr<FragCache> OnlineTypicalPods::observe(const PodInfo& pod) {
  std::string_view models;
  if (pod.pod != nullptr) {
    if (!pod.pod->uid.empty()) {
      if (!seen_.emplace(pod.pod->uid).second) return cache_;
      seenOrder_.emplace_back(pod.pod->uid);
      if (seenOrder_.size() > kRememberedUids) {
        seen_.erase(seenOrder_.front());
        seenOrder_.pop_front();
      }
    }
    if (const auto* v = codec::findKey(pod.pod->annotations, annotations::kGpuModels)) models = *v;
  }
  typical_.observe(pod, models);
  if (typical_.observed() >= nextRebuild_) {
    cache_ = std::make_shared<FragCache>(std::make_shared<FragModel>(typical_.classes(-1, memory_)));
    nextRebuild_ = nextRebuild_ < kRebuildEvery ? nextRebuild_ * 2 : nextRebuild_ + kRebuildEvery;
  }
  return cache_;
}

}  // namespace fleetsched::plugins::policies
