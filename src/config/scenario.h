// A scenario: everything a run needs, typed and validated. Built from a TOML file (plus --set
// overrides); every value used, defaults included, is kept for scenario.resolved.toml.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "cc/registry.h"
#include "config/config.h"
#include "config/monitors.h"
#include "net/link_events.h"
#include "net/settings.h"
#include "topo/topology.h"
#include "workload/flow.h"
#include "workload/flow_dag.h"
#include "workload/flow_file.h"
#include "workload/training.h"

namespace rocesim {

class SizeCdf;
class CongestionControl;

struct TrafficSpec {  // one generator of flows
  std::string pattern = "all_to_all";
  bool enabled = true;                 // false: read and checked, but no flow (a sweep's on/off switch)
  std::string workload = "websearch";  // a catalogue name or a CDF file path
  std::string workload_path;           // resolved file
  double load = 0.3;                   // fraction of each sender's link rate
  Time start;
  Time stop = Time::max();
  uint64_t max_flows = 0;
  int priority = 3;
  uint16_t class_id = 0;
  std::vector<int> hosts;  // participating hosts (default: all)
  // Pattern keys (config/traffic.cc lists which pattern reads which); node ids throughout.
  Bytes size_bytes = 0;          // fixed flow size instead of sampling `workload` (0 = sample)
  std::vector<int> src, dst;     // senders / receivers (set_to_set, incast, burst)
  std::vector<int> group_of;     // groups: group label of each of `hosts`
  std::vector<int> hot;          // hotspot: the hot hosts
  double hot_fraction = 0.15;    // hotspot: share of flows to the hot set
  uint16_t hot_class_id = 0;     // hotspot: class of the hot flows
  bool bg_to_all = false;        // hotspot: background_to_all (background to any host, not non-hot only)
  Rate load_of;                  // set_to_set: load is of this rate (0 = of each sender's link)
  bool long_lived = false;       // permutation: one size_bytes flow per pair instead of Poisson
  int fan_in = 0;                // incast: senders per round
  Time period, jitter;           // incast: between rounds (0 = one round); start spread
  uint64_t rounds = 0;           // incast: number of rounds (0 = until stop)
  uint64_t count = 1;            // burst: flows per sender (0 = until stop)
  Time gap = Time::from_ps(-1);  // burst: between a sender's flows (< 0 = back to back)
  std::vector<FlowSpec> flows;   // long_lived: the flows
  // collective / dependency_trace (one job per table; workload/collectives.h, workload/dependency_trace.h)
  std::string job;                  // the job's label (collectives.csv, summary.json "jobs")
  std::string collective;           // collective: the algorithm
  int chunks = 1;                   // collective: chunks per step's message
  uint64_t iterations = 1;          // collective: iterations
  uint32_t timeline_iteration = 0;  // collective, chakra, simai: the iteration job_timeline.csv shows
  Time compute;                     // collective: gap between an iteration's end and the next
  Time step_latency;                // collective: added before every flow of a step
  std::string placement;            // collective: how `hosts` became ranks (workload/collectives.h)
  bool pxn = false;                 // collective: relay cross-rail flows over NVLink (PXN)
  std::string trace_path;           // dependency_trace, simai: the file
  // chakra, simai (workload/training.h): the job compiled at reading (its graph, collectives, the files)
  std::shared_ptr<const CompiledTraining> training;
  std::vector<std::string> trace_files;  // chakra: rank r's file at index r
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  uint64_t seed = 1;
  // Threads of one run; 0 = every core; left out (kThreadsAuto, -1): every core for a large fabric, one
  // thread for a small one (docs/parallel.md, "Threads by default"). Results do not depend on it.
  static constexpr int kThreadsAuto = -1;
  int threads = kThreadsAuto;
  int partitions = 0;  // of the fabric, at least threads x ranks; 0 = chosen by Network (docs/parallel.md)
  Time duration = Time::from_ms(10);  // simulated time limit
  bool stop_when_done = true;         // stop as soon as every flow finished

  TopoSpec topo;
  SwitchSettings sw;
  NicSettings nic;

  std::string scheme = "dcqcn";
  SchemeFactory scheme_factory;  // builds the configured scheme (cc/registry.h)

  std::vector<LinkEvent> events;  // [[events]]: link failures, recoveries, rate and loss changes, by time

  std::vector<FlowSpec> inline_flows;
  std::string flow_file;  // ns-3 HPCC flow file, if any
  // How its start times are read: flow_file.start_times, "exact" [rocesim choice] or "hpcc_sim" (the
  // simulator's 1 ns floor of a double; profile hpcc-sim).
  FlowStartTimes flow_start_times = FlowStartTimes::kExact;
  std::vector<TrafficSpec> traffic;
  std::vector<std::string> class_labels{"default"};

  std::vector<Bytes> size_buckets;  // bucket edges; empty = defaults
  Bytes short_flow_bytes = 100'000;
  bool write_hpcc_fct = false;
  // flows.csv's per-flow retransmitted packets/bytes and out-of-order arrivals, and summary.json's
  // "loss_recovery" block [default: on with nic.loss_recovery = "selective"].
  bool transport_columns = false;
  MonitorSpec monitors;  // [monitors]: nothing by default (config/monitors.h)

  toml::table resolved;        // every value used
  std::string resolved_notes;  // "# key: how it was decided" lines for values decided by rule
  // Combinations that run but cost more than they seem to (go-back-N under per-packet routing): `validate`
  // and `run` print them, summary.json keeps them.
  std::vector<std::string> warnings;

  // The scheme object configured by this scenario.
  std::unique_ptr<CongestionControl> make_scheme() const;
  // A merged, streaming source of every flow the scenario declares (owns what it needs).
  std::unique_ptr<FlowSource> make_flow_source() const;
  // The jobs of the collective and dependency_trace [[traffic]] tables, or nullptr when there are none.
  std::unique_ptr<DagRunner> make_dependent_flows() const;
};

// Reads and validates a scenario. Throws InputError naming the file and line of the first problem.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
Scenario load_scenario_text(std::string_view text, const std::string& name,
                            const std::vector<std::string>& overrides = {});

// The flows a scenario lists rather than generates ([[flows]] and the flow file, read whole: every line
// checked as a run reads it): how many, how many start at or after the end of the run, first/last start.
struct ListedFlows {
  uint64_t flows = 0;
  uint64_t after_end = 0;  // start >= duration: a run never starts them
  Time first_start = Time::max();
  Time last_start;
};
ListedFlows scan_listed_flows(const Scenario& s);
// What `validate` and `run` say when no flow starts before the end of the run (an error), and when
// `after_end` of `total` flows do not (a warning), with the duration_ms that would run them.
std::string no_flow_before_end_message(const Scenario& s, Time first_start, Time last_start);
std::string flows_after_end_message(const Scenario& s, uint64_t after_end, uint64_t total, Time last_start);

// Helpers shared by the config readers.
std::string resolve_path(const Config& c, const std::string& p);        // relative to the scenario file
int node_ref(Config& c, const TopoSpec& topo, const std::string& key);  // a host by name or id
// The host named by `v` (a name, or an id as Config::get_id_or_name returns it); errors name `key`.
int host_id(Config& c, const TopoSpec& topo, const std::string& key, const std::string& v);
uint16_t class_index(std::vector<std::string>& labels, const std::string& name);

// Names for `rocesim list`.
std::vector<std::string> scheme_names();
std::vector<std::string> topology_kinds();

}  // namespace rocesim
