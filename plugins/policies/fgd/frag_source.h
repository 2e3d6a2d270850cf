// Where FGD and Fleet get their fragmentation model and the memo they score through, so that the
// plugins themselves stay immutable and several threads may run one profile at once (the
// reactor's loop thread, the off-loop worker and the binder do):
//   - the model is fixed (the replay learns it from the trace) or learned online from the pods
//     seen at PreFilter (OnlineTypicalPods, shared and locked inside);
//   - the memo (FragCache: pure functions of node state and pod class, memoised) lives in the
//     plugin's slot of the CycleState, so one per cycle object and thread, and starts over when
//     the model changes. A caller that owns the node records may hand its own memo in (the
//     replay refreshes it after each placement, keeping that work out of the timed decision);
//     it is then that caller's, for cycles on its one thread.
#pragma once

#include <memory>
#include <vector>

#include "plugins/framework.h"
#include "plugins/policies/fgd/frag_cache.h"
#include "plugins/policies/fgd/frag_model.h"
#include "plugins/policies/fgd/online_typical.h"

namespace fleetsched::plugins::policies {

// The slot FGD and Fleet keep in the CycleState.
struct FragSlot final : PluginState {
  std::shared_ptr<FragCache> cache;  // this cycle's memo; null while there is no model
  // Fleet's ranking (normalizeScore): Δ per node for a GPU pod, idle GPU per node for a CPU pod.
  std::vector<double> delta;
  std::vector<int32_t> idleGpu;
};

class FragSource {
 public:
  // `model`: fixed, or null to learn online with `memory`. `handedIn`: the caller's memo for
  // `model` (may be null).
  FragSource(std::shared_ptr<const FragModel> model, std::shared_ptr<FragCache> handedIn, ClassMemory memory);

  // At PreFilter: observes the pod when learning online, and makes slot `index` hold a memo of
  // the current model. Returns the slot.
  FragSlot& begin(CycleState& state, int index) const;
  // The slot begin() prepared for this cycle.
  static FragSlot& slot(const CycleState& state, int index) { return *static_cast<FragSlot*>(state.slot(index)); }

 private:
  const std::shared_ptr<const FragModel> model_;
  const std::shared_ptr<FragCache> handedIn_;
  const std::unique_ptr<OnlineTypicalPods> online_;
};

}  // namespace fleetsched::plugins::policies
