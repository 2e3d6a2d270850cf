#include "codec/quantity.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace fleetsched::codec {

namespace {

__extension__ typedef unsigned __int128 Uint128;

constexpr uint64_t kMaxMagnitude = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Characters apimachinery accepts inside a suffix before an optional exponent sign and digits.
bool isSuffixChar(char c) {
  switch (c) {
    case 'e': case 'E': case 'i': case 'n': case 'u': case 'm':
    case 'k': case 'K': case 'M': case 'G': case 'T': case 'P':
      return true;
    default:
      return false;
  }
}

struct Suffix {
  int exp10 = 0;
  int exp2 = 0;
};

// Interprets a suffix like apimachinery's suffixer: the fixed decimal and binary SI tables
// first, then e<int64> / E<int64> (the exponent then truncated to int32, as Go does).
bool interpretSuffix(std::string_view s, Suffix& out) {
  if (s.empty()) return true;
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n': out.exp10 = -9; return true;
      case 'u': out.exp10 = -6; return true;
      case 'm': out.exp10 = -3; return true;
      case 'k': out.exp10 = 3; return true;
      case 'M': out.exp10 = 6; return true;
      case 'G': out.exp10 = 9; return true;
      case 'T': out.exp10 = 12; return true;
      case 'P': out.exp10 = 15; return true;
      case 'E': out.exp10 = 18; return true;
      default: return false;
    }
  }
  if (s.size() == 2 && s[1] == 'i') {
    switch (s[0]) {
      case 'K': out.exp2 = 10; return true;
      case 'M': out.exp2 = 20; return true;
      case 'G': out.exp2 = 30; return true;
      case 'T': out.exp2 = 40; return true;
      case 'P': out.exp2 = 50; return true;
      case 'E': out.exp2 = 60; return true;
      default: break;
    }
  }
  if (s[0] != 'e' && s[0] != 'E') return false;
  // strconv.ParseInt(s[1:], 10, 64): optional sign, at least one digit, int64 range.
  std::string_view n = s.substr(1);
  bool neg = false;
  if (!n.empty() && (n[0] == '+' || n[0] == '-')) {
    neg = n[0] == '-';
    n.remove_prefix(1);
  }
  if (n.empty()) return false;
  uint64_t mag = 0;
  for (char c : n) {
    if (!isDigit(c)) return false;
    if (mag > (kMaxMagnitude + 1) / 10) return false;
    mag = mag * 10 + static_cast<uint64_t>(c - '0');
    if (mag > kMaxMagnitude + (neg ? 1 : 0)) return false;
  }
  uint64_t bits = neg ? ~mag + 1 : mag;
  out.exp10 = static_cast<int32_t>(static_cast<uint32_t>(bits));
  return true;
}

// ceil(|y| * 10^e) for a decimal digit string y (most significant first, no leading zero).
// Returns false when the result exceeds `limit`.
bool ceilScaledWide(const uint8_t* y, int n, int64_t e, Uint128 limit, Uint128& out) {
  out = 0;
  if (n == 0) return true;
  constexpr int kMaxDigits128 = 38;  // 10^38 < 2^128
  if (e >= 0) {
    if (n + e > kMaxDigits128) return false;
    Uint128 v = 0;
    for (int i = 0; i < n; ++i) v = v * 10 + y[i];
    for (int64_t i = 0; i < e; ++i) v *= 10;
    if (v > limit) return false;
    out = v;
    return true;
  }
  int64_t intLen = n + e;  // digits before the decimal point
  if (intLen > kMaxDigits128) return false;
  Uint128 v = 0;
  int first = 0;
  if (intLen > 0) {
    for (int i = 0; i < intLen; ++i) v = v * 10 + y[i];
    first = static_cast<int>(intLen);
  }
  for (int i = first; i < n; ++i) {
    if (y[i] != 0) {
      v += 1;
      break;
    }
  }
  if (v > limit) return false;
  out = v;
  return true;
}

bool ceilScaled(const uint8_t* y, int n, int64_t e, uint64_t& out) {
  Uint128 v = 0;
  if (!ceilScaledWide(y, n, e, kMaxMagnitude, v)) return false;
  out = static_cast<uint64_t>(v);
  return true;
}

}  // namespace

std::string_view quantityErrorText(QuantityError e) {
  switch (e) {
    case QuantityError::None: return "ok";
    case QuantityError::Empty: return "empty quantity";
    case QuantityError::Syntax: return "invalid quantity";
    case QuantityError::Suffix: return "invalid quantity suffix";
    case QuantityError::TooLong: return "quantity has too many digits";
    case QuantityError::OutOfRange: return "quantity out of range";
  }
  return "invalid quantity";
}

