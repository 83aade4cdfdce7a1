#include "app/estimate.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace rocesim {

namespace {

// Lengths (in links) of shortest paths between hosts, by breadth-first searches from the destination's
// side, kept per destination switch: a host with one link is reached from its switch, so that every host
// below one switch shares a search. Searches stop once `max_visits` nodes have been visited in all, or
// their tables would pass kMaxTableBytes: a pair not reached by then is unknown.
class PathLengths {
 public:
  PathLengths(const TopoSpec& t, uint64_t max_visits) : t_(t), max_visits_(max_visits) {
    const size_t n = static_cast<size_t>(t.num_nodes);
    std::vector<uint32_t> degree(n + 1, 0);
    for (const LinkSpec& l : t.links) {
      ++degree[static_cast<size_t>(l.a)];
      ++degree[static_cast<size_t>(l.b)];
    }
    first_.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) first_[i + 1] = first_[i] + degree[i];
    adj_.resize(first_[n]);
    std::vector<uint32_t> fill(first_.begin(), first_.end() - 1);
    for (const LinkSpec& l : t.links) {
      adj_[fill[static_cast<size_t>(l.a)]++] = static_cast<uint32_t>(l.b);
      adj_[fill[static_cast<size_t>(l.b)]++] = static_cast<uint32_t>(l.a);
    }
    max_tables_ = std::max<size_t>(1, kMaxTableBytes / (sizeof(uint16_t) * std::max<size_t>(n, 1)));
  }

  // Links from `src` to `dst`, or -1 when unknown (unreachable, or beyond the search budget).
  int hops(int src, int dst) {
    const auto d = static_cast<size_t>(dst);
    // The node a search towards dst starts from: its only neighbour (a host's switch), or dst itself.
    const bool one_link = !t_.is_switch[d] && first_[d + 1] - first_[d] == 1;
    const int anchor = one_link ? static_cast<int>(adj_[first_[d]]) : dst;
    const std::vector<uint16_t>* table = find(anchor);
    if (!table) return -1;
    const uint16_t v = (*table)[static_cast<size_t>(src)];
    if (v == kUnreached) return -1;
    return v + (one_link ? 1 : 0);
  }

 private:
  static constexpr uint16_t kUnreached = std::numeric_limits<uint16_t>::max();
  static constexpr size_t kMaxTableBytes = size_t{64} << 20;

  const std::vector<uint16_t>* find(int anchor) {
    if (auto it = tables_.find(anchor); it != tables_.end()) return &it->second;
    const size_t n = static_cast<size_t>(t_.num_nodes);
    if (visits_ + n > max_visits_ || tables_.size() >= max_tables_) return nullptr;
    std::vector<uint16_t> dist(n, kUnreached);
    std::vector<uint32_t> queue;
    queue.reserve(n);
    dist[static_cast<size_t>(anchor)] = 0;
    queue.push_back(static_cast<uint32_t>(anchor));
    for (size_t q = 0; q < queue.size(); ++q) {
      const uint32_t u = queue[q];
      // Hosts do not forward: only the search's own start is expanded among them.
      if (!t_.is_switch[u] && u != static_cast<uint32_t>(anchor)) continue;
      for (uint32_t e = first_[u]; e < first_[u + 1]; ++e) {
        const uint32_t v = adj_[e];
        if (dist[v] != kUnreached) continue;
        dist[v] = static_cast<uint16_t>(dist[u] + 1);
        queue.push_back(v);
      }
    }
    visits_ += n;
    return &tables_.emplace(anchor, std::move(dist)).first->second;
  }

  const TopoSpec& t_;
  uint64_t max_visits_;
  uint64_t visits_ = 0;
  size_t max_tables_ = 1;
  std::vector<uint32_t> first_, adj_;  // adjacency lists (CSR)
  std::unordered_map<int, std::vector<uint16_t>> tables_;
};

// The running sums of the estimate.
struct Sums {
  PathLengths& paths;
  Bytes mtu;
  Time duration;
  WorkEstimate& w;
  double hop_packets = 0, sampled_packets = 0;

