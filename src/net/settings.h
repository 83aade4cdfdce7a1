// Defaults of the lossless substrate, one struct per component, with their sources.
// [sim] = the ns-3 HPCC simulator as configured by its run.py; [paper] = the mechanism's paper;
// see docs/algorithms.md section 1 for the rules these values feed.
#pragma once
#include "core/time.h"

namespace rocesim {

enum class PfcThresholdMode { kDynamic, kStatic };

// Switch architecture: the shared-buffer MMU (net/switch_mmu.h), or input-and-output queued
// (net/switch_crossbar.h).
enum class SwitchModel { kSharedBuffer, kInputOutputQueued };
// Input queues of the input-and-output queued model: one FIFO per (ingress port, priority), or virtual
// output queues (one per (ingress port, priority, egress port), sharing the FIFO's byte limit and PFC).
enum class InputQueueing { kFifo, kVoq };

// How a switch picks one of the equal-cost egress ports of a packet (net/path_select.h; docs/models.md
// section A3a). Independent of the scheme: a scheme's InputAgent::select_port still has the last word.
//  kEcmp:     the 5-tuple hash, per flow [sim];
//  kFlowlet:  a new random port after a gap of flowlet_gap in the flow's packets (LetFlow, NSDI '17);
//  kSpray:    per packet, random or round robin (SprayMode) [packet spraying: Dixit et al., INFOCOM '13];
//  kAdaptive: the least-loaded port (fewest egress data bytes, then an idle wire), per packet or per flowlet
//  (CONGA-like
//             local decision, SIGCOMM '14, without the leaf-to-leaf feedback).
enum class Routing { kEcmp, kFlowlet, kSpray, kAdaptive };
enum class SprayMode { kRandom, kRoundRobin };
// The flow hash that ECMP (and the flowlet tables) use. kRocesim: a 64-bit mix of (src, dst, sport, dport)
// salted per switch from the run's seed [rocesim choice]. kHpccSim: the ns-3 HPCC simulator's, so that
// every flow takes the simulator's path (net/ecmp_hash.h): 32-bit MurmurHash3 of (source IP, destination
// IP, sport | dport << 16) seeded with the switch's node id, modulo the equal-cost ports listed in the
// order of the simulator's routing table (net/routes.h); the run's seed does not change it.
enum class EcmpHash { kRocesim, kHpccSim };

struct SwitchSettings {
  Bytes buffer_bytes = 32'000'000;  // shared buffer per switch [sim: 32 MB at 100G hosts]
  bool pfc_enabled = true;
  PfcThresholdMode pfc_mode = PfcThresholdMode::kDynamic;
  Bytes reserve_bytes = 4 * 1024;         // per (ingress port, priority) [sim: 4 KB]
  Bytes resume_offset_bytes = 3 * 1024;   // dynamic mode: resume this far under the threshold [sim: 3 KB]
  int dt_shift_at_host_rate = 3;          // dynamic threshold alpha = 2^-shift at host speed [sim: 1/8]
  Rate host_rate = Rate::from_gbps(100);  // speed whose ports use the shift above (one less per doubling)
  Bytes xoff_bytes = 320'000;             // static mode thresholds per (ingress port, priority)
  Bytes xon_bytes = 318'000;              //   [Mercury paper's small topology: 320/318 KB]
  Bytes headroom_bytes = 0;               // per port; 0 = auto: headroom_factor x rate x link delay + 2 MTU
  double headroom_factor = 3.0;           // [sim: 3 x rate x delay]
  Bytes headroom_extra_bytes = -1;        // added to the auto headroom; -1 = 2 x (MTU + headers) [sim: 0]
  bool ecn_enabled = true;
  Bytes kmin_bytes = 400'000;  // RED thresholds at ecn_ref_rate [sim: 400/1600 KB at 100G]
  Bytes kmax_bytes = 1'600'000;
  double pmax = 0.2;                // [sim]
  bool ecn_scale_with_rate = true;  // thresholds scale with port speed [sim]
  Rate ecn_ref_rate = Rate::from_gbps(100);
  bool int_enabled = false;  // stamp INT hop records (turned on by schemes that need it)
  // ns-3 HPCC simulator quirk (docs/coming-from-hpcc-sim.md): its switches queue ACKs/NACKs in their flow's
  // data class even when the NIC sends them at high priority (ACK_HIGH_PRIO only reaches the NICs), so they
  // wait behind data, are counted in the buffer and can be paused. Off: an ACK keeps its class on every hop.
  bool acks_in_data_class = false;
  // Credit-based link-level flow control (InfiniBand style; net/credit.h) instead of PFC: set with
  // pfc_enabled = false. Every (ingress port, priority) grants its upstream credit_buffer_bytes; the
  // downstream returns freed space every credit_period (T_c).
  bool credit_enabled = false;
  Bytes credit_buffer_bytes = 800'000;     // per (ingress port, priority) [TCD paper's testbed: 800 KB]
  Time credit_period = Time::from_us(60);  // T_c [TCD paper's testbed: 60 us; IB: <= 65536 symbol times]
  // Ports of long-haul links (LinkSpec::long_haul). Headroom: one BDP of the link, rate x 2 x delay, plus
  // the headroom extra above [LSCC paper: "headroom >= one BDP"; algorithms.md 1.2]; 0 = that auto value.
  // Static Xoff/Xon of those ports; 0 = the values above [LSCC paper: 5 MB on long-haul ports].
  Bytes long_haul_headroom_bytes = 0;
  Bytes long_haul_xoff_bytes = 0;
  Bytes long_haul_xon_bytes = 0;
  // Input-and-output queued model: one FIFO input queue per (ingress port, priority) bounded by
  // input_queue_bytes, with PFC driven by it (Xoff = input_queue_bytes - headroom, Xon = Xoff - 2 x
  // (MTU + headers)), and one output queue per egress port (all priorities) bounded by
  // output_queue_bytes, fed by a crossbar that serves the inputs waiting on it round robin. The shared
  // buffer's thresholds (buffer_bytes, pfc_mode, reserve, dt_shift) are unused there. [RCM paper sec. 4.1:
  // "virtual input queues at the input port and one output queue at the output port", 100 KB each]
  SwitchModel model = SwitchModel::kSharedBuffer;
  Bytes input_queue_bytes = 100'000;   // [RCM paper: 100 KB]
  Bytes output_queue_bytes = 100'000;  // [RCM paper: 100 KB]
  // kVoq: each (ingress port, priority) keeps one queue per egress port; their bytes together are bounded
  // by input_queue_bytes and drive PFC as above, and the crossbar of an output serves round robin the
  // virtual output queues that hold a packet for it. Head-of-line blocking then only comes from PFC on the
  // links (a full input pauses its upstream), not from a FIFO head waiting for another output.
  // [RCM paper sec. 4.1: "virtual input queues (VOQ)"; kFifo: the model before this option, the default]
  InputQueueing input_queueing = InputQueueing::kFifo;

  // --- routing (net/path_select.h) ---
  Routing routing = Routing::kEcmp;         // [sim: ECMP on the 5-tuple hash]
  EcmpHash ecmp_hash = EcmpHash::kRocesim;  // [rocesim choice; sim: kHpccSim]
  // Seed of the switches' ECMP hash salts (ecmp_hash = kRocesim); -1: the run's seed. An experiment whose
  // meaning depends on which flows share a link (a victim beside an incast) sets it, so that other seeds
  // vary everything else (the traffic, ECN marking, the order of simultaneous events) but not the paths.
  // [rocesim choice]
  int64_t ecmp_seed = -1;
  // Flowlet gap: a flow idle this long may take another port (kFlowlet; kAdaptive per flowlet).
  // [rocesim choice: 100 us; CONGA uses 500 us for TCP, RDMA's RTTs are shorter]
  Time flowlet_gap = Time::from_us(100);
  // Entries of each switch's flowlet table, indexed by the flow hash (a power of two; flows that share an
  // entry share its flowlet, as in hardware tables). [rocesim choice; CONGA: 64K entries]
  int flowlet_table_size = 4096;
  SprayMode spray = SprayMode::kRandom;  // kSpray: per-switch random stream, or round robin per switch
  bool adaptive_per_flowlet = false;     // kAdaptive: decide per flowlet (true) or per packet (false)
  // kAdaptive: skip an egress whose priority is paused by the downstream PFC (unless all are) [rocesim
  // choice: the downstream PFC state is the congestion signal a lossless fabric has]
  bool adaptive_avoid_paused = true;
  // Link failures and recoveries ([[events]]): the routes are recomputed this long after the link changed
  // state (failure detection and route convergence). [rocesim choice: 100 us, hardware loss-of-signal
  // detection and local reroute; the ns-3 HPCC simulator recomputes at once (0)]
  Time failure_detection = Time::from_us(100);
};

