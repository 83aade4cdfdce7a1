// Fuzzing the training-job readers (fuzz/README.md): from a seed, draws valid Chakra traces (a few ranks of
// compute, collectives over process groups, send/recv pairs and metadata nodes, written by our writer) and
// valid SimAI workload files (tensor, data, expert and pipeline parallelism, every comm type), mutates each
// once, and reads and compiles it as a scenario would (read_chakra_trace or read_simai_workload, then
// compile_training). Every case must end in one of two ways:
//   accepted   the reader and the compiler return, or
//   refused    with an InputError whose message names the case's file (the trace's folder or a rank file),
// and a mutation that makes the input invalid by construction (a dependency on a node that is not in the
// file, a dependency cycle, a peer or a group out of range, an unsupported node or comm type, collectives
// that differ between ranks, an unmatched send, a SimAI file shorter than its layer count, an all_gpus that
// tensor x pipeline parallelism does not divide, a pipeline without pp_comm, an unknown comm type) must be
// refused: accepting it is a silent wrong result. Anything else (another exception, a crash, a sanitizer
// report, a case running past --limit-s) is a failure; the case's files are kept in <out>/<seed>-<n>/.
//
//   rocesim_trace_fuzz [--seed N] [--seconds S] [--count N] [--out DIR] [--limit-s S]
//   rocesim_trace_fuzz --case SEED:N [--out DIR]     (that case alone, its files kept)
//
// Case n of seed s is always the same input. Mutations: byte level (bit flips, truncation, inserted,
// deleted or repeated bytes), applied to one rank's .et file or to the SimAI text, accepted or refused
// either way; and structured, as above, which must be refused, or that keep the input valid (other
// durations and sizes, the same on every rank), which must be accepted.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "draw.h"
#include "workload/chakra.h"
#include "workload/simai.h"
#include "workload/training.h"

using namespace rocesim;
namespace fs = std::filesystem;

namespace {

using fuzz::Draw;

// What a mutation expects.
enum class Expect { kAny, kRefused, kAccepted };

struct Case {
  std::string kind;      // "chakra" or "simai"
  std::string mutation;  // what was done to the valid input
  Expect expect = Expect::kAny;
  std::vector<std::string> files;                  // chakra: rank order; simai: the one file
  std::map<std::string, std::vector<int>> groups;  // chakra
  int ranks = 0;
};

// --- byte-level mutations ---

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(data.data(), static_cast<std::streamsize>(data.size()));
}

std::string mutate_bytes(Draw& d, std::string s, std::string& what) {
  const int kind = d.in(0, 4);
  const auto at = [&](size_t n) {
    return n == 0 ? size_t{0} : static_cast<size_t>(d.in(0, static_cast<int>(n) - 1));
  };
  switch (kind) {
    case 0: {
      const int flips = d.in(1, 8);
      for (int i = 0; i < flips && !s.empty(); ++i) s[at(s.size())] ^= static_cast<char>(1 << d.in(0, 7));
      what = fmt::format("{} bit flips", flips);
      break;
    }
    case 1: {
      const size_t n = at(s.size());
      what = fmt::format("truncated to {} of {} bytes", n, s.size());
      s.resize(n);
      break;
    }
    case 2: {
      const size_t p = at(s.size() + 1);
      std::string bytes(static_cast<size_t>(d.in(1, 16)), '\0');
      for (char& c : bytes) c = static_cast<char>(d.in(0, 255));
      s.insert(p, bytes);
      what = fmt::format("{} random bytes inserted at {}", bytes.size(), p);
      break;
    }
    case 3: {
      const size_t p = at(s.size()), n = std::min(s.size() - p, static_cast<size_t>(d.in(1, 32)));
      s.erase(p, n);
      what = fmt::format("{} bytes deleted at {}", n, p);
      break;
    }
    default: {
      const size_t p = at(s.size()), n = std::min(s.size() - p, static_cast<size_t>(d.in(1, 64)));
      s.insert(p, s.substr(p, n));
      what = fmt::format("{} bytes repeated at {}", n, p);
      break;
    }
  }
  return s;
}

