// The scenario fuzzer's corpus (fuzz/scenarios/*.toml; fuzz/README.md): every scenario `make fuzz-scenarios`
// found failing, kept once the bug it found was fixed. Each must now pass every invariant of
// tests/app/run_invariants.h, as the fuzzer judged it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "app/run_invariants.h"
#include "config/scenario.h"

using namespace rocesim;
namespace fs = std::filesystem;

namespace {

TEST(ScenarioCorpus, EveryFileHoldsTheInvariants) {
  const fs::path dir = fs::path(ROCESIM_TEST_DIR).parent_path() / "fuzz" / "scenarios";
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".toml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) GTEST_SKIP() << "no scenario in " << dir.string();
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.filename().string());
    const Scenario s = load_scenario(f.string());
    const test::CheckedRun r = test::run_checked(s, test::invariant_options_for(s));
    EXPECT_FALSE(r.refused) << f.filename().string() << ": refused: " << r.error;
    EXPECT_TRUE(r.violations.empty()) << f.filename().string() << ":\n" << r.report();
    std::printf("%s: %s (%.2f s)\n", f.filename().string().c_str(), r.ok() ? "ok" : "FAILED", r.wall_seconds);
  }
}

}  // namespace