QuantityError Quantity::parse(std::string_view s) {
  digitCount_ = 0;
  exp10_ = 0;
  exp2_ = 0;
  negative_ = false;
  if (s.empty()) return QuantityError::Empty;

  size_t pos = 0;
  const size_t end = s.size();
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  size_t intStart = pos;
  while (pos < end && isDigit(s[pos])) ++pos;
  size_t intEnd = pos;
  size_t fracStart = pos, fracEnd = pos;
  if (pos < end && s[pos] == '.') {
    ++pos;
    fracStart = pos;
    while (pos < end && isDigit(s[pos])) ++pos;
    fracEnd = pos;
  }
  size_t suffixStart = pos;
  while (pos < end && isSuffixChar(s[pos])) ++pos;
  if (pos < end && (s[pos] == '+' || s[pos] == '-')) ++pos;
  while (pos < end && isDigit(s[pos])) ++pos;
  if (pos != end) return QuantityError::Syntax;

  Suffix suffix;
  if (!interpretSuffix(s.substr(suffixStart), suffix)) return QuantityError::Suffix;

  // Significant digits: integer then fraction digits, leading and trailing zeros dropped.
  int64_t exp10 = suffix.exp10 - static_cast<int64_t>(fracEnd - fracStart);
  int count = 0;
  auto take = [&](size_t from, size_t to) -> bool {
    for (size_t i = from; i < to; ++i) {
      if (count == 0 && s[i] == '0') continue;
      if (count == kMaxDigits) return false;
      digits_[count++] = static_cast<char>(s[i] - '0');
    }
    return true;
  };
  if (!take(intStart, intEnd) || !take(fracStart, fracEnd)) {
    digitCount_ = 0;
    return QuantityError::TooLong;
  }
  while (count > 0 && digits_[count - 1] == 0) {
    --count;
    ++exp10;
  }
  digitCount_ = count;
  exp10_ = count == 0 ? 0 : exp10;
  exp2_ = count == 0 ? 0 : suffix.exp2;
  negative_ = count != 0 && negative;
  return QuantityError::None;
}

// y = digits * 2^exp2 as decimal digits; returns the digit count.
static int expandBinary(const char* digits, int count, int exp2, uint8_t* y) {
  int n = count;
  if (exp2 == 0) {
    for (int i = 0; i < n; ++i) y[i] = static_cast<uint8_t>(digits[i]);
    return n;
  }
  // Little-endian work buffer, multiplied by 2^10 per step (exp2 is 10..60).
  uint8_t le[128];
  for (int i = 0; i < n; ++i) le[i] = static_cast<uint8_t>(digits[n - 1 - i]);
  for (int step = 0; step < exp2 / 10; ++step) {
    uint32_t carry = 0;
    for (int i = 0; i < n; ++i) {
      uint32_t v = le[i] * 1024u + carry;
      le[i] = static_cast<uint8_t>(v % 10);
      carry = v / 10;
    }
    while (carry != 0) {
      le[n++] = static_cast<uint8_t>(carry % 10);
      carry /= 10;
    }
  }
  for (int i = 0; i < n; ++i) y[i] = le[n - 1 - i];
  return n;
}

QuantityError Quantity::scaled(int scale, int64_t& out) const {
  out = 0;
  if (digitCount_ == 0) return QuantityError::None;
  uint8_t y[kMaxDigits + 20];
  int n = expandBinary(digits_, digitCount_, exp2_, y);
  // Clamp absurd exponents so the arithmetic below cannot overflow; the outcome is the same.
  int64_t e = std::clamp<int64_t>(exp10_, -1000, 1000);

  uint64_t mag = 0;
  if (exp2_ != 0) {
    // ParseQuantity caps binary-suffixed amounts at 2^63-1 units.
    uint64_t units = 0;
    if (!ceilScaled(y, n, e, units)) {
      if (scale != 0) return QuantityError::OutOfRange;
      out = negative_ ? -static_cast<int64_t>(kMaxMagnitude) : static_cast<int64_t>(kMaxMagnitude);
      return QuantityError::None;
    }
  }
  if (!ceilScaled(y, n, e + scale, mag)) return QuantityError::OutOfRange;
  out = negative_ ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
  return QuantityError::None;
}

