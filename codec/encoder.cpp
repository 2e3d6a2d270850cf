#include "codec/encoder.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <vector>

#include "codec/encoder_internal.h"
#include "codec/json_writer.h"

namespace fleetsched::codec {

namespace {

// Map keys in Go's order: bytewise. The first 16 bytes of each name, loaded big-endian, decide
// almost every comparison with two integer compares; ties fall back to the full names, then
// to the input position so that of duplicate names the last one can win.
struct SortKey {
  uint64_t hi = 0;
  uint64_t lo = 0;
  uint32_t index = 0;
};

template <typename NameOf>
void sortedOrder(size_t n, NameOf nameOf, std::vector<SortKey>& keys) {
  keys.resize(n);
  for (size_t i = 0; i < n; ++i) {
    std::string_view name = nameOf(i);
    keys[i] = {detail::nameSortPrefix(name, 0), detail::nameSortPrefix(name, 8), static_cast<uint32_t>(i)};
  }
  std::sort(keys.begin(), keys.end(), [&](const SortKey& a, const SortKey& b) {
    if (a.hi != b.hi) return a.hi < b.hi;
    if (a.lo != b.lo) return a.lo < b.lo;
    int c = nameOf(a.index).compare(nameOf(b.index));
    if (c != 0) return c < 0;
    return a.index < b.index;
  });
}

// Scratch for the sort; the encoders run on the reactor thread, one call at a time per thread.
thread_local std::vector<SortKey> tlsKeys;

// A failed map repeats a handful of reasons thousands of times: escape each distinct reason
// once per map and copy its bytes after that. Keyed by the view's address and length, which
// cannot change during one encode call.
class ReasonMemo {
 public:
  void write(JsonWriter<Buffer>& w, std::string_view reason) {
    for (size_t i = 0; i < used_; ++i) {
      const Entry& e = entries_[i];
      if (e.data == reason.data() && e.size == reason.size()) {
        w.repeat(e.at, e.length);
        return;
      }
    }
    const size_t at = w.size();
    w.string(reason);
    entries_[next_] = {reason.data(), reason.size(), at, w.size() - at};
    next_ = (next_ + 1) % kEntries;
    if (used_ < kEntries) ++used_;
  }

