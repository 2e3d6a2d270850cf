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
//               (kCopySlack bytes readable from its start, too).
//
// refresh(snap) rebuilds only when the snapshot's node set changed (Snapshot::nameSetVersion):
// pod events and reservations publish new snapshots but keep the table. The table owns copies
// of everything, so it stays valid after the snapshot it was built from is released; ids are
// only meaningful for snapshots with the same nameSetVersion(). One table per reading thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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
  std::string_view hostScorePrefix(uint32_t id) const {
    return {hostPrefixes_.data() + hostPrefixOffset_[id], hostPrefixOffset_[id + 1] - hostPrefixOffset_[id]};
  }

 private:
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
