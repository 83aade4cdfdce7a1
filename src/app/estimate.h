// How much work a run of a scenario is, predicted from the scenario without running it (`rocesim
// validate`, and the ETA of the progress lines): the flows that start before the end of the run, their
// payload, and the packet-hops they cost. docs/user-guide.md ("How long a run will take") describes the
// model; docs/performance.md holds its measured error on the benchmark cases.
#pragma once
#include <cstdint>
#include <vector>

#include "config/scenario.h"
#include "core/time.h"

namespace rocesim {

struct WorkEstimate {
  uint64_t flows = 0;         // flows that start before the end of the run (every iteration of the jobs)
  Bytes bytes = 0;            // their payload
  double data_packets = 0;    // sum over the flows of ceil(size / nic.mtu_bytes)
  double mean_hops = 0;       // links on a flow's (shortest) path, weighted by data packets
  double packet_hops = 0;     // predicted: data_packets x mean_hops x (1 + 1 / nic.ack_interval)
  bool extrapolated = false;  // the generated flows were drawn up to `scanned_until`, the rest extrapolated
  Time scanned_until;         // with `extrapolated`: the start of the last flow drawn
  bool jobs = false;          // includes collective / dependency_trace jobs, every iteration counted
  uint64_t hop_samples = 0;   // flows whose path length was computed (the others take the mean)
  // With EstimateOptions::time_bins: the payload of the flows by start time, in bins of duration /
  // time_bins (a job's flows at the job's start), and the start of the last flow drawn.
  std::vector<double> bytes_by_start;
  Time first_start = Time::max();  // of the flows drawn (Time::max(): none)
  Time last_start;
};

// Limits of the work the estimate itself may do: flows drawn from the scenario's sources (beyond them the
// generated flows are extrapolated linearly in time) and nodes visited by the breadth-first searches that
// measure path lengths (beyond them a flow takes the mean of those measured; 0: no path lengths).
struct EstimateOptions {
  uint64_t max_flows = 4'000'000;
  uint64_t max_bfs_visits = 50'000'000;
  int time_bins = 0;  // > 0: fill WorkEstimate::bytes_by_start
};

// Events per packet-hop where no probe measured them: 1.2-1.4 in the benchmark cases, under DCQCN, HPCC,
// TIMELY, DCTCP and no scheme alike (docs/performance.md, "Estimates of events and wall time").
inline constexpr double kTypicalEventsPerHop = 1.3;

// Draws the scenario's flows (as a run would, from fresh sources: the run itself is not touched) up to the
// end of the run and predicts the packet-hops they cost. Data packets cross every link of their path, and
// so do the ACKs (one per nic.ack_interval data packets) on the way back; CNPs, PFC frames and
// retransmissions are left out (under 1 % of the hops in the benchmark cases), and flows still
// unfinished at the end of the run count whole. Throws InputError on a bad flow file, as a run would.
WorkEstimate estimate_work(const Scenario& s, const EstimateOptions& opt = {});

}  // namespace rocesim
