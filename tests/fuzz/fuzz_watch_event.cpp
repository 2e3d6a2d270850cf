// codec::Decoder::decodeWatchEvent, one line of a watch stream (engine/ingest), read as an event
// of a watch on pods and of a watch on nodes.
#include <cstddef>
#include <cstdint>

#include "codec/decoder.h"
#include "tests/fuzz/fuzz_input.h"

using namespace fleetsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static codec::Decoder decoder;
  static codec::WatchEvent event;
  std::string_view in = fuzz::padded(data, size);
  for (codec::ObjectKind kind : {codec::ObjectKind::Pod, codec::ObjectKind::Node}) {
    if (!decoder.decodeWatchEvent(in, kind, event) && decoder.errorMessage().empty()) __builtin_trap();
  }
  return 0;
}
