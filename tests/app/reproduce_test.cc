// `rocesim reproduce` (tools/reproduce.py): every paper's small test sweep at quick scale gives every claim
// that reads it a number and a verdict; REPRODUCTION.md lists every claim of every paper; bad manifests and
// unknown papers are input errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

#include "mpi_util.h"

namespace {

const std::string kBinary = ROCESIM_BINARY;
const fs::path kManifests = fs::path(ROCESIM_TEST_DIR) / ".." / "reproduce";

struct Out {
  int code = -1;
  std::string text;  // stdout and stderr
};

Out sh(const std::string& cmd) {
  Out o;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) return o;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) o.text.append(buf, n);
  const int st = pclose(f);
  o.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool have_matplotlib() {
  return std::system("/usr/bin/python3 -c 'import matplotlib, numpy' >/dev/null 2>&1") == 0;
}

struct Tmp {
  fs::path path = fs::temp_directory_path() / ("rocesim_reproduce_test_" + std::to_string(getpid()));
  Tmp() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Tmp() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST(Reproduce, QuickTestSweepOfEveryPaperGivesEveryItsClaimANumber) {
  if (!have_matplotlib()) GTEST_SKIP() << "/usr/bin/python3 with matplotlib is not installed";
  Tmp tmp;
  const fs::path out = tmp.path / "out", docs = tmp.path / "docs";
  const Out r = sh(kBinary + " reproduce all --scale quick --only test -j 2 -q -o '" + out.string() +
                   "' --docs '" + docs.string() + "'");
  ASSERT_EQ(r.code, 0) << r.text;
  EXPECT_NE(r.text.find((out / "report.html").string()), std::string::npos) << r.text;
  const std::string md = slurp(docs / "REPRODUCTION.md");
  const std::string page = slurp(out / "report.html");
  size_t papers = 0, numbered = 0;
  for (const auto& e : fs::directory_iterator(kManifests)) {
    const fs::path m = e.path();
    if (m.extension() != ".toml") continue;
    ++papers;
    const toml::table t = toml::parse_file(m.string());
    const std::string key = *t["paper"]["key"].value<std::string>();
    std::set<std::string> test_sweeps;
    for (const auto& s : *t["sweep"].as_array())
      if (s.as_table()->get("test") && *(*s.as_table())["test"].value<bool>())
        test_sweeps.insert(*(*s.as_table())["name"].value<std::string>());
    ASSERT_EQ(test_sweeps.size(), 1u) << m;
    const nlohmann::json claims = nlohmann::json::parse(slurp(out / key / "claims.json"))["claims"];
    size_t on_test = 0;
    for (const auto& c : *t["claim"].as_array()) {
      const auto& ct = *c.as_table();
      const std::string id = *ct["id"].value<std::string>();
      EXPECT_NE(md.find("| " + id + " |"), std::string::npos)
          << key << " claim " << id << " not in REPRODUCTION.md";
      bool only_test = true;
      for (const auto& s : *ct["sweeps"].as_array())
        only_test &= test_sweeps.count(*s.value<std::string>()) > 0;
      ASSERT_TRUE(claims.contains(id)) << key << " " << id;
      const std::string verdict = claims[id]["verdict"];
      if (only_test) {
        ++on_test;
        EXPECT_TRUE(verdict == "agree" || verdict == "partly" || verdict == "disagree")
            << key << " claim " << id << ": " << claims[id].dump();
        EXPECT_FALSE(claims[id]["shown"].get<std::string>().empty()) << key << " " << id;
        EXPECT_NE(page.find("<tr><td>" + id + "</td>"), std::string::npos) << key << " " << id;
        ++numbered;
      } else {
        EXPECT_EQ(verdict, "not run") << key << " " << id;
      }
    }
    EXPECT_GE(on_test, 1u) << key << ": no claim reads the test sweep";
    EXPECT_TRUE(fs::exists(docs / "reproduction" / (key + ".quick.json"))) << key;
  }
  EXPECT_GE(papers, 3u);
  EXPECT_GE(numbered, papers);
}

TEST(Reproduce, UnknownPaperAndBadManifestAreInputErrors) {
  Tmp tmp;
  const Out unknown = sh(kBinary + " reproduce nosuchpaper --no-run -o '" + (tmp.path / "o").string() +
                         "' --docs '" + (tmp.path / "d").string() + "'");
  EXPECT_EQ(unknown.code, 2) << unknown.text;
  EXPECT_NE(unknown.text.find("unknown paper(s) nosuchpaper"), std::string::npos) << unknown.text;
  EXPECT_FALSE(fs::exists(tmp.path / "d" / "REPRODUCTION.md"));

  // A manifest whose claim reads a sweep it does not define.
  const fs::path man = tmp.path / "manifests";
  fs::create_directories(man);
  std::ofstream(man / "p.toml") << "[paper]\nkey = \"p\"\norder = 0\ntitle = \"P\"\nseed = \"x.txt\"\n"
                                   "[[sweep]]\nname = \"a\"\nscenario = \"a.toml\"\ngrid = [\"seed=1\"]\n"
                                   "test = true\n[[claim]]\nid = \"C1\"\nsweeps = [\"b\"]\nclaim = \"c\"\n"
                                   "paper = \"p\"\nvalues = { x = \"1\" }\nshow = \"{x}\"\nagree = \"x\"\n";
  const Out bad = sh("/usr/bin/python3 " + std::string(ROCESIM_TEST_DIR) +
                     "/../tools/reproduce.py --manifests '" + man.string() + "' --no-run p");
  EXPECT_EQ(bad.code, 2) << bad.text;
  EXPECT_NE(bad.text.find("p.toml [[claim]] #1: unknown sweep 'b'"), std::string::npos) << bad.text;
}

// `reproduce --mpi LAUNCHER` runs each sweep as `LAUNCHER rocesim sweep ... --mpi`: the same claims as local
// sweeps (3 ranks, oversubscribed on this machine).
TEST(Reproduce, MpiSweepsGiveTheSameClaims) {
  if (!have_matplotlib()) GTEST_SKIP() << "/usr/bin/python3 with matplotlib is not installed";
  if (const std::string why = rocesim::test::mpi_missing(); !why.empty()) GTEST_SKIP() << why;
  Tmp tmp;
  const std::string common = " reproduce icc --only test -q --docs '" + (tmp.path / "docs").string() + "'";
  const Out local = sh(kBinary + common + " -j 2 -o '" + (tmp.path / "local").string() + "'");
  ASSERT_EQ(local.code, 0) << local.text;
  const std::string launcher = rocesim::test::mpirun_command(3);
  const Out mpi = sh(kBinary + common + " --mpi '" + launcher + "' -o '" + (tmp.path / "mpi").string() + "'");
  ASSERT_EQ(mpi.code, 0) << mpi.text;
  const auto claims = [&](const char* dir) {
    return nlohmann::json::parse(slurp(tmp.path / dir / "icc" / "claims.json"))["claims"];
  };
  EXPECT_EQ(claims("mpi"), claims("local"));
  EXPECT_FALSE(claims("mpi").empty());
}
