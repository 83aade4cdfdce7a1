#include "workload/chakra.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "workload/chakra_et.pb.h"

namespace rocesim {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

namespace {

const char* const kSupportedTypes =
    "COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE and METADATA_NODE";

// The number a file name ends with before ".et", or -1.
int64_t rank_of(const std::string& name) {
  if (name.size() < 4 || name.compare(name.size() - 3, 3, ".et") != 0) return -1;
  size_t end = name.size() - 3, i = end;
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  if (i == end || end - i > 9) return -1;
  return std::stoll(name.substr(i, end - i));
}

std::string node_label(const pb::Node& n) {
  return n.name().empty() ? fmt::format("node {}", n.id()) : fmt::format("node {} ('{}')", n.id(), n.name());
}

// An integer attribute of any of the schema's integer types.
bool int_value(const pb::AttributeProto& a, int64_t& v) {
  using A = pb::AttributeProto;
  switch (a.value_case()) {
    case A::kInt32Val:
      v = a.int32_val();
      return true;
    case A::kInt64Val:
      v = a.int64_val();
      return true;
    case A::kUint32Val:
      v = a.uint32_val();
      return true;
    case A::kUint64Val:
      v = static_cast<int64_t>(a.uint64_val());
      return true;
    case A::kSint32Val:
      v = a.sint32_val();
      return true;
    case A::kSint64Val:
      v = a.sint64_val();
      return true;
    case A::kFixed32Val:
      v = a.fixed32_val();
      return true;
    case A::kFixed64Val:
      v = static_cast<int64_t>(a.fixed64_val());
      return true;
    case A::kSfixed32Val:
      v = a.sfixed32_val();
      return true;
    case A::kSfixed64Val:
      v = a.sfixed64_val();
      return true;
    default:
      return false;
  }
}

struct RankReader {
  const std::string& path;
  int rank;
  int nranks;
  const std::map<std::string, std::vector<int>>& named;
  std::map<std::string, int32_t>& group_index;
  TrainingGraph& g;
  double scale;

  [[noreturn]] void fail(const pb::Node& n, const std::string& what) const {
    throw InputError(path, 0, fmt::format("{}: {}", node_label(n), what));
  }

  const pb::AttributeProto* attr(const pb::Node& n, const std::string& name) const {
    for (const auto& a : n.attr())
      if (a.name() == name) return &a;
    return nullptr;
  }
  int64_t get_int(const pb::Node& n, const std::string& name, bool required, int64_t def, int64_t lo,
                  int64_t hi) const {
    const pb::AttributeProto* a = attr(n, name);
    if (a == nullptr) {
      if (required)
        fail(n, fmt::format("{} needs the attribute {} (an integer)", pb::NodeType_Name(n.type()), name));
      return def;
    }
    int64_t v = 0;
    if (!int_value(*a, v)) fail(n, fmt::format("attribute {} must hold an integer (int64_val)", name));
    if (v < lo || v > hi) fail(n, fmt::format("attribute {} = {} is out of range [{}, {}]", name, v, lo, hi));
    return v;
  }

  int32_t group_of(const pb::Node& n) {
    const pb::AttributeProto* a = attr(n, "pg_name");
    if (a == nullptr) return 0;
    if (a->value_case() != pb::AttributeProto::kStringVal)
      fail(n, "attribute pg_name must hold a string (string_val)");
    const std::string& pg = a->string_val();
    if (auto it = group_index.find(pg); it != group_index.end()) return it->second;
    auto it = named.find(pg);
    if (it == named.end()) {
      std::vector<std::string> known;
      for (const auto& [k, v] : named) known.push_back(k);
      fail(n,
           fmt::format("process group '{}' is not defined: give its ranks in the table's groups, e.g. "
                       "groups = {{ \"{}\" = [0, 1] }}{}",
                       pg, pg, known.empty() ? "" : fmt::format(" (defined: {})", fmt::join(known, ", "))));
    }
    for (int r : it->second)
      if (r < 0 || r >= nranks)
        fail(n, fmt::format("process group '{}' names rank {}, but the trace has {} ranks", pg, r, nranks));
    const auto idx = static_cast<int32_t>(g.groups.size());
    g.groups.push_back(it->second);
    group_index.emplace(pg, idx);
    return idx;
  }