struct NicSettings {
  Bytes mtu_bytes = 1000;   // payload per data packet [sim]
  Bytes header_bytes = 48;  // wire headers per data packet [sim]
  Bytes ack_bytes = 60;     // ACK/NACK size on the wire (INT echo adds to it)
  Bytes cnp_bytes = 64;
  Bytes pfc_bytes = 64;                     // PFC frame [802.1Qbb]
  Bytes int_hop_bytes = 8;                  // per INT hop record [HPCC]
  Bytes int_base_bytes = 2;                 // INT header without hops
  Bytes timestamp_bytes = 0;                // send timestamp on data packets of schemes that read it
                                            //   (CcNeeds::send_timestamp) [sim: 8 B, TIMELY]
  int ack_interval = 1;                     // ACK every N data packets [sim: 1]
  Time nack_interval = Time::from_us(500);  // at most one NACK per interval for the same hole [sim]
  // Retransmission timeout; 0 = auto (go-back-N: gbn_rto; selective: rto_low / rto_high below). Armed
  // whatever the flow control: an RC queue pair always runs its transport timer [IB spec, Local ACK
  // Timeout], and a NACK the receiver holds back (nack_interval) or loses leaves nothing else to recover.
  Time rto = Time::zero();
  Time gbn_rto = Time::from_ms(1);  // [rocesim choice: 1 ms; RDMA stacks set 4 us x 2^timeout, e.g. 67 ms]
  // The automatic timeouts (gbn_rto, rto_low, rto_high) are at least this many base RTTs of the flow's
  // path [rocesim choice: 4; a timer shorter than a round trip fires on every flow of a long-haul path]
  int rto_min_base_rtts = 4;
  int data_priority = 3;          // default data class for generated flows [sim: pg 3]
  Rate rx_rate;                   // receive-processing rate; 0 = as fast as the link (never pauses)
  Bytes rx_xoff_bytes = 200'000;  // NIC receive buffer PFC thresholds (used when rx_rate > 0)
  Bytes rx_xon_bytes = 150'000;
  // Where ACKs/NACKs travel: kScheme = as the scheme asks (CcNeeds::ack_high_priority); kHigh = control
  // class (priority 0) on every hop; kData = the flow's data class [sim ACK_HIGH_PRIO 1 / 0].
  enum class AckPriority { kScheme, kHigh, kData };
  AckPriority ack_priority = AckPriority::kScheme;
  // Loss recovery [IRN = Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018].
  // kGoBackN: the receiver drops out-of-order packets and NACKs the hole; the sender rewinds to it [sim].
  // kSelective: the receiver keeps out-of-order packets in a per-QP bitmap of sack_window_packets and
  // answers each with a SACK (an ACK with Packet::sack_seq); the sender retransmits only the packets it
  // deems lost, and never has more than sack_window_packets beyond the cumulative ACK (IRN's BDP-FC).
  enum class LossRecovery { kGoBackN, kSelective };
  LossRecovery loss_recovery = LossRecovery::kGoBackN;
  // Selective: packets the receiver tracks beyond its next expected one, which also bounds the sender's
  // packets in flight; 0 = auto: the BDP of the longest path (the fastest host's line rate, all its ports
  // together, x the topology's maximum base RTT) in MTU-sized packets, rounded up [IRN: BDP-FC cap, 110
  // packets at 40G on its fat-tree].
  int sack_window_packets = 0;
  // Selective: how the sender decides that a packet not SACKed is lost.
  //  kReorderWindow [after RACK: RFC 8985, "The RACK-TLP Loss Detection Algorithm for TCP", 2021]: once a
  //    packet sent after it is SACKed, and a reorder window later it is still neither ACKed nor SACKed.
  //    The window is reorder_window when set, else the larger of
  //    - reorder_window_srtts x the QP's smoothed RTT (from the send times its ACKs echo), at most
  //      rto_high; it grows by one SRTT in each round trip in which the receiver reports a duplicate (a
  //      D-SACK: a retransmission whose original had arrived), as RACK's reo_wnd_mult does;
  //    - reorder_window_lateness x the lateness the sending host saw lately, at most reorder_window_max.
  //      An original packet that a later one overtook is late by the time from the SACK that made it a
  //      hole to its own ACK; the host keeps the largest of its current and previous lateness_epoch.
  //    The window is read again when it ends, so a path whose lateness grows (a queue building behind
  //    a slower link, a long PFC pause) keeps its packets from being resent while they are only late.
  //  kDupThresh [IRN: the first SACK above a hole]: at once, when a packet sack_reorder_packets or more
  //    above it is SACKed. Every reordered packet is then taken for a loss (the only model before
  //    the reorder window).
  enum class LossDetection { kReorderWindow, kDupThresh };
  LossDetection loss_detection = LossDetection::kReorderWindow;
  Time reorder_window = Time::zero();  // 0 = adaptive (above)
  // [rocesim choice: 3. RACK starts at min_RTT / 4 and caps at SRTT; with 5 us RTTs that is 15 packets at
  // 100 Gb/s, which the queue differences of sprayed and adaptive fabrics exceed all the time. In the
  // combination test's lossless runs (tests/app/combination_test.cc: 14 schemes, 4 routings, PFC and
  // credits, an incast beside a permutation) 2 SRTTs still left 1 to 6 spurious retransmissions in 44 of
  // them, 3 none (docs/models.md A10). Waiting three round trips before a fast retransmission still costs
  // far less than a timeout.]
  int reorder_window_srtts = 3;
  // [rocesim choice: 2, 1 ms, 1 ms. Twice the lateness seen leaves room for a queue that keeps growing (a
  // 100 Gb/s path behind a link slowed to 10 Gb/s: each hole comes later than the last); the scenario
  // fuzzer's paths differing by hundreds of microseconds then resend nothing (fuzz/README.md), where 3
  // SRTTs resent up to 257 packets a run. 1 ms bounds how long a real loss waits; a lateness forgotten
  // after one to two epochs lets loss recovery speed up again once the slow path is gone.]
  int reorder_window_lateness = 2;
  Time reorder_window_max = Time::from_us(1000);
  Time lateness_epoch = Time::from_us(1000);
  // The adaptive window's floor on a lossless fabric (switch.flow_control "pfc" or "credit"); 0 = none.
  // [rocesim choice: 320 us, IRN's RTO_high. There a hole is a late packet far more often than a lost one
  // (only a corrupted packet or a failed link loses one), and a PFC pause or a credit wait can make a path
  // late by hundreds of microseconds before any packet on it has come back to teach the learned lateness
  // above. Measured on 4,000 fuzz scenarios (seed 51003): floors of 0, 100 and 320 us left 5, 4 and 2
  // runs resending more than their losses and timeouts (the 2: a link cut to a tenth of its rate under
  // spraying, where the timeouts fire as well). Its cost, on a PFC leaf-spine with a 1 % lossy link: a
  // lost packet waits ~320 us instead of 3 SRTTs, p50 slowdown 3.8-6.0 -> 4.5-7.5 (docs/models.md A10).]
  Time reorder_window_lossless = Time::from_us(320);
  // On a lossless fabric the learned lateness also takes every RTT sample's queueing delay (the sample less
  // the path's base RTT), and it is capped at reorder_window_max_lossless instead of reorder_window_max.
  // [rocesim choice: 10 ms. Under PFC a packet can sit behind a queue that a slowed link drains for
  // milliseconds (fuzz 51003:2878: a 1 MB buffer before a link cut to 2.5 Gb/s, 3.2 ms), and the only
  // losses are corrupted packets and failed links, so waiting that long costs little. With the 1 ms cap
  // 2878 resent 480 packets of which 402 were spurious; with this one and the timeout's floor of SRTT +
  // this allowance (rto below), none. Not on lossy fabrics: there the queueing samples of a lossy incast
  // made real losses wait twice a full buffer's delay (docs/models.md A10).]
  Time reorder_window_max_lossless = Time::from_ms(10);
  // kDupThresh: a packet is deemed lost once a packet this many sequence numbers above it has been SACKed
  // [IRN: 1, the first SACK above a hole; TCP's DupThresh would be 3].
  int sack_reorder_packets = 1;
  // Selective, retransmission timeout when nic.rto is 0: rto_low while at most rto_low_packets are in
  // flight, else rto_high [IRN: 100 us, 320 us, N = 3]. nic.rto > 0 replaces both. Unlike go-back-N's,
  // this timer runs with PFC or credits on as well; there (a lossless fabric) it is at least SRTT + 4
  // RTTVAR and at least SRTT + the reorder window's lateness allowance (a packet as late as packets have
  // been lately is not lost yet), doubles per timeout until the cumulative ACK moves, and a timeout resends
  // only the first unacknowledged packet [RFC 6298 2.3, 5.4, 5.5; RACK, RFC 8985 6.3] (docs/models.md A10).
  Time rto_low = Time::from_us(100);
  Time rto_high = Time::from_us(320);
  int rto_low_packets = 3;
  // Ideal FCT of each flow: exact in ps (net/ideal_fct.h ideal_fct), or the ns-3 HPCC simulator's own
  // integer-ns arithmetic (ideal_fct_ns_hpcc), so that fct.txt's last column matches it to the ns.
  bool ideal_fct_hpcc_ns = false;
  // Source ports of a host's flows count from 10000, per source host (kPerHost) or per (source, destination)
  // pair (kPerPair, as the ns-3 HPCC simulator's third.cc). They enter the ECMP hash.
  enum class SourcePorts { kPerHost, kPerPair };
  SourcePorts source_ports = SourcePorts::kPerHost;  // [rocesim choice; sim: kPerPair]
  // A host with several ports as near as each other to a flow's destination (a NIC dual-ported to two ToRs
  // or planes; docs/models.md A14): kFlowHash sends each flow out of one of them, picked by a hash of its
  // 5-tuple (two flows spread over both); kSpray sends each flow's packets out of all of them, each port
  // taking the flow's next packet when its wire is free, at the ports' summed rate (per-packet spraying
  // across ports, as multi-plane NICs do) [rocesim choice: kFlowHash, what a bonded pair does by default].
  // A host's ports towards a destination are those by the fewest hops, the fastest of them (a GPU's NVLink
  // port for its server's GPUs, its NIC's ports for the rest). A NIC that GPUs share (NodeKind::kNic)
  // chooses among its ports by the same setting: the 5-tuple hash, or per packet its least-loaded port.
  enum class PortSpread { kFlowHash, kSpray };
  PortSpread port_spread = PortSpread::kFlowHash;
};

}  // namespace rocesim
