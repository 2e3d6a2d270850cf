// Where the tests find the public openb trace: FLEETSCHED_OPENB_DIR, else ../shared/data/openb
// beside the source tree (FLEETSCHED_SOURCE_ROOT). Tests that need it skip when it is absent.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fleetsched::replay::testing {

inline std::string openbDir() {
  if (const char* env = std::getenv("FLEETSCHED_OPENB_DIR")) return env;
  const char* root = std::getenv("FLEETSCHED_SOURCE_ROOT");
  return (std::filesystem::path(root != nullptr ? root : ".") / ".." / "shared" / "data" / "openb").string();
}

inline bool haveOpenb() { return std::filesystem::exists(std::filesystem::path(openbDir()) / "openb_node_list_gpu_node.csv"); }

}  // namespace fleetsched::replay::testing
