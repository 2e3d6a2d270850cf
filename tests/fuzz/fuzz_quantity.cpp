// codec/quantity: ParseQuantity's grammar over arbitrary bytes. A parsed quantity must read out
// consistently: whole units, milli-units and nano-units are the same amount rounded up away
// from zero, so wherever two readings fit they agree (Value = ceil(nano / 10^9), MilliValue =
// ceil(nano / 10^6)), and the one-shot helpers give what the parse-then-read path gives.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "codec/quantity.h"

using namespace fleetsched::codec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  Quantity q;
  const QuantityError e = q.parse(s);
  int64_t value = 0, milli = 0;
  Nano128 nano = 0;
  if (e != QuantityError::None) {
    if (!q.isZero() || quantityErrorText(e).empty()) __builtin_trap();
    if (parseQuantityMilli(s, milli) != e || parseQuantityValue(s, value) != e) __builtin_trap();
    return 0;
  }
  const QuantityError ev = q.value(value), em = q.milliValue(milli), en = q.nanoValue(nano);
  int64_t v2 = 0, m2 = 0;
  Nano128 n2 = 0;
  if (parseQuantityValue(s, v2) != ev || parseQuantityMilli(s, m2) != em || parseQuantityNano(s, n2) != en) {
    __builtin_trap();
  }
  if ((ev == QuantityError::None && v2 != value) || (em == QuantityError::None && m2 != milli) ||
      (en == QuantityError::None && n2 != nano)) {
    __builtin_trap();
  }
  if (en == QuantityError::None) {
    int64_t fromNano = 0;
    if (nanoToScaled(nano, 3, fromNano) == QuantityError::None && (em != QuantityError::None || fromNano != milli)) {
      __builtin_trap();
    }
    if (nanoToScaled(nano, 0, fromNano) == QuantityError::None && (ev != QuantityError::None || fromNano != value)) {
      __builtin_trap();
    }
    if (q.isZero() != (nano == 0)) __builtin_trap();
  }
  if (q.negative() && ev == QuantityError::None && value > 0) __builtin_trap();
  return 0;
}
