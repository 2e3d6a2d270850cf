// Kubernetes resource quantities ("500m", "80Gi", "1e3"), parsed with the grammar of
// apimachinery's ParseQuantity:
//
//   <quantity> ::= <sign>? <digits>? ( "." <digits>? )? <suffix>
//   <suffix>   ::= "" | n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) <sign>? <digits>
//
// and read out like Quantity.Value() / Quantity.MilliValue(): rounded up, away from zero, to
// a whole unit or milli-unit. Where Go silently wraps (results beyond int64), these functions
// report QuantityError::OutOfRange instead; binary-suffixed amounts above 2^63-1 are capped to
// it first, as ParseQuantity does. Pure functions, no allocation.
#pragma once

#include <cstdint>
#include <string_view>

namespace fleetsched::codec {

// Exact sums of quantities (kube-scheduler adds Quantity values before rounding) need more
// than 64 bits: 1Ti is 1.1e21 nano-units.
__extension__ typedef __int128 Nano128;

enum class QuantityError : uint8_t { None, Empty, Syntax, Suffix, TooLong, OutOfRange };

std::string_view quantityErrorText(QuantityError e);

class Quantity {
 public:
  // Parses `s`. On failure returns the reason and leaves the quantity zero.
  QuantityError parse(std::string_view s);

  // ceil(q) and ceil(q * 1000), rounded away from zero; OutOfRange when it does not fit.
  QuantityError value(int64_t& out) const { return scaled(0, out); }
  QuantityError milliValue(int64_t& out) const { return scaled(3, out); }
  // The amount in nano-units, rounded up away from zero as ParseQuantity stores it; OutOfRange
  // beyond 10^38 nano-units.
  QuantityError nanoValue(Nano128& out) const;

  bool negative() const { return negative_; }
  bool isZero() const { return digitCount_ == 0; }

 private:
  QuantityError scaled(int scale, int64_t& out) const;

  // The amount is (-1)^negative_ * digits_ * 10^exp10_ * 2^exp2_, digits_ without leading or
  // trailing zeros. A quantity longer than this many significant digits is rejected (Go accepts
  // it; no real manifest has one).
  static constexpr int kMaxDigits = 96;
  char digits_[kMaxDigits];
  int digitCount_ = 0;
  int64_t exp10_ = 0;
  int exp2_ = 0;
  bool negative_ = false;
};

// One-shot helpers for decoders: parse and read out in one call.
QuantityError parseQuantityValue(std::string_view s, int64_t& out);
QuantityError parseQuantityMilli(std::string_view s, int64_t& out);
QuantityError parseQuantityNano(std::string_view s, Nano128& out);

// ceil(nano / 10^(9 - scale)) away from zero, as Value() (scale 0) and MilliValue() (scale 3)
// read a summed quantity; OutOfRange when it does not fit an int64.
QuantityError nanoToScaled(Nano128 nano, int scale, int64_t& out);

}  // namespace fleetsched::codec