QuantityError Quantity::nanoValue(Nano128& out) const {
  out = 0;
  if (digitCount_ == 0) return QuantityError::None;
  uint8_t y[kMaxDigits + 20];
  int n = expandBinary(digits_, digitCount_, exp2_, y);
  int64_t e = std::clamp<int64_t>(exp10_, -1000, 1000);
  constexpr Uint128 kLimit = static_cast<Uint128>(kMaxMagnitude) * kMaxMagnitude;  // ~8.5e37
  Uint128 mag = 0;
  if (exp2_ != 0) {
    uint64_t units = 0;
    if (!ceilScaled(y, n, e, units)) {
      mag = static_cast<Uint128>(kMaxMagnitude) * 1000000000u;  // the binary cap
      out = negative_ ? -static_cast<Nano128>(mag) : static_cast<Nano128>(mag);
      return QuantityError::None;
    }
  }
  if (!ceilScaledWide(y, n, e + 9, kLimit, mag)) return QuantityError::OutOfRange;
  out = negative_ ? -static_cast<Nano128>(mag) : static_cast<Nano128>(mag);
  return QuantityError::None;
}

QuantityError nanoToScaled(Nano128 nano, int scale, int64_t& out) {
  out = 0;
  Uint128 div = 1;
  for (int i = scale; i < 9; ++i) div *= 10;
  bool negative = nano < 0;
  Uint128 mag = negative ? static_cast<Uint128>(-nano) : static_cast<Uint128>(nano);
  Uint128 q = mag / div + (mag % div != 0 ? 1 : 0);
  if (q > kMaxMagnitude) return QuantityError::OutOfRange;
  out = negative ? -static_cast<int64_t>(q) : static_cast<int64_t>(q);
  return QuantityError::None;
}

namespace {

// The shapes Node objects (and most pods) carry: "8", "110", "785476592Ki", "95690m", "64Gi".
// Up to 18 digits, no sign, no fraction, then nothing, a decimal or binary SI suffix, or "m":
// exact in 64 bits. Anything else, and anything that would overflow (where ParseQuantity caps
// or the readers report OutOfRange), returns false for the general parser to decide. A node
// has about a dozen quantities and a full-Nodes request 500 nodes, so this is on the hot path.
bool parsePlainQuantity(std::string_view s, int scale, int64_t& out) {
  const size_t n = s.size();
  size_t i = 0;
  uint64_t v = 0;
  while (i < n && i < 18 && isDigit(s[i])) v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
  if (i == 0 || (i < n && isDigit(s[i]))) return false;
  uint64_t mul = 1;
  bool milli = false;
  const std::string_view suffix(s.data() + i, n - i);
  if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'm': milli = true; break;
      case 'k': mul = 1000ull; break;
      case 'M': mul = 1000000ull; break;
      case 'G': mul = 1000000000ull; break;
      case 'T': mul = 1000000000000ull; break;
      case 'P': mul = 1000000000000000ull; break;
      case 'E': mul = 1000000000000000000ull; break;
      default: return false;
    }
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    switch (suffix[0]) {
      case 'K': mul = 1ull << 10; break;
      case 'M': mul = 1ull << 20; break;
      case 'G': mul = 1ull << 30; break;
      case 'T': mul = 1ull << 40; break;
      case 'P': mul = 1ull << 50; break;
      case 'E': mul = 1ull << 60; break;
      default: return false;
    }
  } else if (!suffix.empty()) {
    return false;
  }
  uint64_t r = 0;
  if (milli) {
    r = scale == 3 ? v : (v + 999) / 1000;  // Value() rounds up
  } else if (__builtin_mul_overflow(v, mul, &r) || (scale == 3 && __builtin_mul_overflow(r, 1000ull, &r))) {
    return false;
  }
  if (r > kMaxMagnitude) return false;
  out = static_cast<int64_t>(r);
  return true;
}

}  // namespace

QuantityError parseQuantityValue(std::string_view s, int64_t& out) {
  if (parsePlainQuantity(s, 0, out)) return QuantityError::None;
  Quantity q;
  QuantityError e = q.parse(s);
  if (e != QuantityError::None) {
    out = 0;
    return e;
  }
  return q.value(out);
}

QuantityError parseQuantityNano(std::string_view s, Nano128& out) {
  Quantity q;
  QuantityError e = q.parse(s);
  if (e != QuantityError::None) {
    out = 0;
    return e;
  }
  return q.nanoValue(out);
}

QuantityError parseQuantityMilli(std::string_view s, int64_t& out) {
  if (parsePlainQuantity(s, 3, out)) return QuantityError::None;
  Quantity q;
  QuantityError e = q.parse(s);
  if (e != QuantityError::None) {
    out = 0;
    return e;
  }
  return q.milliValue(out);
}

}  // namespace fleetsched::codec
