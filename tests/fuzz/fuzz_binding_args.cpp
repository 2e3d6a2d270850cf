// codec::Decoder::decodeBindingArgs, the bind request.
#include <cstddef>
#include <cstdint>

#include "codec/decoder.h"
#include "tests/fuzz/fuzz_input.h"

using namespace fleetsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static codec::Decoder decoder;
  static codec::BindingArgs args;
  if (!decoder.decodeBindingArgs(fuzz::padded(data, size), args) && decoder.errorMessage().empty()) __builtin_trap();
  return 0;
}
