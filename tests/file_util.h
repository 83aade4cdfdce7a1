// Small file helpers shared by the tests.
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rocesim::test {

// The whole file as bytes ("" when it cannot be opened).
inline std::string read_text_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace rocesim::test
