// Turns a codec::Node into the hot plugins::NodeInfo record, reading it the way a
// plugins::Interpretation says (which resources are GPUs and which one has per-GPU accounting;
// which labels name the zone, GPU model, GPU memory and capacity type; plugins/interpretation.h
// lists the defaults). The cache and the extender's full-Nodes path build with the cache's
// interpretation, which serve derives from its profiles.
//
// NodeBuilder interns zone, model and resource names into small ids (views stay valid for the
// builder's life). It is not thread-safe: one builder per writer thread (the cache owns one).
#pragma once

#include <cstdint>
#include <string_view>

#include "cache/string_pool.h"
#include "codec/model.h"
#include "plugins/framework.h"
#include "plugins/interpretation.h"

namespace fleetsched::cache {

class NodeBuilder {
 public:
  explicit NodeBuilder(plugins::Interpretation interpretation = {});

  const plugins::Interpretation& interpretation() const { return interpretation_; }

  // Fills `out` from `node`: zone, model, capacity type, allocatable cpu/memory/pods, GPU count
  // and memory, and one scalar per GPU resource the node has (the per-GPU resource first). Used
  // amounts are zero. `out.name`, `labels` and `taints` view `node`; the caller re-points them to
  // storage it keeps. Returns the node's per-GPU resource name (interned) or an empty view when it
  // has none.
  std::string_view build(const codec::Node& node, plugins::NodeInfo& out);

  // Interned resource name (views stay valid for the builder's life).
  std::string_view internResource(std::string_view name) { return resources_.name(resources_.intern(name)); }
  // Number of zone ids in use, "no zone" (0) included.
  uint32_t zoneCount() const { return zones_.size(); }

 private:
  uint16_t internZoneId(std::string_view zone);

  plugins::Interpretation interpretation_;
  Interner zones_;
  Interner models_;
  Interner resources_;
};

}  // namespace fleetsched::cache
