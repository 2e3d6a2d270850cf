// NodeNameTable: what NodeNames-mode replies need to know about node names, computed once per
// node set instead of once per request. Nodes are numbered by the caller (the cache's node ids:
// dense, with holes); the table owns copies of everything it was built from.
//
//   rank(id)    the position of the node's name in bytewise order (Go's order of map keys),
//               so a failed-nodes map is written in order by walking ranks: no string sort;
//   quoted(id)  the name as a JSON string, quoted and escaped exactly as JsonWriter::string
//               writes it, so replies copy it instead of scanning it (the encoders copy it in
//               fixed-size blocks: kCopySlack bytes are readable from its start);
//               quotedAtRank(rank) the same, laid out in rank order for walks by rank;
//   name(id)    the name itself;
//   hostScorePrefix(id)  `{"Host":<quoted>,"Score":`, a prioritize reply entry up to its score;
//   find(name)  the id of the node called `name`, or kNoId: NodeNames requests resolve every
//               name through it. The cache's own index checks a probe's name in the node's
//               record, one or two cache misses per name; this one checks it in the table's
//               contiguous copy of the names.
//
// build() is called once per node set, tagged with the caller's number for that set
// (cache::Snapshot::nameSetVersion); describes(tag) says whether a rebuild is due. Pod events and
// reservations publish new snapshots but keep the node set, so the table. One table per reading
// thread; the reply encoders that read it are in codec/encoder.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <span>
#include <string_view>
#include <vector>

namespace fleetsched::codec {

// Bytes the reply encoders may read from the start of each pre-encoded string they copy
// (padding after the last one): they then copy short strings in one fixed-size block.
inline constexpr size_t kCopySlack = 64;

class NodeNameTable {
 public:
  // find()'s answer for a name the table lacks (the same value as cache::kNoNode).
  static constexpr uint32_t kNoId = UINT32_MAX;

  // Makes the table describe the nodes `ids` (ascending, each below idLimit) called `names`
  // (same size, unique), the node set the caller numbers `tag`.
  void build(uint64_t tag, uint32_t idLimit, std::span<const uint32_t> ids, std::span<const std::string_view> names);
  // Whether the table was built for the node set numbered `tag`.
  bool describes(uint64_t tag) const { return built_ && tag == tag_; }

  // Live nodes; ranks run 0..size()-1.
  uint32_t size() const { return static_cast<uint32_t>(byRank_.size()); }
  // For an id the table was built with.
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
  // find() runs for every name of every NodeNames request, so it hashes and compares 8 bytes at
  // a time, inline, instead of calling std::hash (_Hash_bytes) and memcmp: faster on a 5,000-node
  // filter in kube-scheduler's order (service_bench BM_NodeNamesFilter/0; the numbers are in
  // bench/results/2026-12-05-node-name-table.md).
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
      if (s.id == kNoId) return kNoId;
      if (s.hash == h && sameBytes(this->name(s.id), name)) return s.id;
    }
  }

  struct Slot {
    uint32_t hash = 0;
    uint32_t id = kNoId;  // kNoId: empty
  };
  std::vector<Slot> slots_ = std::vector<Slot>(1);  // a power of two, at most half full
  uint32_t mask_ = 0;
  bool built_ = false;
  uint64_t tag_ = 0;
  std::vector<uint32_t> rank_;    // by id; kNoId for holes
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

}  // namespace fleetsched::codec