  TrainingOp op_of(const pb::Node& n) {
    TrainingOp op;
    op.id = n.id();
    op.name = n.name();
    if (const pb::AttributeProto* a = attr(n, "involved_dim")) {
      bool all = a->value_case() == pb::AttributeProto::kBoolList;
      if (all)
        for (bool b : a->bool_list().values()) all = all && b;
      if (!all)
        fail(n,
             "attribute involved_dim leaves network dimensions out, which rocesim does not model; name "
             "the process group with pg_name and give its ranks in the table's groups");
    }
    constexpr int64_t kMaxBytes = int64_t{1} << 50;
    switch (n.type()) {
      case pb::COMP_NODE:
        op.kind = TrainingOp::Kind::kCompute;
        if (static_cast<double>(n.duration_micros()) * scale > 1e12)
          fail(n, fmt::format("duration_micros = {} (x compute_scale {}) is more than 10^12 us",
                              n.duration_micros(), scale));
        op.duration = Time::from_ps(std::llround(static_cast<double>(n.duration_micros()) * 1e6 * scale));
        break;
      case pb::METADATA_NODE:
        op.kind = TrainingOp::Kind::kNoop;
        break;
      case pb::COMM_COLL_NODE: {
        op.kind = TrainingOp::Kind::kCollective;
        const int64_t t = get_int(n, "comm_type", true, 0, 0, INT32_MAX);
        switch (static_cast<int>(t)) {
          case pb::ALL_REDUCE:
            op.collective = "allreduce";
            break;
          case pb::ALL_GATHER:
            op.collective = "allgather";
            break;
          case pb::REDUCE_SCATTER:
          case pb::REDUCE_SCATTER_BLOCK:
            op.collective = "reduce_scatter";
            break;
          case pb::ALL_TO_ALL:
            op.collective = "alltoall";
            break;
          case pb::BROADCAST:
            op.collective = "broadcast";
            break;
          case pb::BARRIER:
            op.collective = "barrier";
            break;
          default:
            fail(n, fmt::format("comm_type {} ({}) is not supported; supported: ALL_REDUCE, ALL_GATHER, "
                                "REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, ALL_TO_ALL, BROADCAST, BARRIER",
                                t,
                                pb::CollectiveCommType_IsValid(static_cast<int>(t))
                                    ? pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(t))
                                    : "unknown"));
        }
        op.bytes = get_int(n, "comm_size", op.collective != "barrier", 0, 0, kMaxBytes);
        op.group = group_of(n);
        break;
      }
      case pb::COMM_SEND_NODE:
      case pb::COMM_RECV_NODE: {
        const bool send = n.type() == pb::COMM_SEND_NODE;
        op.kind = send ? TrainingOp::Kind::kSend : TrainingOp::Kind::kRecv;
        op.peer = static_cast<int32_t>(get_int(n, send ? "comm_dst" : "comm_src", true, 0, 0, nranks - 1));
        if (op.peer == rank)
          fail(n, fmt::format("{} its own rank {}", send ? "sends to" : "receives from", rank));
        op.bytes = get_int(n, "comm_size", true, 0, 0, kMaxBytes);
        op.tag = get_int(n, "comm_tag", false, 0, INT64_MIN, INT64_MAX);
        break;
      }
      default:
        fail(n, fmt::format("node type {} is not supported; rocesim reads {}",
                            pb::NodeType_IsValid(n.type()) ? pb::NodeType_Name(n.type())
                                                           : std::to_string(static_cast<int>(n.type())),
                            kSupportedTypes));
    }
    return op;
  }

  void read() {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "cannot open the Chakra trace file");
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string data = ss.str();
    // A bad message is our error naming the file, not the library's log line on stderr (it logs a string
    // field that is not UTF-8, say, before the parse fails).
    const google::protobuf::LogSilencer quiet;
    google::protobuf::io::ArrayInputStream arr(data.data(), static_cast<int>(data.size()));
    google::protobuf::io::CodedInputStream coded(&arr);
    coded.SetTotalBytesLimit(INT32_MAX);
    std::vector<pb::Node> nodes;
    bool metadata = false;
    uint64_t last_id = 0;
    for (size_t k = 0;; ++k) {
      const int at = coded.CurrentPosition();
      if (static_cast<size_t>(at) == data.size()) break;
      const std::string what =
          k == 0 ? std::string("the GlobalMetadata") : fmt::format("message {} (after node {})", k, last_id);
      uint32_t len = 0;
      if (!coded.ReadVarint32(&len))
        throw InputError(path, 0,
                         fmt::format("truncated or corrupt at byte {}: {}'s length is cut off", at, what));
      if (static_cast<size_t>(len) > data.size() - static_cast<size_t>(coded.CurrentPosition()))
        throw InputError(
            path, 0,
            fmt::format("truncated at byte {}: {} should have {} bytes, the file has {} left", at, what, len,
                        data.size() - static_cast<size_t>(coded.CurrentPosition())));
      const auto limit = coded.PushLimit(static_cast<int>(len));
      bool ok = false;
      if (k == 0) {
        pb::GlobalMetadata m;
        ok = m.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
        metadata = ok;
      } else {
        pb::Node n;
        ok = n.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
        if (ok) {
          last_id = n.id();
          nodes.push_back(std::move(n));
        }
      }
      coded.PopLimit(limit);
      if (!ok)
        throw InputError(path, 0,
                         fmt::format("corrupt at byte {}: {} is not a valid Chakra {}", at, what,
                                     k == 0 ? "GlobalMetadata" : "Node"));
    }
    if (!metadata) throw InputError(path, 0, "empty: a Chakra trace starts with a GlobalMetadata message");
    std::unordered_map<uint64_t, uint32_t> index;
    for (uint32_t i = 0; i < nodes.size(); ++i)
      if (!index.emplace(nodes[i].id(), i).second) fail(nodes[i], "node id used twice in the file");
    std::vector<TrainingOp>& ops = g.ranks[rank];
    ops.reserve(nodes.size());
    for (const pb::Node& n : nodes) {
      TrainingOp op = op_of(n);
      for (const auto* deps : {&n.data_deps(), &n.ctrl_deps()})
        for (uint64_t d : *deps) {
          auto it = index.find(d);
          if (it == index.end()) fail(n, fmt::format("depends on node {}, which is not in the file", d));
          op.after.push_back(it->second);
        }
      ops.push_back(std::move(op));
    }
  }
};

}  // namespace

