// The include rule of docs/architecture.md: a folder of src/ includes only folders below it
// (core < topo, workload < net < cc < stats < config < app), so that the layers form no cycle.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;

TEST(Layers, EveryIncludeGoesDown) {
  // What each layer may include besides itself.
  const std::map<std::string, std::set<std::string>> below = {
      {"core", {}},
      {"topo", {"core"}},
      {"workload", {"core"}},
      {"net", {"core", "topo", "workload"}},
      {"cc", {"core", "topo", "workload", "net"}},
      {"stats", {"core", "topo", "workload", "net", "cc"}},
      {"config", {"core", "topo", "workload", "net", "cc", "stats"}},
      {"app", {"core", "topo", "workload", "net", "cc", "stats", "config"}},
  };
  const fs::path src = fs::path(ROCESIM_TEST_DIR).parent_path() / "src";
  const std::regex include(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const std::string layer = e.path().parent_path().filename().string();
    const auto rule = below.find(layer);
    ASSERT_NE(rule, below.end()) << e.path()
                                 << ": a folder docs/architecture.md does not place; add it there and here";
    ++files;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string to = m[1];
      EXPECT_TRUE(to == layer || rule->second.count(to))
          << fs::relative(e.path(), src.parent_path()).string() << ":" << n << ": " << layer << "/ includes "
          << to << "/, a layer above it (docs/architecture.md, \"Layers\")";
    }
  }
  EXPECT_GT(files, 50);
}

}  // namespace
