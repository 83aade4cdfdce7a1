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

#include "file_util.h"
#include "mpi_util.h"

using rocesim::test::read_text_file;

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

// Under ROCESIM_SANITIZED (the ASan + UBSan build of `make test`) the tests that drive tools/reproduce.py
// over whole sweeps are left to the Release run: there they test the Python tool; the sanitized binary's
// sweeps (rocesim sweep, over threads and MPI ranks) are the SweepRun.* and Fingerprints.* tests' under the
// sanitizers. They took 95 s of the sanitizer run's CPU time (of 765 s), in CI's 30 minutes.
constexpr const char* kPythonToolUnderSanitizers =
    "ROCESIM_SANITIZED: tools/reproduce.py's sweeps; the Release run has them";

}  // namespace

TEST(Reproduce, QuickTestSweepOfEveryPaperGivesEveryItsClaimANumber) {
  if (std::getenv("ROCESIM_SANITIZED")) GTEST_SKIP() << kPythonToolUnderSanitizers;
  if (!have_matplotlib()) GTEST_SKIP() << "/usr/bin/python3 with matplotlib is not installed";
  Tmp tmp;
  const fs::path out = tmp.path / "out", docs = tmp.path / "docs";
  const Out r = sh(kBinary + " reproduce all --scale quick --only test -j 2 -q -o '" + out.string() +
                   "' --docs '" + docs.string() + "'");
  ASSERT_EQ(r.code, 0) << r.text;
  EXPECT_NE(r.text.find((out / "report.html").string()), std::string::npos) << r.text;
  const std::string md = read_text_file(docs / "REPRODUCTION.md");
  const std::string page = read_text_file(out / "report.html");
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
    const nlohmann::json claims = nlohmann::json::parse(read_text_file(out / key / "claims.json"))["claims"];
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
  std::ofstream(man / "p.toml")
      << "[paper]\nkey = \"p\"\norder = 0\ntitle = \"P\"\nseed = \"x.txt\"\n"
         "[[sweep]]\nname = \"a\"\nscenario = \"a.toml\"\ngrid = [\"scheme=dcqcn\"]\n"
         "test = true\n[[claim]]\nid = \"C1\"\nsweeps = [\"b\"]\nclaim = \"c\"\n"
         "paper = \"p\"\nvalues = { x = \"1\" }\nshow = \"{x}\"\nagree = \"x\"\n";
  const Out bad = sh("/usr/bin/python3 " + std::string(ROCESIM_TEST_DIR) +
                     "/../tools/reproduce.py --manifests '" + man.string() + "' --no-run p");
  EXPECT_EQ(bad.code, 2) << bad.text;
  EXPECT_NE(bad.text.find("p.toml [[claim]] #1: unknown sweep 'b'"), std::string::npos) << bad.text;
}

// --seeds N runs the claim's sweeps over seeds 1..N: each claim has one value per seed, the mean and the 95 %
// interval; each run directory records its seed; --claim runs only the sweeps that claim reads, and the
// command that does so is printed beside the claim.
TEST(Reproduce, SeedsGiveIntervalsAndOneClaimReRunsAlone) {
  if (std::getenv("ROCESIM_SANITIZED")) GTEST_SKIP() << kPythonToolUnderSanitizers;
  if (!have_matplotlib()) GTEST_SKIP() << "/usr/bin/python3 with matplotlib is not installed";
  Tmp tmp;
  const fs::path out = tmp.path / "out", docs = tmp.path / "docs";
  const Out r = sh(kBinary + " reproduce tcd --claim T2 --claim T3 --seeds 3 -j 2 -o '" + out.string() +
                   "' --docs '" + docs.string() + "'");
  ASSERT_EQ(r.code, 0) << r.text;
  EXPECT_NE(r.text.find("  T2 "), std::string::npos) << r.text;  // the claims measured are printed
  EXPECT_EQ(r.text.find("  T1 "), std::string::npos) << r.text;
  // Only T2's and T3's sweep ran.
  EXPECT_TRUE(fs::exists(out / "tcd" / "victim_40g" / "results.csv"));
  EXPECT_FALSE(fs::exists(out / "tcd" / "max_ton"));
  EXPECT_FALSE(fs::exists(out / "tcd" / "cbfc"));
  const nlohmann::json claims = nlohmann::json::parse(read_text_file(out / "tcd" / "claims.json"))["claims"];
  EXPECT_FALSE(claims.contains("T1"));
  for (const char* id : {"T2", "T3"}) {
    const auto& c = claims[id];
    EXPECT_EQ(c["seeds"], nlohmann::json::array({1, 2, 3})) << c.dump();
    EXPECT_EQ(c["command"], std::string("rocesim reproduce tcd --scale quick --seeds 3 --claim ") + id);
    EXPECT_EQ(c["seed_verdicts"].size(), 3u);
    const std::string verdict = c["verdict"];
    EXPECT_TRUE(verdict == "agree" || verdict == "partly" || verdict == "disagree" ||
                verdict == "inconclusive")
        << c.dump();
    for (const auto& [name, per_seed] : c["per_seed"].items()) {
      ASSERT_EQ(per_seed.size(), 3u) << name;
      const double mean =
          (per_seed[0].get<double>() + per_seed[1].get<double>() + per_seed[2].get<double>()) / 3;
      EXPECT_NEAR(c["values"][name].get<double>(), mean, 1e-9 * (1 + std::abs(mean))) << name;
      EXPECT_GE(c["ci"][name].get<double>(), 0.0) << name;
    }
  }
  // The victim's CE-mark count differs between seeds, so T2 shows an interval.
  EXPECT_NE(claims["T2"]["shown"].get<std::string>().find("\u00b1"), std::string::npos)
      << claims["T2"].dump();
  // Each run directory records its seed.
  for (int seed = 1; seed <= 3; ++seed) {
    const fs::path run = out / "tcd" / "victim_40g" / ("scheme=dcqcn,seed=" + std::to_string(seed));
    const toml::table t = toml::parse_file((run / "scenario.resolved.toml").string());
    EXPECT_EQ(t["seed"].value<int64_t>(), seed) << run;
  }
  const std::string md = read_text_file(docs / "REPRODUCTION.md");
  EXPECT_NE(md.find("`rocesim reproduce tcd --scale quick --seeds 3 --claim T2`"), std::string::npos) << md;
  EXPECT_NE(md.find("(3 seeds)"), std::string::npos);
  const nlohmann::json stored =
      nlohmann::json::parse(read_text_file(docs / "reproduction" / "tcd.quick.json"));
  EXPECT_EQ(stored["claims"]["T2"]["per_seed"], claims["T2"]["per_seed"]);
  EXPECT_FALSE(stored["claims"].contains("T1"));

  const Out unknown = sh(kBinary + " reproduce tcd --claim T9 --no-run -o '" + out.string() + "' --docs '" +
                         docs.string() + "'");
  EXPECT_EQ(unknown.code, 2) << unknown.text;
  EXPECT_NE(unknown.text.find("unknown claim(s) T9"), std::string::npos) << unknown.text;
}

