// The ns-3 HPCC simulator's topology file (alibaba-edu/High-Precision-Congestion-Control, read by its
// scratch/third.cc; docs/hpcc-sim-compat.md), read as it is and written back:
//
//   nodes switches links            e.g. 376 56 480
//   <switch ids, whitespace separated, exactly `switches` of them>
//   a b rate delay error_rate       one line per link, e.g. 0 320 100Gbps 1000ns 0.000000
//
// ns-3 reads the file as a token stream; we read it line by line (as every generated file is laid out)
// so errors can name the line. Blank lines and any whitespace (spaces, tabs, CR) are fine anywhere; the
// switch-id line is absent when `switches` is 0. Every id that is not a switch is a host.
//
// Node kinds (ours; ns-3 stops reading after the links): after the links, a line "gpu <host ids>" names GPUs
// and a line "nvswitch <switch ids>" a server's NVSwitch (TopoSpec::kind, docs/models.md A14), e.g.
//   gpu 0 1 2 3
//   nvswitch 8
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "core/time.h"
#include "topo/topology.h"

namespace rocesim {

// ns-3 DataRate syntax (ns-3.17 DataRate::DoParse): a decimal number without sign or exponent ("100",
// "2.5", ".5") followed by one of bps b/s Bps B/s, kbps kb/s Kbps Kb/s kBps kB/s KBps KB/s Kib/s KiB/s,
// Mbps Mb/s MBps MB/s Mib/s MiB/s, Gbps Gb/s GBps GB/s Gib/s GiB/s (B = bytes = 8 bits; k/K/M/G decimal,
// Ki/Mi/Gi binary), or nothing (bits/s). Like ns-3's integer DataRate the value is truncated to whole
// bits/s (computed exactly in decimal). Returns nullopt for anything else and for values of 2^63 bps or
// more; never throws. A zero result ("0Gbps", "0.5bps") is returned as Rate 0: callers decide.
std::optional<Rate> parse_ns3_rate(std::string_view s);

// ns-3 Time syntax (ns-3.17 Time(std::string)): an optional sign, a decimal number without exponent, and
// one of s ms us ns ps fs, or nothing (seconds). Rounded to the nearest picosecond (half away from zero).
// Returns nullopt for anything else and on int64 picosecond overflow; never throws. Negative values are
// returned as such: callers decide.
std::optional<Time> parse_ns3_time(std::string_view s);

// Inverse of the parsers, as write_hpcc_topology uses them: rates "<N>Gbps" when a whole number of Gb/s,
// else "<N>Mbps" when a whole number of Mb/s, else "<N>bps" (rounded to whole bits/s, which is all ns-3
// can hold); times "<N>ns" when a whole number of ns, else "<N>ps". Throw std::invalid_argument for rates
// below 1 bps after rounding, non-finite or >= 2^63 bps, and for negative times.
std::string format_ns3_rate(Rate r);
std::string format_ns3_time(Time t);

// Reads a topology file. Throws InputError(path, line, message) for every malformed input (counts,
// ids out of range or duplicated, self links, bad or non-positive rates, bad or negative delays, error
// rates outside [0,1], missing or extra lines, a node with no link) and InputError(path, 0, "cannot
// open ...") when the file cannot be read; no other exception escapes (barring std::bad_alloc).
// The result: name = path, node_names "h<i>" for the i-th host and "s<j>" for the j-th switch in id
// order (as the builders do), host_group empty (the file has no groups), links in file order.
TopoSpec read_hpcc_topology(const std::string& path);

// The same on text already in memory; `file` only labels the errors and names the result.
TopoSpec parse_hpcc_topology(std::string_view text, const std::string& file);

// Writes `topo` in the format above: switch ids ascending; links in order, each
// "a b rate delay error_rate" with format_ns3_rate / format_ns3_time and the error rate as "%f" (ns-3's
// generators write 0.000000) unless that would lose precision, then in shortest round-trip form.
// read_hpcc_topology() of the output gives back num_nodes, is_switch and links exactly (rates that are
// whole bits/s) and, for builders using default names, node_names. Throws std::invalid_argument if
// `topo` is inconsistent (sizes, ids out of range, self links) or a value cannot be written.
void write_hpcc_topology(const TopoSpec& topo, std::ostream& out);

}  // namespace rocesim
