// MLCommons Chakra execution traces (the .et files of PyTorch's execution-trace observer after Chakra's
// converter, or of Chakra's generators): one file per rank, a stream of protobuf messages (schema:
// workload/chakra_et.proto) each preceded by its length as a varint, first a GlobalMetadata, then the
// rank's nodes. Read into a TrainingGraph (workload/training.h):
//   COMP_NODE       compute of duration_micros (x compute_scale)
//   COMM_COLL_NODE  a collective: attribute comm_type (CollectiveCommType: ALL_REDUCE, ALL_GATHER,
//                   REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, ALL_TO_ALL, BROADCAST, BARRIER), comm_size
//                   (bytes: the per-rank buffer of workload/collectives.h), pg_name (the process group; none:
//                   every rank)
//   COMM_SEND_NODE  comm_dst (rank), comm_size, comm_tag (0)
//   COMM_RECV_NODE  comm_src (rank), comm_size, comm_tag (0)
//   METADATA_NODE   orders nodes only
// data_deps and ctrl_deps both order nodes (ids of nodes of the same file). Integer attributes may have any
// of the schema's integer types. Other attributes are ignored, except involved_dim (network dimensions,
// which rocesim does not model) when it leaves a dimension out. MEM_LOAD_NODE, MEM_STORE_NODE, the REDUCE,
// GATHER and SCATTER collectives and a bad or missing attribute are errors naming the file and node.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "workload/training.h"

namespace rocesim {

// The files of a trace, rank r at index r: `spec` is a folder (its *.et files) or a file name whose last
// component may hold `*` wildcards ("traces/llama.*.et"); a file's rank is the number its name ends with
// before ".et" ("llama.12.et": rank 12). The ranks must be 0..N-1, each once. Throws InputError(spec, ...).
std::vector<std::string> chakra_trace_files(const std::string& spec);

// Reads files[r] as rank r. `groups` names each process group (pg_name) with its ranks in collective order;
// TrainingGraph::groups[0] is every rank (nodes without pg_name), the named groups follow as used.
TrainingGraph read_chakra_trace(const std::vector<std::string>& files,
                                const std::map<std::string, std::vector<int>>& groups, double compute_scale);

// A node to write (tests, rocesim_chakra_write): `type` is a NodeType number, attributes an int64 or a
// string each.
struct ChakraNodeOut {
  uint64_t id = 0;
  std::string name;
  int type = 4;  // COMP_NODE
  uint64_t duration_us = 0;
  std::vector<uint64_t> data_deps, ctrl_deps;
  std::vector<std::pair<std::string, int64_t>> ints;
  std::vector<std::pair<std::string, std::string>> strings;
};
// Writes one rank's file: GlobalMetadata (version "0.0.4"), then the nodes. Throws std::runtime_error.
void write_chakra_trace(const std::string& path, const std::vector<ChakraNodeOut>& nodes);

}  // namespace rocesim
