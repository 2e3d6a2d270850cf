#include "cache/workload_key.h"

namespace fleetsched::cache {

bool workloadKey(const codec::Pod& pod, const std::vector<std::string>& labels, std::string& out) {
  out.clear();
  if (const codec::OwnerReference* owner = pod.controllerRef(); owner != nullptr && !owner->name.empty()) {
    out.reserve(owner->kind.size() + 1 + owner->name.size());
    out.append(owner->kind).append("/").append(owner->name);
    return true;
  }
  for (const auto& label : labels) {
    if (const auto* v = codec::findKey(pod.labels, label); v != nullptr && !v->empty()) {
      out.assign(*v);
      return true;
    }
  }
  return false;
}

}  // namespace fleetsched::cache
