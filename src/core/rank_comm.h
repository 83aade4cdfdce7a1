// One run over several processes (ranks): what the simulator and the network need from the layer that
// connects them (app/mpi_run.h implements it with MPI; core/ and net/ never include MPI). Every call is a
// collective: every rank makes the same calls in the same order.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/event_queue.h"

namespace rocesim {

class RankComm {
 public:
  virtual ~RankComm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank sends out[r] to rank r (out has size() entries) and receives in[r] from rank r.
  virtual void exchange(const std::vector<std::vector<char>>& out, std::vector<std::vector<char>>& in) = 0;
  // Every rank contributes `mine`; all[r] is rank r's, on every rank.
  virtual void all_gather(const std::vector<char>& mine, std::vector<std::vector<char>>& all) = 0;
  // Element-wise over the ranks, in place: v[i] = min over ranks (min), sum (sum).
  virtual void all_min(int64_t* v, int n) = 0;
  virtual void all_sum(int64_t* v, int n) = 0;
  // Bytes this rank has sent through exchange() and all_gather() (for summary.json).
  virtual uint64_t bytes_sent() const = 0;
};

// Turns the events one partition sends another on another rank into bytes and back. The network
// implements it for packet arrivals (the only events that cross partitions): encode writes the packet and
// frees it on the sending rank, decode rebuilds it from the receiving partition's pool.
class EventCodec {
 public:
  virtual ~EventCodec() = default;
  // Appends event `e`, sent by partition `from_partition`, to `out`.
  virtual void encode(const Event& e, uint32_t from_partition, std::vector<char>& out) = 0;
  // Reads one event from `in` (advancing it), for partition `dest_partition`.
  virtual Event decode(const char*& in, uint32_t dest_partition) = 0;
};

// Packing plain values for the exchanges: put appends `v`'s bytes, take reads them back and advances `in`.
template <typename T>
void put_raw(std::vector<char>& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}
template <typename T>
T take_raw(const char*& in) {
  static_assert(std::is_trivially_copyable_v<T>);
  T v;
  std::memcpy(&v, in, sizeof(T));
  in += sizeof(T);
  return v;
}

}  // namespace rocesim
