// The include rule of docs/architecture.md: a folder of src/ includes only folders below it
// (core < topo, workload < net < cc < stats < config < app), so that the layers form no cycle. No scheme
// includes net/network.h (schemes call CcServices). Every scheme's registry entry is in src/cc/ and listed
// in src/cc/registry.cc. And every document a comment in src/ cites is in the repository's docs/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
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

// A scheme reaches the network only through CcServices (net/cc_services.h, through net/cc_api.h;
// docs/architecture.md, "Where a scheme plugs in"): no file of src/cc/ includes net/network.h.
TEST(Layers, SchemesSeeOnlyCcServices) {
  const fs::path cc = fs::path(ROCESIM_TEST_DIR).parent_path() / "src" / "cc";
  const std::regex network(R"(^\s*#\s*include\s+"net/network\.h")");
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(cc)) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      EXPECT_FALSE(std::regex_search(line, network))
          << "src/cc/" << fs::relative(e.path(), cc).string() << ":" << n
          << ": a scheme includes net/network.h; it calls the network through CcServices (net/cc_services.h)";
  }
  EXPECT_GT(files, 20);
}

// A scheme lives in src/cc/ (docs/architecture.md, "Where a scheme plugs in"): the registry entry a scheme's
// file defines (SchemeEntry <name>_scheme()) is in src/cc/ and listed in src/cc/registry.cc. (That cc/
// reads its keys without config/ is the rule above: cc/ may not include config/.)
TEST(Layers, EverySchemeEntryIsInCcAndInTheRegistry) {
  const fs::path src = fs::path(ROCESIM_TEST_DIR).parent_path() / "src";
  std::stringstream registry;
  registry << std::ifstream(src / "cc" / "registry.cc").rdbuf();
  const std::regex entry(R"(^SchemeEntry ([a-z0-9_]+_scheme)\(\) \{)");
  int entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file() || e.path().extension() != ".cc") continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, entry)) continue;
      ++entries;
      const std::string where = fs::relative(e.path(), src.parent_path()).string() + ":" + std::to_string(n);
      EXPECT_EQ(e.path().parent_path().filename().string(), "cc")
          << where << ": a scheme's entry outside src/cc/";
      EXPECT_NE(registry.str().find(m[1].str() + "(),"), std::string::npos)
          << where << ": " << m[1].str() << " is not listed in src/cc/registry.cc";
    }
  }
  EXPECT_GE(entries, 14);
}

TEST(Layers, CommentsCiteOnlyDocumentsOfTheRepository) {
  const fs::path root = fs::path(ROCESIM_TEST_DIR).parent_path();
  const std::regex doc(R"(([A-Za-z0-9_./-]*[A-Za-z0-9_-]+)\.md\b)");
  // The repository's documents: docs/, data/ (the workloads' sources) and the top level.
  std::set<std::string> have;
  for (const char* dir : {"docs", "data"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir))
      if (e.path().extension() == ".md") have.insert(e.path().filename().string());
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().extension() == ".md") have.insert(e.path().filename().string());
  int cited = 0;
  for (const auto& e : fs::recursive_directory_iterator(root / "src")) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      for (std::sregex_iterator m(line.begin(), line.end(), doc), end; m != end; ++m) {
        const std::string cited_path = (*m)[1].str() + ".md";
        const fs::path name = fs::path(cited_path).filename();
        ++cited;
        // A path (docs/parallel.md, scenarios/icc/README.md) must exist as written, from the repository's
        // top; a bare name must be one of the documents of docs/, data/ or the top.
        if (cited_path.find('/') != std::string::npos) {
          EXPECT_TRUE(cited_path.rfind("..", 0) != 0 && fs::exists(root / cited_path))
              << fs::relative(e.path(), root).string() << ":" << n << " cites " << cited_path
              << ", which is not a path of the repository";
          continue;
        }
        EXPECT_TRUE(have.count(name.string()))
            << fs::relative(e.path(), root).string() << ":" << n << " cites " << (*m)[0]
            << ", which is not in the repository (docs/, data/): its users do not have it";
      }
  }
  EXPECT_GT(cited, 0);
}

// The tutorial quotes the code with file and line numbers ("`src/cc/dctcp.h`, lines 23-34:" then a code
// block): each quote must be those lines as they are now.
TEST(Docs, TutorialExcerptsAreTheCodeAtTheirLines) {
  const fs::path root = fs::path(ROCESIM_TEST_DIR).parent_path();
  auto lines_of = [](const fs::path& p) {
    std::vector<std::string> v;
    std::ifstream in(p);
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  };
  const std::vector<std::string> doc = lines_of(root / "docs" / "tutorial-adding-a-scheme.md");
  const std::regex head(R"(^`([^`]+)`, lines? (\d+)(?:-(\d+))?:\s*$)");
  int quotes = 0;
  for (size_t i = 0; i + 1 < doc.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(doc[i], m, head)) continue;
    size_t j = i + 1;
    while (j < doc.size() && doc[j].empty()) ++j;  // a blank line may stand between
    if (j >= doc.size() || doc[j].rfind("```", 0) != 0) continue;
    ++j;
    const int a = std::stoi(m[2].str()), b = m[3].matched ? std::stoi(m[3].str()) : a;
    const std::vector<std::string> src = lines_of(root / m[1].str());
    std::vector<std::string> block;
    while (j < doc.size() && doc[j].rfind("```", 0) != 0) block.push_back(doc[j++]);
    ++quotes;
    ASSERT_LE(static_cast<size_t>(b), src.size()) << doc[i];
    const std::vector<std::string> want(src.begin() + (a - 1), src.begin() + b);
    EXPECT_EQ(block, want) << "docs/tutorial-adding-a-scheme.md:" << i + 1 << " quotes " << m[1].str()
                           << " lines " << a << "-" << b
                           << ", which now read otherwise: update the quote or its numbers";
  }
  EXPECT_GE(quotes, 10);
}

}  // namespace