// --- Chakra ---

constexpr int kComp = 4, kMetadata = 1, kSend = 5, kRecv = 6, kColl = 7;

ChakraNodeOut node(uint64_t id, int type, const std::string& name) {
  ChakraNodeOut n;
  n.id = id;
  n.type = type;
  n.name = name;
  return n;
}

// A valid trace: every rank runs the same program of compute, collectives (over every rank or a named
// group, by its members), send/recv pairs between two ranks and metadata nodes; each node waits for the
// rank's previous node and sometimes for an earlier one too.
Case chakra_case(Draw& d, const fs::path& dir) {
  Case c;
  c.kind = "chakra";
  const int nr = d.in(2, 5);
  c.ranks = nr;
  c.groups["pair"] = {0, 1};
  c.groups["rest"] = {};
  for (int r = nr - 1; r >= 0; --r) c.groups["rest"].push_back(r);
  std::vector<std::vector<ChakraNodeOut>> ranks(static_cast<size_t>(nr));
  std::vector<uint64_t> next_id(static_cast<size_t>(nr), 1);
  const auto add = [&](int r, ChakraNodeOut n) {
    auto& v = ranks[static_cast<size_t>(r)];
    n.id = next_id[static_cast<size_t>(r)]++ * 3 + 7;  // ids need not be dense
    if (!v.empty()) n.data_deps.push_back(v.back().id);
    if (v.size() > 2 && d.chance(0.3))
      n.ctrl_deps.push_back(v[static_cast<size_t>(d.in(0, static_cast<int>(v.size()) - 2))].id);
    v.push_back(std::move(n));
  };
  // ALL_REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, BARRIER
  const std::vector<int64_t> coll_types{0, 2, 5, 6, 7, 8, 9};
  const int steps = d.in(1, 12);
  for (int s = 0; s < steps; ++s) {
    const int what = d.in(0, 9);
    if (what <= 3) {
      for (int r = 0; r < nr; ++r) {
        ChakraNodeOut n = node(0, kComp, fmt::format("comp{}", s));
        n.duration_us = static_cast<uint64_t>(d.in(0, 500));
        add(r, std::move(n));
      }
    } else if (what <= 6) {
      const int64_t type = d.pick(coll_types);
      const int64_t bytes = d.in(0, 3) == 0 ? 0 : d.in(1, 1 << 20);
      const std::string pg = d.pick(std::vector<std::string>{"", "pair", "rest"});
      for (int r = 0; r < nr; ++r) {
        if (pg == "pair" && r > 1) continue;
        ChakraNodeOut n = node(0, kColl, fmt::format("coll{}", s));
        n.ints = {{"comm_type", type}, {"comm_size", bytes}};
        if (!pg.empty()) n.strings = {{"pg_name", pg}};
        add(r, std::move(n));
      }
    } else if (what <= 8) {
      const int a = d.in(0, nr - 1), b = (a + d.in(1, nr - 1)) % nr;
      const int64_t bytes = d.in(1, 1 << 20), tag = d.in(0, 3);
      ChakraNodeOut s_ = node(0, kSend, fmt::format("send{}", s));
      s_.ints = {{"comm_dst", b}, {"comm_size", bytes}, {"comm_tag", tag}};
      add(a, std::move(s_));
      ChakraNodeOut r_ = node(0, kRecv, fmt::format("recv{}", s));
      r_.ints = {{"comm_src", a}, {"comm_size", bytes}, {"comm_tag", tag}};
      add(b, std::move(r_));
    } else {
      add(d.in(0, nr - 1), node(0, kMetadata, fmt::format("meta{}", s)));
    }
  }
  for (int r = 0; r < nr; ++r)
    if (ranks[static_cast<size_t>(r)].empty()) add(r, node(0, kComp, "idle"));
  // The mutation.
  const int m = d.in(0, 11);
  if (m <= 4) {
    c.mutation = "bytes";  // applied to the written file below
  } else {
    const int r = d.in(0, nr - 1);
    auto& v = ranks[static_cast<size_t>(r)];
    ChakraNodeOut& x = v[static_cast<size_t>(d.in(0, static_cast<int>(v.size()) - 1))];
    c.expect = Expect::kRefused;
    switch (m) {
      case 5:  // a dependency on a node id the file does not have
        x.data_deps.push_back(d.chance(0.5) ? UINT64_MAX - static_cast<uint64_t>(d.in(0, 9)) : 1);
        c.mutation = fmt::format("rank {} node {} depends on a node that is not in the file", r, x.id);
        break;
      case 6: {  // a cycle: the first node waits for the last (which waits for it, through the chain)
        if (v.size() < 2) {
          v.front().data_deps.push_back(v.front().id);
          c.mutation = fmt::format("rank {} node {} depends on itself", r, v.front().id);
        } else {
          v.front().ctrl_deps.push_back(v.back().id);
          c.mutation =
              fmt::format("rank {}: first node {} depends on the last {}", r, v.front().id, v.back().id);
        }
        break;
      }
      case 7: {  // an unsupported node type (MEM_LOAD, MEM_STORE, an unknown number)
        x.type = d.pick(std::vector<int>{2, 3, 0, 8, 99, -1});
        c.mutation = fmt::format("rank {} node {} has node type {}", r, x.id, x.type);
        break;
      }
      case 8: {  // a peer or a group out of range
        if (x.type == kSend || x.type == kRecv) {
          x.ints[0].second = d.pick(std::vector<int64_t>{-1, nr, nr + 100, INT64_MAX, r});
          c.mutation = fmt::format("rank {} node {} has peer {}", r, x.id, x.ints[0].second);
        } else {
          x.type = kColl;
          x.ints = {{"comm_type", 0}, {"comm_size", 1000}};
          x.strings = {{"pg_name", "nosuchgroup"}};
          c.mutation = fmt::format("rank {} node {} is an all-reduce on an undefined group", r, x.id);
        }
        break;
      }
      case 9: {  // an unsupported comm type, or a size that differs from the other ranks'
        if (x.type == kColl && d.chance(0.5)) {
          x.ints[0].second = d.pick(std::vector<int64_t>{1, 3, 4, 10, 1000, -5});  // REDUCE, GATHER, SCATTER
          c.mutation = fmt::format("rank {} node {} has comm_type {}", r, x.id, x.ints[0].second);
        } else {
          // A send without its receive on the peer: a new send to the next rank.
          ChakraNodeOut s_ = node(v.back().id + 1, kSend, "orphan");
          s_.ints = {{"comm_dst", (r + 1) % nr}, {"comm_size", 100}, {"comm_tag", 77}};
          v.push_back(std::move(s_));
          c.mutation = fmt::format("rank {} sends with tag 77 and nobody receives it", r);
        }
        break;
      }
      case 10: {  // a collective with another size on one rank
        bool done = false;
        for (ChakraNodeOut& y : v)
          if (y.type == kColl && !done && y.ints.size() >= 2 && y.ints[0].second != 9) {
            y.ints[1].second += 1;
            done = true;
            c.mutation = fmt::format("rank {} node {} has another comm_size than the other members", r, y.id);
          }
        if (!done) {
          x.type = kSend;
          x.ints = {{"comm_dst", (r + 1) % nr}, {"comm_size", -1}};
          x.strings.clear();
          c.mutation = fmt::format("rank {} node {} sends -1 bytes", r, x.id);
        }
        break;
      }
      default: {  // valid: other durations and sizes, the same on every rank
        c.expect = Expect::kAccepted;
        const uint64_t scale = static_cast<uint64_t>(d.in(1, 1000));
        for (auto& rank : ranks)
          for (ChakraNodeOut& y : rank) y.duration_us *= scale;
        c.mutation = fmt::format("durations x {}", scale);
        break;
      }
    }
  }
  for (int r = 0; r < nr; ++r) {
    const std::string f = (dir / fmt::format("t.{}.et", r)).string();
    write_chakra_trace(f, ranks[static_cast<size_t>(r)]);
    c.files.push_back(f);
  }
  if (c.mutation == "bytes") {
    const size_t r = static_cast<size_t>(d.in(0, nr - 1));
    std::string what;
    write_bytes(c.files[r], mutate_bytes(d, read_bytes(c.files[r]), what));
    c.mutation = fmt::format("rank {}: {}", r, what);
  }
  return c;
}