// --sensitivity runs a claim's sweeps as they are and once per alternative setting, and tabulates the claim.
TEST(Reproduce, SensitivityRunsEachAlternativeSetting) {
  if (std::getenv("ROCESIM_SANITIZED")) GTEST_SKIP() << kPythonToolUnderSanitizers;
  if (!have_matplotlib()) GTEST_SKIP() << "/usr/bin/python3 with matplotlib is not installed";
  Tmp tmp;
  const fs::path man = tmp.path / "manifests";
  fs::create_directories(man);
  // tcd's manifest with a sensitivity entry for T1 (max T_on depends on the MTU, so 2000 B moves it).
  std::ofstream(man / "tcd.toml") << read_text_file(kManifests / "tcd.toml")
                                  << "\n[[sensitivity]]\nclaim = \"T1\"\nvary = [\"nic.mtu_bytes=2000\"]\n"
                                     "seeds = 2\n";
  const Out r = sh("/usr/bin/python3 " + std::string(ROCESIM_TEST_DIR) + "/../tools/reproduce.py --rocesim " +
                   kBinary + " --manifests '" + man.string() + "' --scenarios '" +
                   std::string(ROCESIM_TEST_DIR) + "/../scenarios' tcd --sensitivity -q -j 2 -o '" +
                   (tmp.path / "out").string() + "' --docs '" + (tmp.path / "docs").string() + "'");
  ASSERT_EQ(r.code, 0) << r.text;
  const nlohmann::json s = nlohmann::json::parse(
      read_text_file(tmp.path / "docs" / "reproduction" / "tcd.sensitivity.json"))["claims"]["T1"];
  ASSERT_EQ(s["rows"].size(), 2u) << s.dump();
  EXPECT_EQ(s["rows"][0]["set"], "");
  EXPECT_EQ(s["rows"][0]["verdict"], "agree") << s.dump();
  EXPECT_EQ(s["rows"][1]["set"], "nic.mtu_bytes=2000");
  EXPECT_EQ(s["rows"][1]["verdict"], "disagree") << s.dump();
  EXPECT_EQ(s["rows"][1]["seeds"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(s["command"], "rocesim reproduce tcd --sensitivity --claim T1");
  const std::string md = read_text_file(tmp.path / "docs" / "REPRODUCTION.md");
  EXPECT_NE(md.find("**T1: sensitivity**"), std::string::npos) << md;
  EXPECT_NE(md.find("| nic.mtu_bytes=2000 |"), std::string::npos) << md;
}

// `reproduce --mpi LAUNCHER` runs each sweep as `LAUNCHER rocesim sweep ... --mpi`: the same claims as local
// sweeps (3 ranks, oversubscribed on this machine).
TEST(Reproduce, MpiSweepsGiveTheSameClaims) {
  if (std::getenv("ROCESIM_SANITIZED")) GTEST_SKIP() << kPythonToolUnderSanitizers;
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
    return nlohmann::json::parse(read_text_file(tmp.path / dir / "icc" / "claims.json"))["claims"];
  };
  EXPECT_EQ(claims("mpi"), claims("local"));
  EXPECT_FALSE(claims("mpi").empty());
}
