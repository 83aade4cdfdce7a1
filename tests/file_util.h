// Small file helpers shared by the tests.
#pragma once
#include <filesystem>
#include <string>

#include "core/text.h"

namespace rocesim::test {

// The whole file as bytes ("" when it cannot be opened).
inline std::string read_text_file(const std::filesystem::path& p) { return read_text(p).value_or(""); }

}  // namespace rocesim::test
