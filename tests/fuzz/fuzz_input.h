// What every fuzz target shares: the input copied into a buffer followed by the padding the
// decoders read past a document's end (codec::kDecodePadding, zero bytes), as the reactor's body
// buffer and PaddedBuffer provide it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "codec/decoder.h"

namespace fleetsched::fuzz {

// Reused across runs: a target's steady state allocates nothing here.
inline std::string_view padded(const uint8_t* data, size_t size) {
  static std::string buffer;
  buffer.assign(reinterpret_cast<const char*>(data), size);
  buffer.append(codec::kDecodePadding, '\0');
  return {buffer.data(), size};
}

}  // namespace fleetsched::fuzz
