#include "workload/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "core/error.h"

namespace rocesim {

namespace {

[[noreturn]] void fail(const std::string& what) { throw InputError("", 0, "collective: " + what); }

// Bytes [S·i/N, S·(i+1)/N) of the buffer: segment i's size.
Bytes segment(Bytes s, int n, int64_t i) { return s * (i + 1) / n - s * i / n; }
// Bytes of segments [first, first + count).
Bytes segments(Bytes s, int n, int64_t first, int64_t count) {
  return s * (first + count) / n - s * first / n;
}
Bytes chunk(Bytes m, int c_count, int c) { return m * (c + 1) / c_count - m * c / c_count; }

int mod(int64_t a, int n) { return static_cast<int>(((a % n) + n) % n); }

// Flows of (rank, step), each a message of `chunks` chunks, indexed (step x N + rank) x C + chunk.
struct Builder {
  const CollectiveParams& p;
  int n, c;
  FlowDag dag;
  explicit Builder(const CollectiveParams& params)
      : p(params), n(static_cast<int>(params.hosts.size())), c(params.chunks) {}
  uint32_t id(int rank, int step, int ch) const {
    return static_cast<uint32_t>((static_cast<int64_t>(step) * n + rank) * c + ch);
  }
  // Adds rank `r`'s message of step `s` to rank `to`; in chunks, each after the previous one.
  void message(int r, int s, int to, Bytes m) {
    for (int ch = 0; ch < c; ++ch) {
      const uint32_t f =
          dag.add(p.hosts[r], p.hosts[to], chunk(m, c, ch), static_cast<uint32_t>(s), p.step_latency);
      if (f != id(r, s, ch)) throw std::logic_error("collective: flows added out of order");
      if (ch > 0) dag.wait(f, f - 1);
    }
  }
  // Chunk ch of (r, s) waits for chunk ch of (r2, s2).
  void waits(int r, int s, int r2, int s2) {
    for (int ch = 0; ch < c; ++ch) dag.wait(id(r, s, ch), id(r2, s2, ch));
  }
};

void ring(Builder& b, int steps, int first_phase_step) {
  const int n = b.n;
  for (int s = 0; s < steps; ++s)
    for (int r = 0; r < n; ++r)
      b.message(r, s, (r + 1) % n, segment(b.p.bytes, n, mod(r - s - first_phase_step, n)));
  for (int s = 1; s < steps; ++s)
    for (int r = 0; r < n; ++r) b.waits(r, s, mod(r - 1, n), s - 1);
}

void halving_doubling(Builder& b) {
  const int n = b.n;
  const int levels = std::countr_zero(static_cast<unsigned>(n));
  const Bytes s = b.p.bytes;
  std::vector<int> partner_of_step;
  for (int k = 0; k < levels; ++k) {  // recursive halving: distance N/2, N/4, ..., 1
    const int dist = n >> (k + 1);
    for (int r = 0; r < n; ++r) {
      const int partner = r ^ dist;
      // r's range before this step: the aligned N/2^k blocks containing r; it sends the partner's half.
      const int64_t half_base = static_cast<int64_t>(partner) & ~static_cast<int64_t>(dist - 1);
      b.message(r, k, partner, segments(s, n, half_base, dist));
    }
    partner_of_step.push_back(dist);
  }
  for (int k = 0; k < levels; ++k) {  // recursive doubling: distance 1, 2, ..., N/2
    const int dist = 1 << k;
    for (int r = 0; r < n; ++r) {
      const int64_t base = static_cast<int64_t>(r) & ~static_cast<int64_t>(dist - 1);
      b.message(r, levels + k, r ^ dist, segments(s, n, base, dist));
    }
    partner_of_step.push_back(dist);
  }
  for (int st = 1; st < 2 * levels; ++st)
    for (int r = 0; r < n; ++r) b.waits(r, st, r ^ partner_of_step[st - 1], st - 1);
}

void alltoall(Builder& b) {
  const int n = b.n;
  for (int k = 1; k < n; ++k)
    for (int r = 0; r < n; ++r) b.message(r, k - 1, (r + k) % n, segment(b.p.bytes, n, (r + k) % n));
  for (int k = 2; k < n; ++k)
    for (int r = 0; r < n; ++r) {
      b.waits(r, k - 1, r, k - 2);                    // its own send of step k-1
      b.waits(r, k - 1, mod(r - (k - 1), n), k - 2);  // what it received in step k-1
    }
}

void broadcast(Builder& b) {
  // Step i: rank i -> i+1, flows indexed as (step i, rank 0): one message per step.
  const int n = b.n, c = b.c;
  for (int i = 0; i + 1 < n; ++i)
    for (int ch = 0; ch < c; ++ch) {
      const uint32_t f = b.dag.add(b.p.hosts[i], b.p.hosts[i + 1], chunk(b.p.bytes, c, ch),
                                   static_cast<uint32_t>(i), b.p.step_latency);
      if (ch > 0) b.dag.wait(f, f - 1);
      if (i > 0) b.dag.wait(f, f - static_cast<uint32_t>(c));
    }
}

int steps_of(const std::string& a, int n) {
  if (a == "ring_allreduce") return 2 * (n - 1);
  if (a == "halving_doubling_allreduce") return 2 * std::countr_zero(static_cast<unsigned>(n));
  return n - 1;  // reduce_scatter, allgather, alltoall, broadcast
}

}  // namespace

const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> names{
      "ring_allreduce", "halving_doubling_allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast"};
  return names;
}