 private:
  static constexpr size_t kEntries = 8;
  struct Entry {
    const char* data;
    size_t size;
    size_t at;
    size_t length;
  };
  Entry entries_[kEntries] = {};
  size_t used_ = 0;
  size_t next_ = 0;
};

void writeFailedMap(JsonWriter<Buffer>& w, const std::vector<FailedNode>& v) {
  ReasonMemo reasons;
  w.ch('{');
  sortedOrder(v.size(), [&](size_t i) { return v[i].node; }, tlsKeys);
  bool first = true;
  for (size_t k = 0; k < tlsKeys.size(); ++k) {
    const FailedNode& f = v[tlsKeys[k].index];
    if (k + 1 < tlsKeys.size() && v[tlsKeys[k + 1].index].node == f.node) continue;  // a later entry wins
    if (!first) w.ch(',');
    first = false;
    w.string(f.node);
    w.ch(':');
    reasons.write(w, f.reason);
  }
  w.ch('}');
}

size_t estimateFilterSize(const FilterResult& r) {
  size_t n = 128;
  for (auto s : r.nodesRaw) n += s.size() + 1;
  for (const auto& f : r.failedNodes) n += f.node.size() + f.reason.size() + 6;
  for (const auto& f : r.failedAndUnresolvableNodes) n += f.node.size() + f.reason.size() + 6;
  return n;
}

// Scratch of encodeNodeNamesFilter, kept between calls (one reactor per thread).
struct NodeNamesScratch {
  std::vector<uint32_t> codeByRank;   // per rank: its node's verdict code, or the passing one
  std::vector<uint32_t> failedAt[2];  // ranks of the FailedNodes / FailedAndUnresolvable entries
  std::vector<uint32_t> unknownOrder;
  std::string unknownQuoted;  // kCopySlack zero bytes after the last
  std::vector<uint32_t> unknownQuotedOffset;
  // Each code's reason as a JSON string, followed by kCopySlack bytes of padding (offset 0: an
  // empty one, for codes that pass), and where each code's starts.
  std::string reasonsEscaped;
  std::vector<uint32_t> reasonAt, reasonLength;
  std::vector<uint8_t> mapOf;  // per code: 0 none, 1 FailedNodes, 2 FailedAndUnresolvable
};
thread_local NodeNamesScratch tlsNames;

}  // namespace

void encodeFilterResult(const FilterResult& r, Buffer& out) {
  JsonWriter w(out);
  if (!r.error.empty()) {
    w.raw(R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":)");
    w.string(r.error);
    w.ch('}');
    return;
  }
  out.reserve(out.size() + estimateFilterSize(r));
  w.raw(R"({"Nodes":{"metadata":{},"items":[)");
  for (size_t i = 0; i < r.nodesRaw.size(); ++i) {
    if (i != 0) w.ch(',');
    // An input item that was null has no bytes; keep the reply valid JSON.
    w.raw(r.nodesRaw[i].empty() ? std::string_view("null") : r.nodesRaw[i]);
  }
  w.raw(R"(]},"NodeNames":null,)");
  w.key("FailedNodes");
  writeFailedMap(w, r.failedNodes);
  w.ch(',');
  w.key("FailedAndUnresolvableNodes");
  writeFailedMap(w, r.failedAndUnresolvableNodes);
  w.raw(R"(,"Error":"")");
  w.ch('}');
}

template <class Code>
void encodeNodeNamesFilter(const NodeNameTable& table, const NodeNamesVerdicts<Code>& v, Buffer& out) {
  // Names and reasons are copied in fixed-size blocks from padded tables into a buffer kept
  // kCopySlack bytes ahead of the writes; the failed nodes are walked in name order by rank.
  using detail::putSlack;
  NodeNamesScratch& s = tlsNames;
  // One code more than the caller's: `codes` itself, which passes, for the ranks the list lacks.
  const size_t codes = v.reasons.size();
  s.reasonAt.assign(codes + 1, 0);
  s.reasonLength.assign(codes + 1, 0);
  s.mapOf.assign(codes + 1, 0);
  size_t maxReason = 0;
  s.reasonsEscaped.assign(kCopySlack, '\0');
  for (size_t code = 0; code < codes; ++code) {
    const FilterReason& reason = v.reasons[code];
    if (reason.map == FailedMap::None) continue;
    const size_t at = s.reasonsEscaped.size();
    {
      JsonWriter w(s.reasonsEscaped);
      w.string(reason.text);
    }
    s.reasonAt[code] = static_cast<uint32_t>(at);
    s.reasonLength[code] = static_cast<uint32_t>(s.reasonsEscaped.size() - at);
    maxReason = std::max<size_t>(maxReason, s.reasonLength[code]);
    s.reasonsEscaped.append(kCopySlack, '\0');
    s.mapOf[code] = reason.map == FailedMap::Unresolvable ? 2 : 1;
  }

  // Unknown names (rare) are sorted here and merged into FailedNodes, where their name puts
  // them, with their reason in the same padded table (only when there are any).
  const std::span<const std::string_view> unknown = v.unknown;
  s.unknownOrder.resize(unknown.size());
  for (uint32_t k = 0; k < s.unknownOrder.size(); ++k) s.unknownOrder[k] = k;
  std::sort(s.unknownOrder.begin(), s.unknownOrder.end(),
            [&](uint32_t a, uint32_t b) { return unknown[a] < unknown[b]; });
  s.unknownOrder.erase(std::unique(s.unknownOrder.begin(), s.unknownOrder.end(),
                                   [&](uint32_t a, uint32_t b) { return unknown[a] == unknown[b]; }),
                       s.unknownOrder.end());
  s.unknownQuoted.clear();
  s.unknownQuotedOffset.assign(1, 0);
  {
    JsonWriter w(s.unknownQuoted);
    for (uint32_t k : s.unknownOrder) {
      w.string(unknown[k]);
      s.unknownQuotedOffset.push_back(static_cast<uint32_t>(w.size()));
    }
  }
  s.unknownQuoted.append(kCopySlack, '\0');
  auto quotedUnknown = [&](size_t i) {
    return std::string_view(s.unknownQuoted.data() + s.unknownQuotedOffset[i],
                            s.unknownQuotedOffset[i + 1] - s.unknownQuotedOffset[i]);
  };
  const size_t unknownAt = s.reasonsEscaped.size();
  if (!s.unknownOrder.empty()) {
    JsonWriter w(s.reasonsEscaped);
    w.string(v.unknownReason);
  }
  const size_t unknownLength = s.reasonsEscaped.size() - unknownAt;
  s.reasonsEscaped.append(kCopySlack, '\0');
  // Plain pointers for the loops below: their char writes could alias anything read through
  // the scratch's vectors.
  const char* escapedBase = s.reasonsEscaped.data();
  const uint32_t* reasonAt = s.reasonAt.data();
  const uint32_t* reasonLength = s.reasonLength.data();
  const uint8_t* mapOf = s.mapOf.data();
  auto reason = [&](uint32_t code) { return std::string_view(escapedBase + reasonAt[code], reasonLength[code]); };
  const std::string_view unknownEscaped(escapedBase + unknownAt, unknownLength);

  // Each rank's verdict code (the passing `codes` when the list lacks it). A name sent twice has
  // one node and one verdict: either position will do.
  const uint32_t ranks = table.size();
  s.codeByRank.assign(ranks, static_cast<uint32_t>(codes));
  uint32_t* codeByRank = s.codeByRank.data();
  for (size_t i = 0; i < v.ids.size(); ++i) codeByRank[table.rank(v.ids[i])] = v.codes[i];
  // Failed ranks per map, gathered without a branch per node (which fail is data).
  size_t count[2] = {0, 0};
  s.failedAt[0].resize(ranks);
  s.failedAt[1].resize(ranks);
  for (uint32_t r = 0; r < ranks; ++r) {
    const uint8_t map = mapOf[codeByRank[r]];
    s.failedAt[0][count[0]] = r;
    count[0] += map == 1;
    s.failedAt[1][count[1]] = r;
    count[1] += map == 2;
  }

  const size_t maxName = std::max(table.maxQuotedSize(), size_t{2});
  size_t len = out.size();
  auto room = [&](size_t n) -> char* {
    if (out.size() - len < n + kCopySlack)
      out.resizeUninitialized(std::max(len + n + kCopySlack, out.size() + out.size() / 2));
    return out.data() + len;
  };
  auto put = [&](std::string_view text) {  // the fixed parts
    std::memcpy(room(text.size()), text.data(), text.size());
    len += text.size();
  };
  const size_t entry = maxName + maxReason + 2;
  const size_t unknowns = s.unknownOrder.size();
  room(v.passed.size() * (maxName + 1) + (count[0] + count[1]) * entry + s.unknownQuoted.size() +
       unknowns * (unknownEscaped.size() + 2) + 256);

  put(R"({"Nodes":null,"NodeNames":[)");
  char* p = room(v.passed.size() * (maxName + 1));
  for (uint32_t id : v.passed) {
    p = putSlack(p, table.quoted(id));
    *p++ = ',';
  }
  len = static_cast<size_t>(p - out.data());
  if (!v.passed.empty()) --len;  // the last comma
  put("],");

  for (size_t map = 0; map < 2; ++map) {
    put(map == 0 ? std::string_view(R"("FailedNodes":{)") : std::string_view(R"(,"FailedAndUnresolvableNodes":{)"));
    const uint32_t* at = s.failedAt[map].data();
    const size_t n = count[map];
    const size_t mapUnknowns = map == 0 ? unknowns : 0;  // unknown names go to FailedNodes only
    char* q = room(n * entry + mapUnknowns * (maxName + unknownEscaped.size() + 2) + s.unknownQuoted.size());
    size_t comma = 0;  // none before the first entry
    auto write = [&](std::string_view quotedName, std::string_view escaped) {
      *q = ',';
      q += comma;
      comma = 1;
      q = putSlack(q, quotedName);
      *q++ = ':';
      q = putSlack(q, escaped);
    };
    size_t u = 0;
    for (size_t k = 0; k < n; ++k) {
      const uint32_t r = at[k];
      if (u < mapUnknowns) {
        const std::string_view name = table.name(table.idAt(r));
        for (; u < mapUnknowns && unknown[s.unknownOrder[u]] < name; ++u) write(quotedUnknown(u), unknownEscaped);
      }
      write(table.quotedAtRank(r), reason(codeByRank[r]));
    }
    for (; u < mapUnknowns; ++u) write(quotedUnknown(u), unknownEscaped);
    len = static_cast<size_t>(q - out.data());
    put("}");
  }
  put(R"(,"Error":""})");
  out.resizeUninitialized(len);
}

template void encodeNodeNamesFilter(const NodeNameTable&, const NodeNamesVerdicts<uint8_t>&, Buffer&);
template void encodeNodeNamesFilter(const NodeNameTable&, const NodeNamesVerdicts<uint32_t>&, Buffer&);

void encodeHostPriorityList(std::span<const HostPriority> list, Buffer& out) {
  JsonWriter w(out);
  out.reserve(out.size() + 2 + list.size() * 40);
  w.ch('[');
  for (size_t i = 0; i < list.size(); ++i) {
    w.raw(i == 0 ? std::string_view(R"({"Host":)") : std::string_view(R"(,{"Host":)"));
    w.string(list[i].host);
    w.raw(R"(,"Score":)");
    w.int64(list[i].score);
    w.ch('}');
  }
  w.ch(']');
}

void encodeHostScores(const NodeNameTable& table, std::span<const uint32_t> ids, std::span<const int32_t> scores,
                      Buffer& out) {
  // One size up front (a prefix, a comma, up to 11 score bytes and '}' per entry), then plain
  // pointer writes: the reply is ~130 KB at 2,000 scored nodes and scores are 0..10 on the
  // wire. The table's `{"Host":"...","Score":` prefixes (~60 bytes) are copied in one
  // fixed-size block: a memcpy call with their length costs more than the bytes.
  size_t bound = 2 + kCopySlack;
  for (uint32_t id : ids) bound += table.hostScorePrefix(id).size() + 13;
  const size_t start = out.size();
  out.resizeUninitialized(start + bound);
  char* p = out.data() + start;
  *p++ = '[';
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i != 0) *p++ = ',';
    p = detail::putSlack(p, table.hostScorePrefix(ids[i]));
    const int32_t s = scores[i];
    if (s >= 0 && s <= 9) {
      *p++ = static_cast<char>('0' + s);
    } else if (s == 10) {
      *p++ = '1';
      *p++ = '0';
    } else {
      p = std::to_chars(p, p + 11, s).ptr;
    }
    *p++ = '}';
  }
  *p++ = ']';
  out.resizeUninitialized(static_cast<size_t>(p - out.data()));
}

