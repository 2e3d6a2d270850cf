// What the reply encoders (encoder.cpp) and the node-name table (node_name_table.cpp) share;
// not part of codec's interface.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "codec/node_name_table.h"

namespace fleetsched::codec::detail {

// Bytes [from, from + 8) of `s` as a big-endian integer, zero-padded past the end: comparing
// the prefixes at 0 and 8 orders names as Go orders map keys (bytewise) in almost every case,
// with the full names as the tie-break.
inline uint64_t nameSortPrefix(std::string_view s, size_t from) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) {
    v <<= 8;
    if (from + i < s.size()) v |= static_cast<uint8_t>(s[from + i]);
  }
  return v;
}

// Appends `s` at `p`: one fixed-size copy when it is short (kCopySlack bytes are readable from
// s.data() and writable at p), else a plain one. Names and reasons are ~20-60 bytes: a call to
// memcpy with their length costs more than the bytes.
inline char* putSlack(char* p, std::string_view s) {
  if (s.size() <= kCopySlack) {
    std::memcpy(p, s.data(), kCopySlack);
  } else {
    std::memcpy(p, s.data(), s.size());
  }
  return p + s.size();
}

}  // namespace fleetsched::codec::detail
