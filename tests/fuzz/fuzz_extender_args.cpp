// codec::Decoder::decodeExtenderArgs, the filter and prioritize request, in both payload modes
// (NodeNames, and full Nodes whose objects are decoded into nodes): each input is decoded twice
// by a Decoder that keeps its node memo across inputs, so the second pass takes the memo's copy
// path and must give the same result as the first.
#include <cstddef>
#include <cstdint>

#include "codec/decoder.h"
#include "tests/fuzz/fuzz_input.h"

using namespace fleetsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Small, so the memo's eviction runs too; the service's Decoder has the 64 MiB default.
  static codec::Decoder decoder(1u << 20);
  static codec::ExtenderArgs args;
  std::string_view in = fuzz::padded(data, size);
  const bool ok = decoder.decodeExtenderArgs(in, args);
  if (!ok && decoder.errorMessage().empty()) __builtin_trap();
  const size_t nodes = args.nodes.size(), names = args.nodeNames.size();
  const auto mode = args.mode();
  const bool ok2 = decoder.decodeExtenderArgs(in, args);
  if (ok2 != ok) __builtin_trap();
  if (ok && (args.nodes.size() != nodes || args.nodeNames.size() != names || args.mode() != mode)) __builtin_trap();
  return 0;
}
