// ReasonCache: per-cycle memo of formatted failure reasons, keyed by the numbers that go into
// them ("2 of 8 nvidia.com/gpu free, pod needs 4" is keyed by 2 and 8). Thousands of nodes
// usually fail for a handful of distinct reasons, so the failing path formats each once and
// then allocates nothing either. Cleared in PreFilter together with the CycleState's reasons.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/framework.h"

namespace fleetsched::plugins {

class ReasonCache {
 public:
  static constexpr size_t kMaxEntries = 64;  // past this, reasons are formatted every time

  void clear() { entries_.clear(); }

  // `kind` tells apart the reason templates of one plugin; a and b are the numbers in it.
  template <class Format>
  std::string_view get(uint32_t kind, int64_t a, int64_t b, const CycleState& state, Format&& format) {
    for (const auto& e : entries_) {
      if (e.kind == kind && e.a == a && e.b == b) return e.reason;
    }
    std::string_view r = state.keep(format());
    if (entries_.size() < kMaxEntries) entries_.push_back({kind, a, b, r});
    return r;
  }

 private:
  struct Entry {
    uint32_t kind;
    int64_t a, b;
    std::string_view reason;
  };
  std::vector<Entry> entries_;
};

}  // namespace fleetsched::plugins
