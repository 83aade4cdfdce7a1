// rocesim_chakra_write: writes a Chakra execution trace (one .et file per rank; workload/chakra.h) of a
// data-parallel + tensor-parallel training step, made by rocesim's own writer, and prints the [[traffic]]
// table that runs it. Rank r is in tensor-parallel group "tp<r / tp>" (tp consecutive ranks) and
// data-parallel group "dp<r % tp>" (the ranks at the same position of every tensor-parallel group). Per rank:
// for each layer, forward compute then a tensor-parallel all-reduce of the activations; then for each layer
// in reverse, backward compute (twice the forward's), its tensor-parallel all-reduce, and a data-parallel
// all-reduce of the layer's gradients, which overlaps the layers after it. Every rank's first node is a
// METADATA_NODE; with --pipe, each rank r of the first half then sends tp_bytes to rank r + ranks/2 (a
// COMM_SEND_NODE / COMM_RECV_NODE pair) before its first layer.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "workload/chakra.h"

using namespace rocesim;

int main(int argc, char** argv) {
  CLI::App app{"Write a Chakra trace (.et per rank) of a data-parallel + tensor-parallel training step"};
  int ranks = 8, tp = 2, layers = 2;
  uint64_t compute_us = 100;
  int64_t tp_bytes = 4 << 20, dp_bytes = 32 << 20;
  std::string out = ".", name = "step";
  bool pipe = false;
  app.add_option("--ranks", ranks, "Ranks (files)")->check(CLI::Range(1, 1 << 20));
  app.add_option("--tp", tp, "Tensor-parallel group size (divides --ranks)")->check(CLI::Range(1, 1 << 20));
  app.add_option("--layers", layers, "Layers")->check(CLI::Range(1, 1 << 16));
  app.add_option("--compute-us", compute_us, "Forward compute of a layer (us)");
  app.add_option("--tp-bytes", tp_bytes, "Bytes of each tensor-parallel all-reduce")
      ->check(CLI::Range(0L, 1L << 40));
  app.add_option("--dp-bytes", dp_bytes, "Bytes of each data-parallel all-reduce")
      ->check(CLI::Range(0L, 1L << 40));
  app.add_option("--out", out, "Folder to write <name>.<rank>.et into");
  app.add_option("--name", name, "File name prefix");
  app.add_flag("--pipe", pipe, "Also a send/recv of tp-bytes from each rank of the first half to the second");
  CLI11_PARSE(app, argc, argv);
  if (ranks % tp != 0) {
    std::cerr << "--tp must divide --ranks\n";
    return 2;
  }
  std::filesystem::create_directories(out);
  const int dp = ranks / tp;
  for (int r = 0; r < ranks; ++r) {
    std::vector<ChakraNodeOut> nodes;
    uint64_t id = 0, prev = 0;
    bool has_prev = false;
    auto add = [&](ChakraNodeOut n, bool chain) {
      n.id = ++id;
      if (has_prev) n.data_deps.push_back(prev);
      nodes.push_back(std::move(n));
      if (chain) {
        prev = id;
        has_prev = true;
      }
      return id;
    };
    auto compute = [&](const std::string& what, uint64_t us) {
      ChakraNodeOut n;
      n.name = what;
      n.type = 4;  // COMP_NODE
      n.duration_us = us;
      add(std::move(n), true);
    };
    auto allreduce = [&](const std::string& what, int64_t bytes, const std::string& pg, bool chain) {
      ChakraNodeOut n;
      n.name = what;
      n.type = 7;                                         // COMM_COLL_NODE
      n.ints = {{"comm_type", 0}, {"comm_size", bytes}};  // ALL_REDUCE
      n.strings = {{"pg_name", pg}};
      add(std::move(n), chain);
    };
    const std::string tpg = fmt::format("tp{}", r / tp), dpg = fmt::format("dp{}", r % tp);
    ChakraNodeOut start;
    start.name = "step_start";
    start.type = 1;  // METADATA_NODE
    add(std::move(start), true);
    if (pipe && ranks >= 2) {
      const int half = ranks / 2;
      if (r < 2 * half) {
        ChakraNodeOut n;
        n.name = r < half ? "send_activations" : "recv_activations";
        n.type = r < half ? 5 : 6;  // COMM_SEND_NODE, COMM_RECV_NODE
        n.ints = {{r < half ? "comm_dst" : "comm_src", r < half ? r + half : r - half},
                  {"comm_size", tp_bytes},
                  {"comm_tag", 1}};
        add(std::move(n), true);
      }
    }
    for (int l = 0; l < layers; ++l) {
      compute(fmt::format("layer{}.fwd", l), compute_us);
      if (tp > 1 && tp_bytes > 0) allreduce(fmt::format("layer{}.fwd_allreduce", l), tp_bytes, tpg, true);
    }
    for (int l = layers; l-- > 0;) {
      compute(fmt::format("layer{}.bwd", l), 2 * compute_us);
      if (tp > 1 && tp_bytes > 0) allreduce(fmt::format("layer{}.bwd_allreduce", l), tp_bytes, tpg, true);
      if (dp > 1 && dp_bytes > 0) allreduce(fmt::format("layer{}.grad_allreduce", l), dp_bytes, dpg, false);
    }
    write_chakra_trace((std::filesystem::path(out) / fmt::format("{}.{}.et", name, r)).string(), nodes);
  }
  // The table that runs it (groups as pg_name -> ranks).
  fmt::print("[[traffic]]\npattern = \"chakra\"\nfiles = \"{}\"\njob = \"{}\"\ngroups = [\n",
             (std::filesystem::path(out) / fmt::format("{}.*.et", name)).string(), name);
  for (int b = 0; b < dp && tp > 1; ++b) {
    std::vector<int> m;
    for (int j = 0; j < tp; ++j) m.push_back(b * tp + j);
    fmt::print("  {{ name = \"tp{}\", ranks = [{}] }},\n", b, fmt::join(m, ", "));
  }
  for (int p = 0; p < tp && dp > 1; ++p) {
    std::vector<int> m;
    for (int j = 0; j < dp; ++j) m.push_back(p + j * tp);
    fmt::print("  {{ name = \"dp{}\", ranks = [{}] }},\n", p, fmt::join(m, ", "));
  }
  fmt::print("]\n");
  return 0;
}
