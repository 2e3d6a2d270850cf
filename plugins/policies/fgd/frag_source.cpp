#include "plugins/policies/fgd/frag_source.h"

namespace fleetsched::plugins::policies {

FragSource::FragSource(std::shared_ptr<const FragModel> model, std::shared_ptr<FragCache> handedIn, ClassMemory memory)
    : model_(handedIn && !model ? handedIn->modelPtr() : std::move(model)),
      handedIn_(std::move(handedIn)),
      online_(model_ ? nullptr : std::make_unique<OnlineTypicalPods>(TypicalPods::kDefaultKeepPercent, memory)) {}

FragSlot& FragSource::begin(CycleState& state, int index) const {
  auto* s = dynamic_cast<FragSlot*>(state.slot(index));
  if (s == nullptr) {
    state.setSlot(index, std::make_unique<FragSlot>());
    s = static_cast<FragSlot*>(state.slot(index));
  }
  const std::shared_ptr<const FragModel> model = online_ ? online_->observe(state.pod) : model_;
  if (!model) {
    s->cache.reset();
  } else if (!s->cache || s->cache->modelPtr() != model) {
    s->cache = handedIn_ && handedIn_->modelPtr() == model ? handedIn_ : std::make_shared<FragCache>(model);
  }
  return *s;
}

}  // namespace fleetsched::plugins::policies