// --- SimAI ---

const std::vector<std::string> kCommTypes{"NONE",
                                          "ALLREDUCE",
                                          "ALLGATHER",
                                          "REDUCESCATTER",
                                          "ALLTOALL",
                                          "ALLREDUCEALLTOALL",
                                          "ALLREDUCE_TP",
                                          "ALLGATHER_DP",
                                          "ALLTOALL_EP",
                                          "ALLREDUCE_DP_EP",
                                          "REDUCESCATTER_DP",
                                          "ALLREDUCEALLTOALL_EP",
                                          "ALLREDUCEALLTOALL_DP_EP"};

Case simai_case(Draw& d, const fs::path& dir) {
  Case c;
  c.kind = "simai";
  const int tp = d.pick(std::vector<int>{1, 2, 4}), pp = d.pick(std::vector<int>{1, 1, 2, 3});
  const int ep = d.pick(std::vector<int>{1, 1, 2}), dp = ep * d.in(1, 2);
  const int gpus = tp * pp * dp, ga = d.in(1, 3), layers = d.in(1, 6);
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format("{} model_parallel_NPU_group: {} ep: {} pp: {} vpp: {} ga: {} all_gpus: {} "
                  "checkpoints: 0 checkpoint_initiates: 0 pp_comm: {}",
                  d.chance(0.5) ? "HYBRID_TRANSFORMER_FWD_IN_BCKWD" : "HYBRID_TRANSFORMER", tp, ep, pp,
                  layers, ga, gpus, pp > 1 ? fmt::format("{}.0", d.in(1, 1 << 20)) : "0"));
  lines.push_back(std::to_string(layers));
  for (int l = 0; l < layers; ++l) {
    std::string line = fmt::format("layer{} -1", l);
    for (int p = 0; p < 3; ++p) {
      const std::string type = d.pick(kCommTypes);
      line += fmt::format("\t{}\t{}\t{}", d.in(0, 200000), type, type == "NONE" ? 0 : d.in(0, 1 << 20));
    }
    line += fmt::format("\t{}", d.in(0, 1000));
    lines.push_back(line);
  }
  const int m = d.in(0, 11);
  std::string text;
  const auto join = [&] {
    std::string t;
    for (const std::string& l : lines) t += l + "\n";
    return t;
  };
  if (m <= 3) {
    std::string what;
    text = mutate_bytes(d, join(), what);
    c.mutation = what;
  } else if (m <= 6) {  // a field of a line replaced by a drawn token
    const size_t li = static_cast<size_t>(d.in(0, static_cast<int>(lines.size()) - 1));
    std::istringstream ss(lines[li]);
    std::vector<std::string> f;
    for (std::string x; ss >> x;) f.push_back(x);
    const size_t fi = static_cast<size_t>(d.in(0, static_cast<int>(f.size()) - 1));
    const std::string token = d.pick(std::vector<std::string>{"0",
                                                              "-1",
                                                              "1",
                                                              "3",
                                                              "7",
                                                              "512",
                                                              "16777216",
                                                              "16777217",
                                                              "4294967296",
                                                              "9223372036854775807",
                                                              "99999999999999999999",
                                                              "1e9",
                                                              "2.5",
                                                              "-0",
                                                              "x",
                                                              "NONE",
                                                              "ALLTOALL_DP_EP",
                                                              "ALLREDUCE_XX",
                                                              "ALLREDUCEALLTOALL_DP",
                                                              "",
                                                              "pp:",
                                                              "all_gpus:"});
    c.mutation = fmt::format("line {} field {} '{}' -> '{}'", li + 1, fi + 1, f[fi], token);
    f[fi] = token;
    std::string l;
    for (const std::string& x : f) l += (l.empty() ? "" : " ") + x;
    lines[li] = l;
    text = join();
  } else if (m == 7) {  // a layer line removed: the file is shorter than its count
    c.expect = Expect::kRefused;
    lines.erase(lines.begin() + 2 + d.in(0, layers - 1));
    c.mutation = "a layer line removed";
    text = join();
  } else if (m == 8) {  // all_gpus that TP x PP does not divide
    c.expect = Expect::kRefused;
    const int bad = tp * pp * dp + (tp * pp > 1 ? d.in(1, tp * pp - 1) : 0);
    if (tp * pp == 1) {
      lines[0].replace(lines[0].find("all_gpus:"), std::string("all_gpus:").size(), "all_gpus: 0 x:");
      c.mutation = "all_gpus 0";
    } else {
      lines[0].replace(lines[0].find(fmt::format("all_gpus: {}", gpus)),
                       fmt::format("all_gpus: {}", gpus).size(), fmt::format("all_gpus: {}", bad));
      c.mutation = fmt::format("all_gpus {} with tp {} and pp {}", bad, tp, pp);
    }
    text = join();
  } else if (m == 9) {  // a pipeline without pp_comm, or an unknown comm type
    c.expect = Expect::kRefused;
    if (pp > 1) {
      lines[0].resize(lines[0].find(" pp_comm:"));
      c.mutation = "pp > 1 without pp_comm";
    } else {
      const size_t li = static_cast<size_t>(d.in(2, static_cast<int>(lines.size()) - 1));
      std::istringstream ss(lines[li]);
      std::vector<std::string> f;
      for (std::string x; ss >> x;) f.push_back(x);
      f[static_cast<size_t>(3 * d.in(0, 2) + 3)] =
          d.pick(std::vector<std::string>{"ALLREDUCE_PP", "BROADCAST", "ALLGATHER_", "allreduce",
                                          "ALLREDUCEALLTOALL_", "ALLREDUCEALLTOALLV"});
      std::string l;
      for (const std::string& x : f) l += (l.empty() ? "" : " ") + x;
      c.mutation = fmt::format("line {}: {}", li + 1, l);
      lines[li] = l;
    }
    text = join();
  } else {  // valid: the text as drawn
    c.expect = Expect::kAccepted;
    c.mutation = "none";
    text = join();
  }
  c.ranks = gpus;
  const std::string f = (dir / "w.txt").string();
  write_bytes(f, text);
  c.files = {f};
  return c;
}

