// [[traffic]] tables: flow generators (workload x traffic pattern) of a scenario.
//
// Keys of every table: pattern (default "all_to_all"), class (label in flows.csv, default "default"),
// priority (1..7, default nic.data_priority), start_us (0), stop_us (end of run), max_flows (0 = no limit),
// enabled (true; false: the table is read and checked but makes no flow, e.g. --grid traffic[1].enabled=
// true,false; the other tables keep their random streams).
// Flow sizes, where a pattern samples them: size_bytes (every flow this size) or workload (a catalogue
// name or a CDF file; default "websearch"), not both. Node lists (hosts, src, dst, senders, hot_hosts)
// take one node or an array of node names / ids, and ranges "h0..h15" / "B1..B8" / "0..15".
//
//   all_to_all   hosts (all), load (0.3): Poisson per host, uniform destination among the other hosts.
//   groups       hosts, groups | group_size, load: all_to_all inside groups of consecutive hosts (groups:
//                that many near-equal groups; group_size: must divide the host count).
//   permutation  hosts, load: each host sends only to its partner (a random derangement from the seed);
//                long_lived = true with size_bytes: one flow per host at start_us instead of Poisson.
//   incast       senders (all hosts), fan_in (default: every sender when senders is given), dst (default:
//                a random host per round), period_us (none: one round), rounds (1 without a period, else
//                0 = until stop), jitter_us (0; <= period): every round, fan_in distinct random senders
//                each send one flow to the round's receiver (dport 200).
//   hotspot      hosts, load, hot_fraction (0.15), hot_hosts | hot_share (0.125: that share of the hosts,
//                at least one, chosen by the seed), hot_class ("hot"): a flow goes to a hot host with
//                probability hot_fraction (class hot_class), else to a non-hot host (class `class`);
//                background_to_all (false): the background flows go to any host, hot ones included.
//   set_to_set   src | src_group, dst | dst_group (host_group indexes, e.g. ToR or datacenter), load,
//                load_of (Gb/s): Poisson from every source to a uniform destination; load is a fraction of
//                each source's link rate, or with load_of of that rate, shared equally by the sources.
//   long_lived   [[traffic.flows]] with src, dst, start_us, size_bytes or stop_us, rate_gbps; the table's
//                start_us / stop_us / size_bytes / rate_gbps are the defaults. A flow given stop_us but no
//                size gets size = rate_gbps x (stop - start) / 8 (rate default: the slower of its two host
//                links), i.e. it ends at stop only if it runs at that rate (a flow cannot be cut short).
//   burst        senders (all hosts but dst), dst, count (1; 0 = until stop), gap_us (default: back to
//                back, size_bytes at the sender's link rate; needed with sampled sizes): each sender's
//                k-th flow starts at start_us + k x gap_us.
//   collective   collective (ring_allreduce | halving_doubling_allreduce | reduce_scatter | allgather |
//                alltoall | broadcast | hierarchical_ring_allreduce | tree_allreduce), hosts (all; rank
//                order), placement ("listed": as hosts lists them; "packed", "spread": by GPU server),
//                pxn (false: relay cross-rail flows over NVLink), bytes (per-rank buffer), iterations (1),
//                compute_us (0: gap between iterations), chunks (1), step_latency_us (0), job ("job<index>",
//                also the flows' default class): one job, its steps' flows released as the flows they wait
//                for finish (workload/collectives.h). No stop_us / max_flows.
//   dependency_trace  file (CSV or JSON Lines; workload/dependency_trace.h), job: flows that start at a
//                time or after other flows; start_us shifts the whole trace.
//   chakra       files (a folder, a "name.*.et" pattern or a list in rank order; workload/chakra.h), groups
//                ([{name, ranks}]: the process groups by pg_name), ranks (hosts; default the first N),
//                compute_scale (1), iterations (1), allreduce (ring_allreduce), chunks, step_latency_us,
//                job: a training job (workload/training.h), read and compiled when the table is read.
//   simai        file (a SimAI/AICB workload file; workload/simai.h), micro_batches (0: the file's ga when
//                pp > 1, else 1), ranks, compute_scale, iterations, allreduce, chunks, step_latency_us, job:
//                as chakra.
#pragma once
#include <memory>
#include <vector>

#include "config/scenario.h"
#include "workload/cdf.h"
#include "workload/collectives.h"
#include "workload/generators.h"

namespace rocesim {

// Reads every [[traffic]] table into s.traffic (after s.topo, s.seed, s.nic are known).
void read_traffic(Config& c, Scenario& s);
// Adds one streaming generator per traffic spec to `merged`; CDFs are kept alive in `cdfs`.
void add_traffic_sources(const Scenario& s, MergedSource& merged,
                         std::vector<std::unique_ptr<SizeCdf>>& cdfs);
// Adds one job per collective / dependency_trace / chakra / simai table (in table order) to `runner`.
void add_traffic_jobs(const Scenario& s, DagRunner& runner);
// The generator of s.traffic[index]; `sizes` is its loaded workload (nullptr when it has size_bytes).
// Its random streams are named "traffic<index>". Throws InputError for parameters the reader let through.
std::unique_ptr<FlowSource> make_traffic_source(const Scenario& s, size_t index, const SizeCdf* sizes);
// The parameters of a collective table's job (its ranks, the topology's GPU servers).
CollectiveParams collective_params(const Scenario& s, const TrafficSpec& t);
// The access-link rate of every node (the fastest link of a host; zero for switches and unlinked hosts).
std::vector<Rate> host_link_rates(const TopoSpec& topo);

}  // namespace rocesim
