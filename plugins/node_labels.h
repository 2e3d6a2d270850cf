// Read-only views of a node's labels and taints (NodeInfo::labels, NodeInfo::taints).
//
// A view holds one of two forms behind a tagged pointer (8 bytes, so the hot record stays
// small): codec's vectors (full-Nodes requests, tests), or the cache's compact form, where a node
// with ~70 labels keeps them as pairs of 32-bit ids into a reference-counted string table (8 bytes
// a label instead of two string_views' 32). Readers index and search either form the same way;
// elements come back by value, their views valid as long as the record is readable.
// An empty view (default) has no data: replay builds nodes without labels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "codec/model.h"

namespace fleetsched::plugins {

// Resolves the ids of a CompactNodeStrings. str() may be called from any thread for ids that a
// readable record holds.
class StringSource {
 public:
  virtual std::string_view str(uint32_t id) const = 0;

 protected:
  ~StringSource() = default;
};

// A node's labels and taints as the cache stores them: this header, then labelCount (key, value)
// id pairs, then taintCount (key, value, effect) triples, in one allocation.
struct CompactNodeStrings {
  const StringSource* strings = nullptr;
  uint32_t labelCount = 0;
  uint32_t taintCount = 0;

  const uint32_t* ids() const { return reinterpret_cast<const uint32_t*>(this + 1); }
  uint32_t* ids() { return reinterpret_cast<uint32_t*>(this + 1); }
  static size_t bytesFor(size_t labels, size_t taints) {
    return sizeof(CompactNodeStrings) + (labels * 2 + taints * 3) * sizeof(uint32_t);
  }
};
static_assert(sizeof(CompactNodeStrings) % alignof(uint32_t) == 0);

namespace detail {

// The tagged pointer both views share: bit 0 set means CompactNodeStrings.
class TaggedNodeStrings {
 protected:
  TaggedNodeStrings() = default;
  explicit TaggedNodeStrings(const void* codecVector) : bits_(reinterpret_cast<uintptr_t>(codecVector)) {}
  explicit TaggedNodeStrings(const CompactNodeStrings* compact)
      : bits_(compact == nullptr ? 0 : reinterpret_cast<uintptr_t>(compact) | 1U) {}

  bool isCompact() const { return (bits_ & 1U) != 0; }
  const CompactNodeStrings* compact() const {
    return reinterpret_cast<const CompactNodeStrings*>(bits_ & ~uintptr_t{1});
  }
  const void* codecVector() const { return reinterpret_cast<const void*>(bits_); }

 public:
  bool hasData() const { return bits_ != 0; }
  friend bool operator==(const TaggedNodeStrings&, const TaggedNodeStrings&) = default;

 protected:
  uintptr_t bits_ = 0;
};

}  // namespace detail

class NodeLabels : public detail::TaggedNodeStrings {
 public:
  NodeLabels() = default;
  // Implicit on purpose: `info.labels = &node.labels` keeps working for codec-built records.
  NodeLabels(const std::vector<codec::KeyValue>* labels) : TaggedNodeStrings(labels) {}  // NOLINT
  explicit NodeLabels(const CompactNodeStrings* compact) : TaggedNodeStrings(compact) {}

  size_t size() const {
    if (!hasData()) return 0;
    return isCompact() ? compact()->labelCount : vec().size();
  }
  codec::KeyValue operator[](size_t i) const {
    if (!isCompact()) return vec()[i];
    const CompactNodeStrings* c = compact();
    const uint32_t* ids = c->ids() + 2 * i;
    return {c->strings->str(ids[0]), c->strings->str(ids[1])};
  }
  // The value of label `key`, if the node has it.
  std::optional<std::string_view> find(std::string_view key) const {
    const size_t n = size();
    for (size_t i = 0; i < n; ++i) {
      const codec::KeyValue kv = (*this)[i];
      if (kv.key == key) return kv.value;
    }
    return std::nullopt;
  }

 private:
  const std::vector<codec::KeyValue>& vec() const {
    return *static_cast<const std::vector<codec::KeyValue>*>(codecVector());
  }
};

class NodeTaints : public detail::TaggedNodeStrings {
 public:
  NodeTaints() = default;
  NodeTaints(const std::vector<codec::Taint>* taints) : TaggedNodeStrings(taints) {}  // NOLINT: implicit
  explicit NodeTaints(const CompactNodeStrings* compact) : TaggedNodeStrings(compact) {}

  size_t size() const {
    if (!hasData()) return 0;
    return isCompact() ? compact()->taintCount : vec().size();
  }
  codec::Taint operator[](size_t i) const {
    if (!isCompact()) return vec()[i];
    const CompactNodeStrings* c = compact();
    const uint32_t* ids = c->ids() + 2 * size_t{c->labelCount} + 3 * i;
    return {c->strings->str(ids[0]), c->strings->str(ids[1]), static_cast<codec::TaintEffect>(ids[2])};
  }

 private:
  const std::vector<codec::Taint>& vec() const {
    return *static_cast<const std::vector<codec::Taint>*>(codecVector());
  }
};

}  // namespace fleetsched::plugins