// --- running ---

struct Outcome {
  bool failed = false;
  std::string what;  // accepted / refused: <message> / the failure
};

Outcome run_case(const Case& c, const fs::path& dir) {
  Outcome o;
  try {
    TrainingGraph g;
    int ranks = c.ranks;
    if (c.kind == "chakra") {
      g = read_chakra_trace(chakra_trace_files(dir.string()), c.groups, 1.0);
    } else {
      SimaiWorkload w = read_simai_workload(c.files[0], 1.0);
      ranks = w.all_gpus;
      g = std::move(w.graph);
    }
    TrainingOptions t;
    for (int r = 0; r < static_cast<int>(g.ranks.size()); ++r) t.hosts.push_back(r);
    t.link.assign(g.ranks.size(), Rate::from_gbps(100));
    (void)ranks;
    const CompiledTraining ct = compile_training(g, t);
    o.what = fmt::format("accepted ({} nodes)", ct.dag.size());
    if (c.expect == Expect::kRefused) {
      o.failed = true;
      o.what = "silent wrong result: accepted an input made invalid (" + c.mutation + ")";
    }
  } catch (const InputError& e) {
    o.what = std::string("refused: ") + e.what();
    if (std::string(e.what()).find(dir.string()) == std::string::npos) {
      o.failed = true;
      o.what = "the error does not name the file: " + std::string(e.what());
    } else if (c.expect == Expect::kAccepted) {
      o.failed = true;
      o.what = "refused a valid input: " + std::string(e.what());
    }
  } catch (const std::exception& e) {
    o.failed = true;
    o.what = std::string("exception (not an InputError): ") + e.what();
  }
  return o;
}

