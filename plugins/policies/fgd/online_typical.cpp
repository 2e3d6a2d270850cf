#include "plugins/policies/fgd/online_typical.h"

#include "plugins/annotations.h"

namespace fleetsched::plugins::policies {

std::shared_ptr<const FragModel> OnlineTypicalPods::observe(const PodInfo& pod) {
  std::lock_guard lock(mutex_);
  std::string_view models;
  if (pod.pod != nullptr) {
    if (!pod.pod->uid.empty()) {
      if (!seen_.emplace(pod.pod->uid).second) return model_;
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
    model_ = std::make_shared<FragModel>(typical_.classes(-1, memory_));
    nextRebuild_ = nextRebuild_ < kRebuildEvery ? nextRebuild_ * 2 : nextRebuild_ + kRebuildEvery;
  }
  return model_;
}

uint64_t OnlineTypicalPods::observed() const {
  std::lock_guard lock(mutex_);
  return typical_.observed();
}

}  // namespace fleetsched::plugins::policies