  void add(int src, int dst, Bytes size, Time start, double times = 1) {
    const double packets = static_cast<double>((std::max<Bytes>(size, 1) + mtu - 1) / mtu);
    w.flows += static_cast<uint64_t>(times);
    w.bytes += static_cast<Bytes>(static_cast<double>(size) * times);
    w.data_packets += packets * times;
    if (!w.bytes_by_start.empty()) w.bytes_by_start[bin(start)] += static_cast<double>(size) * times;
    if (const int h = paths.hops(src, dst); h > 0) {
      hop_packets += packets * h * times;
      sampled_packets += packets * times;
      ++w.hop_samples;
    }
  }
  size_t bin(Time t) const {
    const size_t n = w.bytes_by_start.size();
    if (duration.ps <= 0 || t.ps <= 0) return 0;
    return std::min(n - 1, static_cast<size_t>(static_cast<double>(t.ps) / static_cast<double>(duration.ps) *
                                               static_cast<double>(n)));
  }
};

}  // namespace

WorkEstimate estimate_work(const Scenario& s, const EstimateOptions& opt) {
  WorkEstimate w;
  if (opt.time_bins > 0) w.bytes_by_start.assign(static_cast<size_t>(opt.time_bins), 0.0);
  PathLengths paths(s.topo, opt.max_bfs_visits);
  Sums sums{paths, std::max<Bytes>(s.nic.mtu_bytes, 1), s.duration, w};

  // The flows pulled from the sources: flow file, [[flows]] and the generators, in start order.
  auto source = s.make_flow_source();
  Time first = Time::max();
  uint64_t drawn = 0;
  for (FlowSpec f; source->next(f);) {
    if (f.start >= s.duration) break;  // a run never starts it (nor any later one)
    if (drawn == opt.max_flows) {
      w.extrapolated = true;
      break;
    }
    ++drawn;
    first = std::min(first, f.start);
    w.last_start = f.start;
    sums.add(f.src, f.dst, f.size_bytes, f.start);
  }
  if (w.extrapolated && w.last_start > first) {
    // Arrivals go on at the rate drawn so far until the generators stop (or the run ends).
    Time end = Time::zero();
    for (const TrafficSpec& t : s.traffic)
      if (t.enabled) end = std::max(end, std::min(t.stop, s.duration));
    if (end == Time::zero()) end = s.duration;
    const double drawn_span = static_cast<double>((w.last_start - first).ps);
    const double scale = std::max(1.0, static_cast<double>((end - first).ps) / drawn_span);
    const Bytes drawn_bytes = w.bytes;
    w.flows = static_cast<uint64_t>(static_cast<double>(w.flows) * scale);
    w.bytes = static_cast<Bytes>(static_cast<double>(w.bytes) * scale);
    w.data_packets *= scale;
    w.scanned_until = w.last_start;
    // The extrapolated bytes, spread evenly over the bins from the last flow drawn to the end.
    if (!w.bytes_by_start.empty() && end > w.last_start) {
      const size_t b0 = sums.bin(w.last_start), b1 = sums.bin(end - Time::from_ps(1));
      const double extra = static_cast<double>(w.bytes - drawn_bytes) / static_cast<double>(b1 - b0 + 1);
      for (size_t b = b0; b <= b1; ++b) w.bytes_by_start[b] += extra;
    }
    w.last_start = end;
  }

  // Collective, dependency_trace and training jobs: their graphs, every iteration (whether or not the run's
  // end comes first), at the job's start.
  if (auto jobs = s.make_dependent_flows()) {
    w.jobs = true;
    for (size_t j = 0; j < jobs->num_jobs(); ++j) {
      const DagJob& job = jobs->job(j);
      for (uint32_t i = 0; i < job.dag.size(); ++i) {
        if (job.dag.is_timer(i)) continue;  // a training job's compute: no traffic
        const FlowDag::Flow& f = job.dag.flow(i);
        sums.add(f.src, f.dst, f.bytes, job.start, job.iterations);
      }
    }
  }

  if (drawn > 0) w.first_start = first;
  w.mean_hops = sums.sampled_packets > 0 ? sums.hop_packets / sums.sampled_packets : 0;
  const double ack_per_packet = 1.0 / std::max(1, s.nic.ack_interval);
  w.packet_hops = w.data_packets * w.mean_hops * (1 + ack_per_packet);
  return w;
}

}  // namespace rocesim
