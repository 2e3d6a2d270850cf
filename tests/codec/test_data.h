// Shared helpers for the codec tests: fixture files from FLEETSCHED_TEST_DATA.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace fleetsched::codec::testing {

inline std::string dataPath(const std::string& name) {
  const char* dir = std::getenv("FLEETSCHED_TEST_DATA");
  return std::string(dir ? dir : "tests/data") + "/codec/" + name;
}

inline std::string readData(const std::string& name) {
  std::ifstream in(dataPath(name), std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace fleetsched::codec::testing