void encodePreemptionResult(std::span<const NodeVictims> victims, Buffer& out) {
  JsonWriter w(out);
  sortedOrder(victims.size(), [&](size_t i) { return victims[i].node; }, tlsKeys);
  w.raw(R"({"NodeNameToMetaVictims":{)");
  bool first = true;
  for (size_t k = 0; k < tlsKeys.size(); ++k) {
    const NodeVictims& v = victims[tlsKeys[k].index];
    if (k + 1 < tlsKeys.size() && victims[tlsKeys[k + 1].index].node == v.node) continue;  // last wins
    if (!first) w.ch(',');
    first = false;
    w.string(v.node);
    w.raw(R"(:{"Pods":[)");
    for (size_t i = 0; i < v.uids.size(); ++i) {
      if (i != 0) w.ch(',');
      w.raw(R"({"UID":)");
      w.string(v.uids[i]);
      w.ch('}');
    }
    w.raw(R"(],"NumPDBViolations":)");
    w.int64(v.numPdbViolations);
    w.ch('}');
  }
  w.raw("}}");
}

void encodeBindingResult(std::string_view error, Buffer& out) {
  JsonWriter w(out);
  w.raw(R"({"Error":)");
  w.string(error);
  w.ch('}');
}

}  // namespace fleetsched::codec
