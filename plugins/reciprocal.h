// Reciprocal: floor(n / d) for any 32-bit n by one multiply, after Lemire, Kaser and Kurz,
// "Faster remainder by direct computation" (2019), fastdiv_u32. A 32-bit division costs several
// times as much; scorers that divide every node's value by a divisor fixed for the call (the
// largest memory, the weight sum, a GPU count's capacity) use this instead.
#pragma once

#include <cstdint>

namespace fleetsched::plugins {

class Reciprocal {
 public:
  constexpr Reciprocal() = default;  // divides by 1
  constexpr explicit Reciprocal(uint32_t d) : m_(d > 1 ? UINT64_MAX / d + 1 : 0), one_(d <= 1) {}
  // floor(n / d); n itself when d is 1 (or 0, which callers rule out).
  uint32_t divide(uint32_t n) const {
    __extension__ typedef unsigned __int128 U128;
    return one_ ? n : static_cast<uint32_t>((U128{m_} * n) >> 64);
  }

 private:
  uint64_t m_ = 0;  // ceil(2^64 / d)
  bool one_ = true;
};

}  // namespace fleetsched::plugins
