#include "engine/service/node_name_table.h"

#include <algorithm>

#include "codec/encoder.h"
#include "codec/json_writer.h"

namespace fleetsched::engine {

bool NodeNameTable::refresh(const cache::Snapshot& snap) {
  const uint64_t version = snap.nameSetVersion();
  if (built_ && version == nameSetVersion_) return false;
  built_ = true;
  nameSetVersion_ = version;

  const uint32_t limit = snap.idLimit();
  rank_.assign(limit, cache::kNoNode);
  byRank_.clear();
  names_.clear();
  quoted_.clear();
  nameOffset_.assign(limit + 1, 0);
  quotedOffset_.assign(limit + 1, 0);
  {
    codec::JsonWriter w(quoted_);
    for (uint32_t id = 0; id < limit; ++id) {
      nameOffset_[id] = static_cast<uint32_t>(names_.size());
      quotedOffset_[id] = static_cast<uint32_t>(w.size());
      const plugins::NodeInfo* n = snap.node(id);
      if (n == nullptr) continue;
      names_.append(n->name);
      w.string(n->name);
      byRank_.push_back(id);
    }
    nameOffset_[limit] = static_cast<uint32_t>(names_.size());
    quotedOffset_[limit] = static_cast<uint32_t>(w.size());
  }
  quoted_.append(kCopySlack, '\0');
  maxQuoted_ = 0;
  for (uint32_t id = 0; id < limit; ++id) maxQuoted_ = std::max<size_t>(maxQuoted_, quoted(id).size());
  hostPrefixes_.clear();
  hostPrefixOffset_.assign(limit + 1, 0);
  for (uint32_t id = 0; id < limit; ++id) {
    hostPrefixOffset_[id] = static_cast<uint32_t>(hostPrefixes_.size());
    if (snap.node(id) != nullptr) codec::appendHostScorePrefix(quoted(id), hostPrefixes_);
  }
  hostPrefixOffset_[limit] = static_cast<uint32_t>(hostPrefixes_.size());
  hostPrefixes_.append(kCopySlack, '\0');

  // Bytewise order, as Go sorts map keys; the first 16 bytes as two big-endian integers decide
  // nearly every comparison without touching the strings. Names are unique within a node set.
  struct Key {
    uint64_t hi, lo;
    uint32_t id;
  };
  std::vector<Key> keys;
  keys.reserve(byRank_.size());
  for (uint32_t id : byRank_) keys.push_back({codec::nameSortPrefix(name(id), 0), codec::nameSortPrefix(name(id), 8), id});
  std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
    if (a.hi != b.hi) return a.hi < b.hi;
    if (a.lo != b.lo) return a.lo < b.lo;
    return name(a.id) < name(b.id);
  });
  rankQuoted_.clear();
  rankQuotedOffset_.assign(1, 0);
  for (uint32_t r = 0; r < keys.size(); ++r) {
    byRank_[r] = keys[r].id;
    rank_[keys[r].id] = r;
    rankQuoted_.append(quoted(keys[r].id));
    rankQuotedOffset_.push_back(static_cast<uint32_t>(rankQuoted_.size()));
  }
  rankQuoted_.append(kCopySlack, '\0');

  uint32_t capacity = 1;
  while (capacity < 2 * byRank_.size()) capacity <<= 1;
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  for (uint32_t id : byRank_) {
    const auto h = static_cast<uint32_t>(hash(name(id)));
    uint32_t i = h & mask_;
    while (slots_[i].id != cache::kNoNode) i = (i + 1) & mask_;
    slots_[i] = {h, id};
  }
  return true;
}

void NodeNameTable::findAll(std::span<const std::string_view> names, std::span<uint32_t> ids) const {
  // Three stages, kStep names apart: hash a name and prefetch its first slot; read that slot
  // and prefetch the name it points at; probe and compare. Names come in kube-scheduler's
  // order, so the slots and names they touch are scattered over the tables (~350 KB at 5,000
  // nodes), and each probe would otherwise wait for two cache misses in a row. Measured against
  // a plain loop over find(), ABBA, service_bench medians of 3 (2026-12-05): filter 208 -> 196
  // us, pod 331 -> 310 us (BM_NodeNamesFilter/0, BM_NodeNamesPod/0).
  constexpr size_t kStep = 8, kRing = 4 * kStep;
  uint32_t hashes[kRing];
  const size_t n = names.size();
  for (size_t i = 0; i < n + 2 * kStep; ++i) {
    if (i < n) {
      const auto h = static_cast<uint32_t>(hash(names[i]));
      hashes[i % kRing] = h;
      __builtin_prefetch(&slots_[h & mask_]);
    }
    if (i >= kStep && i - kStep < n) {
      const Slot& s = slots_[hashes[(i - kStep) % kRing] & mask_];
      if (s.id != cache::kNoNode) __builtin_prefetch(names_.data() + nameOffset_[s.id]);
    }
    if (i >= 2 * kStep) {
      const size_t j = i - 2 * kStep;
      ids[j] = probe(names[j], hashes[j % kRing]);
    }
  }
}

}  // namespace fleetsched::engine