uint64_t case_seed(uint64_t seed, uint64_t n) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (n + 0x632BE59BD9B4E019ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rocesim_trace_fuzz: mutated Chakra traces and SimAI workload files, read and compiled"};
  uint64_t seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  double seconds = 60;
  uint64_t count = 0;
  int limit_s = 120;
  std::string out = "fuzz-traces", one;
  app.add_option("--seed", seed);
  app.add_option("--seconds", seconds, "stop after this long");
  app.add_option("--count", count, "stop after this many cases (0: by time)");
  app.add_option("--out", out, "folder of the cases' files (failing ones are kept)");
  app.add_option("--limit-s", limit_s, "a case running longer is a hang (the process stops)");
  app.add_option("--case", one, "SEED:N: that case alone");
  CLI11_PARSE(app, argc, argv);
  fs::create_directories(out);
  uint64_t first = 0, last = UINT64_MAX;
  if (!one.empty()) {
    const size_t colon = one.find(':');
    seed = std::stoull(one.substr(0, colon));
    first = std::stoull(one.substr(colon + 1));
    last = first + 1;
  }
  fmt::print("seed {}\n", seed);
  std::fflush(stdout);
  std::map<std::string, uint64_t> counts;
  uint64_t failures = 0, n = first;
  const auto t0 = std::chrono::steady_clock::now();
  for (; n < last; ++n) {
    if (one.empty() &&
        ((count > 0 && n >= count) ||
         (count == 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds)))
      break;
    Draw d(case_seed(seed, n));
    const fs::path dir = fs::path(out) / fmt::format("{}-{}", seed, n);
    fs::remove_all(dir);
    fs::create_directories(dir);
    const Case c = d.chance(0.5) ? chakra_case(d, dir) : simai_case(d, dir);
    // A crash or a hang ends the process with this case's folder in place and its line printed.
    std::ofstream(dir / "case.txt") << fmt::format("{} seed {} case {}: {}\n", c.kind, seed, n, c.mutation);
    alarm(static_cast<unsigned>(limit_s));
    const Outcome o = run_case(c, dir);
    alarm(0);
    const std::string outcome = o.failed                           ? "FAILED"
                                : o.what.rfind("accepted", 0) == 0 ? "accepted"
                                                                   : "refused";
    ++counts[c.kind + " " + outcome];
    if (o.failed) {
      ++failures;
      fmt::print("FAILED {} seed {} case {} ({}): {}\n", c.kind, seed, n, c.mutation, o.what);
      std::ofstream(dir / "case.txt", std::ios::app) << o.what << "\n";
    } else if (one.empty()) {
      fs::remove_all(dir);
    } else {
      fmt::print("{} {}: {}\n", c.kind, c.mutation, o.what);
    }
  }
  fmt::print("{} cases in {:.1f} s:", n - first,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  for (const auto& [k, v] : counts) fmt::print(" {} {};", k, v);
  fmt::print(" {} failures\n", failures);
  return failures > 0 ? 1 : 0;
}
