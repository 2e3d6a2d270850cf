#include "engine/service/owned_pod.h"

namespace fleetsched::engine {

std::string_view OwnedPod::keep(std::string_view s) {
  if (s.empty()) return {};
  return storage_.emplace_back(s);
}

void OwnedPod::assign(const codec::Pod& src) {
  storage_.clear();
  pod_ = src;  // copies every vector; the views are re-pointed below
  auto keepKvs = [this](std::vector<codec::KeyValue>& kvs) {
    for (auto& kv : kvs) {
      kv.key = keep(kv.key);
      kv.value = keep(kv.value);
    }
  };
  auto keepTerm = [this](codec::NodeSelectorTerm& t) {
    for (auto* reqs : {&t.matchExpressions, &t.matchFields}) {
      for (auto& r : *reqs) {
        r.key = keep(r.key);
        for (auto& v : r.values) v = keep(v);
      }
    }
  };
  pod_.name = keep(src.name);
  pod_.namespace_ = keep(src.namespace_);
  pod_.uid = keep(src.uid);
  pod_.resourceVersion = keep(src.resourceVersion);
  keepKvs(pod_.labels);
  keepKvs(pod_.annotations);
  for (auto& o : pod_.ownerReferences) {
    o.apiVersion = keep(o.apiVersion);
    o.kind = keep(o.kind);
    o.name = keep(o.name);
    o.uid = keep(o.uid);
  }
  pod_.nodeName = keep(src.nodeName);
  pod_.schedulerName = keep(src.schedulerName);
  keepKvs(pod_.nodeSelector);
  for (auto& t : pod_.requiredNodeAffinity) keepTerm(t);
  for (auto& p : pod_.preferredNodeAffinity) keepTerm(p.preference);
  for (auto& t : pod_.tolerations) {
    t.key = keep(t.key);
    t.value = keep(t.value);
  }
  pod_.nominatedNodeName = keep(src.nominatedNodeName);
  for (auto& r : pod_.requests.scalar) r.name = keep(r.name);
}

}  // namespace fleetsched::engine
