// NodeNameTable: what the extender's replies need to know about node names, computed once per
// node set instead of once per request:
//
//   rank(id)    the position of the node's name in bytewise order (Go's order of map keys),
//               so a failed-nodes map is written in order by walking ranks: no string sort;
//   quoted(id)  the name as a JSON string, quoted and escaped exactly as JsonWriter::string
//               writes it, so replies copy it instead of scanning it (kCopySlack bytes are
//               readable from its start, for fixed-size copies; maxQuotedSize() bounds it);
//               quotedAtRank(rank) the same, laid out in rank order for walks by rank;
//   name(id)    the name itself;
//   hostScorePrefix(id)  `{"Host":<quoted>,"Score":`, a prioritize reply entry up to its score
//               (kCopySlack bytes readable from its start, too);
//   find(name)  the id of the live node called `name`, or kNoNode: NodeNames requests resolve
//               every name through it. The cache's own index checks a probe's name in the
//               node's record, one or two cache misses per name; this one checks it in the
//               table's contiguous copy of the names.
//
// refresh(snap) rebuilds only when the snapshot's node set changed (Snapshot::nameSetVersion):
// pod events and reservations publish new snapshots but keep the table. The table owns copies
// of everything, so it stays valid after the snapshot it was built from is released; ids are
// only meaningful for snapshots with the same nameSetVersion(). One table per reading thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "cache/snapshot.h"
#include "codec/encoder.h"

namespace fleetsched::engine {

class NodeNameTable {
 public:
  // Bytes readable from the start of every quoted(id), past its end included.
  static constexpr size_t kCopySlack = codec::kCopySlack;

  // Makes the table describe `snap`'s node set. Returns true when it had to rebuild.
  bool refresh(const cache::Snapshot& snap);

  // The nameSetVersion() of the snapshot the table was built from.
  uint64_t nameSetVersion() const { return nameSetVersion_; }
  // Live nodes; ranks run 0..size()-1.
  uint32_t size() const { return static_cast<uint32_t>(byRank_.size()); }
  // For a live id of the snapshot the table was built from.
  uint32_t rank(uint32_t id) const { return rank_[id]; }
  uint32_t idAt(uint32_t rank) const { return byRank_[rank]; }
  std::string_view quoted(uint32_t id) const {
    return {quoted_.data() + quotedOffset_[id], quotedOffset_[id + 1] - quotedOffset_[id]};
  }
  std::string_view quotedAtRank(uint32_t rank) const {
    return {rankQuoted_.data() + rankQuotedOffset_[rank], rankQuotedOffset_[rank + 1] - rankQuotedOffset_[rank]};
  }
  size_t maxQuotedSize() const { return maxQuoted_; }
  std::string_view name(uint32_t id) const {
    return {names_.data() + nameOffset_[id], nameOffset_[id + 1] - nameOffset_[id]};
  }
  uint32_t find(std::string_view name) const { return probe(name, static_cast<uint32_t>(hash(name))); }
  // find() for each of `names` into `ids` (same size), a few names in flight at once so that
  // their probes' cache misses overlap.
  void findAll(std::span<const std::string_view> names, std::span<uint32_t> ids) const;
  std::string_view hostScorePrefix(uint32_t id) const {
    return {hostPrefixes_.data() + hostPrefixOffset_[id], hostPrefixOffset_[id + 1] - hostPrefixOffset_[id]};
  }

 private:
  // find() runs for every name of every NodeNames request. Hashing and comparing 8 bytes at a
  // time, inline, instead of calling std::hash (_Hash_bytes) and memcmp took a 5,000-node
  // filter in kube-scheduler's order from 251 to 219 us (service_bench BM_NodeNamesFilter/0,
  // medians of 3, 2026-12-05).
  static uint64_t load8(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static uint64_t hash(std::string_view s) {
    // One multiply per 8 bytes, then two rounds of xor-shift-multiply for the low bits the
    // table indexes by.
    constexpr uint64_t k = 0x9e3779b97f4a7c15ULL;
    const char* p = s.data();
    const size_t n = s.size();
    uint64_t h = n * k;
    if (n >= 8) {
      for (size_t i = 0; i + 8 < n; i += 8) h = (h ^ load8(p + i)) * k;
      h = (h ^ load8(p + n - 8)) * k;  // the last 8 bytes, overlapping the words before
    } else {
      uint64_t v = 0;
      std::memcpy(&v, p, n);
      h = (h ^ v) * k;
    }
    h = (h ^ (h >> 32)) * 0xd6e8feb86659fd93ULL;
    return h ^ (h >> 32);
  }
  static bool sameBytes(std::string_view a, std::string_view b) {
    const size_t n = a.size();
    if (n != b.size()) return false;
    if (n < 8) return std::memcmp(a.data(), b.data(), n) == 0;
    for (size_t i = 0; i + 8 < n; i += 8) {
      if (load8(a.data() + i) != load8(b.data() + i)) return false;
    }
    return load8(a.data() + n - 8) == load8(b.data() + n - 8);
  }

  // The id of `name`, whose hash() truncated is `h`, or kNoNode.
  uint32_t probe(std::string_view name, uint32_t h) const {
    for (uint32_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == cache::kNoNode) return cache::kNoNode;
      if (s.hash == h && sameBytes(this->name(s.id), name)) return s.id;
    }
  }

  struct Slot {
    uint32_t hash = 0;
    uint32_t id = cache::kNoNode;  // kNoNode: empty
  };
  std::vector<Slot> slots_ = std::vector<Slot>(1);  // a power of two, at most half full
  uint32_t mask_ = 0;
  bool built_ = false;
  uint64_t nameSetVersion_ = 0;
  std::vector<uint32_t> rank_;    // by id; cache::kNoNode for holes
  std::vector<uint32_t> byRank_;  // rank -> id
  std::string names_;
  std::vector<uint32_t> nameOffset_;  // by id, idLimit + 1 entries (holes are empty)
  std::string quoted_;  // kCopySlack zero bytes after the last name
  std::vector<uint32_t> quotedOffset_;
  size_t maxQuoted_ = 0;
  std::string rankQuoted_;  // kCopySlack zero bytes after the last name
  std::vector<uint32_t> rankQuotedOffset_;  // size() + 1 entries
  std::string hostPrefixes_;  // kCopySlack zero bytes after the last prefix
  std::vector<uint32_t> hostPrefixOffset_;
};

}  // namespace fleetsched::engine