FlowDag build_collective(const CollectiveParams& p) {
  const auto& names = collective_names();
  if (std::find(names.begin(), names.end(), p.algorithm) == names.end())
    fail(fmt::format("unknown collective '{}'; expected one of {}", p.algorithm, fmt::join(names, ", ")));
  const int n = static_cast<int>(p.hosts.size());
  if (n < 2) fail("needs at least 2 hosts");
  std::vector<int> sorted = p.hosts;
  std::sort(sorted.begin(), sorted.end());
  if (auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end())
    fail(fmt::format("node {} listed twice in the hosts", *d));
  if (p.chunks < 1) fail("chunks must be >= 1");
  if (p.step_latency < Time::zero()) fail("the step latency must be >= 0");
  const int64_t parts = p.algorithm == "broadcast" ? p.chunks : static_cast<int64_t>(n) * p.chunks;
  if (p.bytes < parts)
    fail(fmt::format("bytes = {} is less than one byte per flow ({} {}); raise bytes or lower chunks",
                     p.bytes, parts, p.algorithm == "broadcast" ? "chunks" : "ranks x chunks"));
  if (p.algorithm == "halving_doubling_allreduce" && !std::has_single_bit(static_cast<unsigned>(n)))
    fail(
        fmt::format("halving_doubling_allreduce needs a power-of-two number of hosts, got {}; use "
                    "ring_allreduce or {} hosts",
                    n, std::bit_floor(static_cast<unsigned>(n))));
  const int64_t flows =
      static_cast<int64_t>(steps_of(p.algorithm, n)) * (p.algorithm == "broadcast" ? 1 : n) * p.chunks;
  if (flows > int64_t{1} << 31)
    fail(fmt::format("{} flows per iteration is more than this simulator holds (2^31); lower chunks", flows));
  Builder b(p);
  const std::string& a = p.algorithm;
  if (a == "ring_allreduce")
    ring(b, 2 * (n - 1), 0);
  else if (a == "reduce_scatter")
    ring(b, n - 1, 0);
  else if (a == "allgather")
    ring(b, n - 1, n - 1);
  else if (a == "halving_doubling_allreduce")
    halving_doubling(b);
  else if (a == "alltoall")
    alltoall(b);
  else
    broadcast(b);
  if (b.dag.seal() >= 0) throw std::logic_error("collective: the built graph has a cycle");
  return std::move(b.dag);
}

int64_t collective_flow_count(const std::string& algorithm, int n, int chunks) {
  return static_cast<int64_t>(steps_of(algorithm, n)) * (algorithm == "broadcast" ? 1 : n) * chunks;
}

double bus_bandwidth_factor(const std::string& a, int n) {
  const double f = static_cast<double>(n - 1) / n;
  if (a == "ring_allreduce" || a == "halving_doubling_allreduce") return 2 * f;
  if (a == "broadcast") return 1;
  return f;
}

Time collective_ideal_time(const CollectiveParams& p, Rate link) {
  const int n = static_cast<int>(p.hosts.size());
  const double s_ps = static_cast<double>(p.bytes) * 8e12 / link.bps;  // S/B
  const double l_ps = static_cast<double>(p.step_latency.ps);
  const std::string& a = p.algorithm;
  double t = 0;
  if (a == "ring_allreduce")
    t = 2.0 * (n - 1) * (s_ps / n + l_ps);
  else if (a == "halving_doubling_allreduce")
    t = 2.0 * (n - 1) / n * s_ps + 2.0 * std::countr_zero(static_cast<unsigned>(n)) * l_ps;
  else if (a == "broadcast")
    t = (n - 1.0 + p.chunks - 1.0) * (s_ps / p.chunks + l_ps);
  else
    t = (n - 1.0) * (s_ps / n + l_ps);
  return Time::from_ps(static_cast<int64_t>(t + 0.5));
}

}  // namespace rocesim