std::vector<std::string> chakra_trace_files(const std::string& spec) {
  std::vector<fs::path> found;
  std::error_code ec;
  if (fs::is_directory(spec, ec)) {
    for (const auto& e : fs::directory_iterator(spec, ec))
      if (e.is_regular_file() && e.path().extension() == ".et") found.push_back(e.path());
  } else if (spec.find('*') != std::string::npos || spec.find('?') != std::string::npos) {
    const fs::path p(spec);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    const std::string pattern = p.filename().string();
    if (!fs::is_directory(dir, ec)) throw InputError(spec, 0, "no such folder: " + dir.string());
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file() && fnmatch(pattern.c_str(), e.path().filename().c_str(), 0) == 0)
        found.push_back(e.path());
  } else {
    if (!fs::exists(spec, ec)) throw InputError(spec, 0, "no such Chakra trace file or folder");
    return {spec};
  }
  if (found.empty()) throw InputError(spec, 0, "no .et files match");
  std::vector<std::string> files(found.size());
  for (const fs::path& f : found) {
    const int64_t r = rank_of(f.filename().string());
    if (r < 0)
      throw InputError(f.string(), 0,
                       "the file name does not end with its rank before .et (e.g. trace.0.et); list the "
                       "files in rank order instead");
    if (static_cast<size_t>(r) >= files.size())
      throw InputError(f.string(), 0,
                       fmt::format("rank {} but only {} files match, so ranks must be 0..{}", r, files.size(),
                                   files.size() - 1));
    if (!files[r].empty())
      throw InputError(f.string(), 0, fmt::format("rank {} also comes from {}", r, files[r]));
    files[r] = f.string();
  }
  return files;
}

TrainingGraph read_chakra_trace(const std::vector<std::string>& files,
                                const std::map<std::string, std::vector<int>>& groups, double compute_scale) {
  TrainingGraph g;
  const int n = static_cast<int>(files.size());
  g.rank_source = files;
  g.ranks.resize(files.size());
  std::vector<int> world(files.size());
  for (int r = 0; r < n; ++r) world[r] = r;
  g.groups.push_back(std::move(world));
  std::map<std::string, int32_t> index;
  for (int r = 0; r < n; ++r) {
    RankReader rr{files[r], r, n, groups, index, g, compute_scale};
    rr.read();
  }
  return g;
}

void write_chakra_trace(const std::string& path, const std::vector<ChakraNodeOut>& nodes) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream so(&out);
    google::protobuf::io::CodedOutputStream co(&so);
    pb::GlobalMetadata meta;
    meta.set_version("0.0.4");
    co.WriteVarint32(static_cast<uint32_t>(meta.ByteSizeLong()));
    meta.SerializeToCodedStream(&co);
    for (const ChakraNodeOut& x : nodes) {
      pb::Node n;
      n.set_id(x.id);
      n.set_name(x.name);
      n.set_type(static_cast<pb::NodeType>(x.type));
      n.set_duration_micros(x.duration_us);
      for (uint64_t d : x.data_deps) n.add_data_deps(d);
      for (uint64_t d : x.ctrl_deps) n.add_ctrl_deps(d);
      for (const auto& [k, v] : x.ints) {
        pb::AttributeProto* a = n.add_attr();
        a->set_name(k);
        a->set_int64_val(v);
      }
      for (const auto& [k, v] : x.strings) {
        pb::AttributeProto* a = n.add_attr();
        a->set_name(k);
        a->set_string_val(v);
      }
      co.WriteVarint32(static_cast<uint32_t>(n.ByteSizeLong()));
      n.SerializeToCodedStream(&co);
    }
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace rocesim
