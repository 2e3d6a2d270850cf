// Test data for the engine tests: where tests/data is (FLEETSCHED_TEST_DATA, set by meson) and a
// whole-file read.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fleetsched::engine::testdata {

inline std::string dataDir() {
  const char* d = std::getenv("FLEETSCHED_TEST_DATA");
  return d ? d : "tests/data";
}

inline std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace fleetsched::engine::testdata
