// plugins/config: the profile YAML (FleetschedConfiguration). Arbitrary text either loads a
// Config with at least one profile, every profile findable by its name, or is refused with one
// line naming the problem (serve prints it as is).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "plugins/config.h"

using namespace fleetsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view yaml(reinterpret_cast<const char*>(data), size);
  std::string error;
  std::optional<plugins::Config> c = plugins::loadConfig(yaml, error);
  if (!c) {
    if (error.empty() || error.find('\n') != std::string::npos) __builtin_trap();
    return 0;
  }
  if (c->profiles().empty()) __builtin_trap();
  for (const plugins::Profile& p : c->profiles()) {
    if (c->find(p.name()) == nullptr) __builtin_trap();
  }
  return 0;
}
