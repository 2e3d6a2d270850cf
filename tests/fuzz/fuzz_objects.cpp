// The object decoders: list responses (engine/ingest's initial list, the nodes and pods files,
// the audit) and single objects (capi's pod and node updates), each input read by all four.
#include <cstddef>
#include <cstdint>

#include "codec/decoder.h"
#include "tests/fuzz/fuzz_input.h"

using namespace fleetsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static codec::Decoder decoder;
  static codec::NodeList nodes;
  static codec::PodList pods;
  static codec::Node node;
  static codec::Pod pod;
  std::string_view in = fuzz::padded(data, size);
  auto check = [&](bool ok) {
    if (!ok && decoder.errorMessage().empty()) __builtin_trap();
  };
  check(decoder.decodeNodeList(in, nodes));
  check(decoder.decodePodList(in, pods));
  check(decoder.decodeNode(in, node));
  check(decoder.decodePod(in, pod));
  return 0;
}
