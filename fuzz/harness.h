// The parsers the fuzz targets exercise, one function per input format, shared with the regression test
// (tests/net/robustness_test.cc) that replays tests/data/fuzz_regressions/<format>/*. A function returns
// normally for accepted input and for input rejected with InputError (the documented way every parser
// reports bad input); anything else (a crash, a sanitizer report, another exception) is a bug.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "config/scenario.h"
#include "core/error.h"
#include "core/rng.h"
#include "topo/topology_file.h"
#include "workload/cdf.h"
#include "workload/flow_file.h"
#include "workload/simai.h"
#include "workload/training.h"

namespace rocesim::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A scenario file (TOML): load_scenario_text resolves profiles, the topology, traffic and every section.
// Scenarios that would build very large fabrics are not the parser's business: skipped by a size cap.
inline void scenario(const uint8_t* data, size_t size) {
  try {
    const Scenario s = load_scenario_text(as_text(data, size), "fuzz.toml");
    auto src = s.make_flow_source();
    FlowSpec f;
    for (int i = 0; i < 64 && src && src->next(f); ++i) {
    }
  } catch (const InputError&) {
  }
}

// An ns-3 HPCC topology file.
inline void topology(const uint8_t* data, size_t size) {
  try {
    const TopoSpec t = parse_hpcc_topology(as_text(data, size), "fuzz-topology.txt");
    std::ostringstream out;
    write_hpcc_topology(t, out);
    const TopoSpec back = parse_hpcc_topology(out.str(), "fuzz-roundtrip.txt");
    if (back.num_nodes != t.num_nodes || back.links.size() != t.links.size()) __builtin_trap();
  } catch (const InputError&) {
  }
}

// An ns-3 HPCC flow file, read to the end against a 16-node network whose even ids are hosts.
inline void flow_file(const uint8_t* data, size_t size) {
  try {
    HpccFlowFile f(std::make_unique<std::istringstream>(std::string(as_text(data, size))), "fuzz-flows.txt",
                   16, [](int id) { return id % 2 == 0; });
    FlowSpec spec;
    while (f.next(spec)) {
    }
  } catch (const InputError&) {
  }
}

// A flow-size CDF file (percent or fraction format), then every query on it.
inline void cdf(const uint8_t* data, size_t size) {
  try {
    std::istringstream in{std::string(as_text(data, size))};
    const SizeCdf c = SizeCdf::parse(in, "fuzz.cdf", "fuzz");
    Rng rng(1);
    for (int i = 0; i < 16; ++i) (void)c.sample(rng);
    for (double u : {0.0, 0.25, 0.5, 1.0}) (void)c.quantile(u);
    (void)c.cdf_at(c.min_bytes());
    (void)c.fraction_below(1000);
    (void)c.mean_bytes();
  } catch (const InputError&) {
  }
}

// A SimAI workload file (rocesim_trace_fuzz mutates these and Chakra traces; fuzz/README.md), read and
// compiled into its training job as a scenario does.
inline void simai(const uint8_t* data, size_t size) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("rocesim_fuzz_simai_" + std::to_string(::getpid()) + ".txt"))
          .string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const SimaiWorkload w = read_simai_workload(path, 1.0);
    TrainingOptions o;
    for (size_t r = 0; r < w.graph.ranks.size(); ++r) o.hosts.push_back(static_cast<int>(r));
    o.link.assign(w.graph.ranks.size(), Rate::from_gbps(100));
    (void)compile_training(w.graph, o);
  } catch (const InputError&) {
  }
  std::filesystem::remove(path);
}

}  // namespace rocesim::fuzz
