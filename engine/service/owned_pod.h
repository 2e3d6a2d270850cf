// A codec::Pod that owns its strings, for keeping a pod past the decoder's next parse (the
// binder needs the pod it filtered when kube-scheduler later asks to bind it).
#pragma once

#include <deque>
#include <string>
#include <string_view>

#include "codec/model.h"

namespace fleetsched::engine {

class OwnedPod {
 public:
  OwnedPod() = default;
  explicit OwnedPod(const codec::Pod& pod) { assign(pod); }
  OwnedPod(const OwnedPod&) = delete;
  OwnedPod& operator=(const OwnedPod&) = delete;

  void assign(const codec::Pod& pod);
  const codec::Pod& pod() const { return pod_; }

 private:
  std::string_view keep(std::string_view s);

  codec::Pod pod_;
  std::deque<std::string> storage_;  // a deque never moves its strings
};

}  // namespace fleetsched::engine
