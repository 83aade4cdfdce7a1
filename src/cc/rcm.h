// RCM, Regional Congestion Mitigation (RCM paper; docs/algorithms.md section 3.2): hop-by-hop,
// switch-to-switch congestion control whose feedback never reaches a host. Four switch modules:
//   CRD  congestion region detection (seed sec. 3.2): a QCN-style congestion measure per input and
//        output queue, F_b = Q_off + w_q x Q_delta (Eq. 1), computed on sampled arrivals; F_b > 0 on an
//        output queue sets the port's local flag; F_b > 0 on an input queue sends a congestion
//        notification (CN) to the upstream neighbour switch with F_b' = (1 - w) F_b + w F_br (Eq. 2) and
//        the IDs of the harmful flows of every congested output that input feeds (algorithms.md 3.2:
//        "CAM of the egress port(s) this input feeds"; under head-of-line blocking one input holds flows
//        bound to several congested outputs). A CN sets the receiving port's remote flag. Local only =
//        root, both = inner, remote only = edge of the congestion region.
//   CFR  congestion flow recognition (sec. 3.3): each output queue writes the ID of every n-th packet it
//        takes in into a cyclic CAM of depth D; flows in the CAM are harmful. At edge and inner points the
//        IDs received from downstream replace the local ones, restricted to the flows this port carries
//        (its CAM); if none of them passes here, the port's own CAM decides [interp].
//   RCC  regional congestion control (sec. 3.4): a window W = W_c + W_nc (Eq. 3) at the output; on each
//        trigger R and W_c shrink by (1 - F_b G_d) (Eqs. 4-6) with F_bmax G_d = 1/2 (W_c never rises
//        within an episode). The crossbar holds a harmful flow's packets once W_c is spent until W is
//        sent or the window's period (W at line rate) is over; at the root a window with only held
//        packets waiting opens at once, at an edge or inner point at the end of its period; it quits
//        when the flags expire.
//   SAR  switch-level adaptive routing (sec. 3.4): a new (or idle for a flowlet gap long enough to
//        empty the old path) non-harmful flow leaving through a congested port takes the equal-cost port
//        of least regional degree F_b'; harmful flows (CAM hits) are never detoured; with one path
//        nothing changes.
// Hosts run DCQCN unchanged (the seed's evaluation: "DCQCN ... Mellanox 100 G adapter" defaults).
// RCC acts where the switch chooses among inputs, the crossbar of the input-and-output queued model
// (switch.model = "input_output_queued", the paper's switch); under the shared buffer there is no such
// choice and only CRD, CFR and SAR act.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "cc/dcqcn.h"
#include "core/rng.h"
#include "core/simulator.h"
#include "net/cc_api.h"

namespace rocesim {

class Switch;

struct RcmSettings {
  // Hosts: DCQCN with the Mellanox 100 G defaults [RCM paper sec. 4.1].
  DcqcnSettings host = DcqcnSettings::mellanox(Rate::from_gbps(100));
  // Modules, each switchable for ablations.
  bool crd = true, cfr = true, rcc = true, sar = true;
  // CRD. F_b is quantised to 6 bits: F_b = clamp(Fb_bytes x F_bmax / scale), positive when congested (seed
  // Eq. 1 sign). scale = the queue's capacity - Q_eq when fb_full_queue (input-and-output queued model), so
  // that a full queue gives F_bmax and the deepest cut, F_bmax G_d = 1/2 [seed sec. 3.4: "the rate can be
  // decreased by at most 50 %"; interp: with QCN's scale (1 + 2 w_q) Q_eq = 130 KB a full 100 KB queue
  // gave only F_b = 36, a cut to 0.72, and Fig. 6's burst stayed at 43 instead of 25 Gb/s]; else (and under
  // the shared buffer, whose queues have no capacity of their own) QCN's scale (IEEE 802.1Qau).
  bool fb_full_queue = true;
  Bytes q_eq_bytes = 26'000;    // Q_eq [algorithms.md 3.2 interp: ~26 % of the 100 KB queue]
  double w_q = 2;               // [QCN default; algorithms.md 3.2]
  int fb_max = 64;              // 6-bit F_b [QCN]; G_d = 1 / (2 F_bmax) so F_bmax G_d = 1/2 [seed]
  double w_remote = 0.5;        // w of Eq. 2 [algorithms.md 3.2 interp]
  Bytes sample_bytes = 10'000;  // S0, sampling interval at F_b <= 0 [algorithms.md 3.2: QCN's 150 KB
                                //   scaled to 100 KB queues]; S = S0 / (1 + 9 F_b / F_bmax) [QCN]
  double sample_jitter = 0.15;  // each interval x uniform(1 +- jitter) [QCN randomised sampling]
  Time flag_timeout = Time::from_us(20);  // T_exp: flags (and RCC) end without F_b > 0 or CN [interp]
  // CFR.
  int cam_depth = 32;           // D [interp; algorithms.md 3.2 suggests 16: 32 halves the sampling noise]
  int cam_interval = 2;         // write every n-th dequeued packet (random in [1, 2n - 1]) [interp:
                                //   the CAM then spans ~64 packets, 5 us at 100 Gb/s, so a burst shows
                                //   within a few us; algorithms.md 3.2 suggests every 8th]
  double cfr_share = 2.0;       // harmful: CAM entries >= cfr_share x D / (distinct flows in the CAM),
  double cfr_keep_share = 0.0;  //   and stays so while >= cfr_keep_share x D / distinct (hysteresis;
                                //   0: while in the CAM at all, the seed's literal rule: RCC lowers a
                                //   harmful flow's share, and a share threshold released the cut burst
                                //   of Fig. 6 every few us [interp]);
                                //   when no flow stands out that way, every flow in the CAM (the seed's
                                //   literal rule; cfr_share = 0 always) [interp: "flows with relatively
                                //   high injection rate" (seed sec. 3.3); among flows of equal share
                                //   that is all of them]
  // RCC.
  Bytes rcc_min_window_bytes = 32'000;  // W at least this (W is measured: the output queue at detection)
  // The window is also a period: W bytes at the port's line rate [seed sec. 3.4: "the amount of data
  // (that) can be sent during a period"]. At an edge or inner point (a CN arrived in this RCC episode:
  // the harmful flows' bottleneck is downstream) a harmful flow that spent W_c waits for the next period even
  // when nothing else waits, so the harmful flows leave at most W_c / W of the line rate; at the root (its
  // own output is the bottleneck) the next window opens as soon as only held packets wait (work conserving)
  // [interp: with an early window at the edge, rcm/victim's S1/S2 took whatever the DCQCN-paced victim
  // left, the downstream input filled and its PFC pauses kept the edge queue full: Sv 34 Gb/s; false
  // restores that behaviour].
  bool rcc_edge_strict = true;
  // SAR.
  int sar_severe_cns = 2;  // N_sev CNs with F_b' >= sar_severe_fb x F_bmax within T_exp [interp]
  double sar_severe_fb = 0.5;
  Time sar_flowlet_gap = Time::zero();  // a flow may move after this idle time; 0 = the longest base RTT plus
                                        //   a full input and output queue at every switch of the path from
                                        //   the first host to its farthest one, at line rate (k = 12
                                        //   fat-tree, IOQ: 93 us) [interp; Rcm::attach]
  int sar_table_size = 4096;            // per-switch flow table (direct mapped), power of two
};

class Rcm : public Dcqcn {
 public:
  explicit Rcm(const RcmSettings& s) : Dcqcn(s.host), rs_(s) {}
  std::string name() const override { return "rcm"; }
  void attach(CcServices& net) override;
  std::unique_ptr<SwitchAgent> make_switch_agent(Switch& sw) override;
  const RcmSettings& rcm_settings() const { return rs_; }
  Time flowlet_gap() const { return flowlet_gap_; }  // SAR's, resolved at attach

  // CN payloads: harmful flow IDs travel beside the message (Packet::cc_flags = slot). Switches of
  // different partitions (core/simulator.h) take and return slots concurrently: the pool is locked, its
  // slots never move (chunks), and a slot number is only a handle (results never depend on it).
  static constexpr int kMaxIds = 32;
  struct CnIds {
    int n = 0;
    std::array<uint64_t, kMaxIds> id{};
  };
  uint32_t cn_alloc();
  CnIds& cn(uint32_t slot);
  void cn_free(uint32_t slot);
  // A CN crossing to another process takes its flow IDs along (CongestionControl::pack_beside).
  void pack_beside(const Packet& p, std::vector<char>& out) override;
  void unpack_beside(Packet& p, const char*& in) override;

 private:
  static constexpr uint32_t kCnChunk = 256;
  RcmSettings rs_;
  Time flowlet_gap_;
  std::mutex cn_mutex_;
  std::vector<std::unique_ptr<CnIds[]>> cn_chunks_;
  uint32_t cn_size_ = 0;
  std::vector<uint32_t> cn_free_;
};

// The per-switch state (public accessors for tests and scenarios).
// As a SwitchAgent it sees the output queues (on_enqueue: CFR, the outputs' CRD, RCC's accounting) and the
// CNs (on_switch_message); as an InputAgent the inputs (on_input_enqueue: the inputs' CRD), the crossbar
// (hold, on_crossbar_idle: RCC) and the choice among equal-cost ports (select_port: SAR).
class RcmAgent : public SwitchAgent, public InputAgent, public EventHandler {
 public:
  RcmAgent(CcServices& net, Switch& sw, Rcm& scheme);

  // SwitchAgent
  void on_enqueue(Packet& p, int port) override;
  void on_switch_message(const Packet& p, int in_port) override;
  InputAgent* input_agent() override { return this; }
  // InputAgent
  void on_input_enqueue(const Packet& p, int in_port) override;
  bool hold(const Packet& p, int out_port) override;
  bool on_crossbar_idle(int out_port) override;
  int select_port(const Packet& p, const uint16_t* ports, int n, int hashed_port) override;
  void on_event(uint32_t kind, uint64_t arg) override;  // the next RCC period of a strict port

  static uint64_t flow_key(const Packet& p) { return (static_cast<uint64_t>(p.qp_tag) << 32) | p.qp; }
  bool harmful(int port, uint64_t key) const;
  bool local_flag(int port) const;
  bool remote_flag(int port) const;
  bool in_rcc(int port) const { return ps_[port].rcc; }
  double regional_fb(int port) const;
  double output_fb(int port) const { return out_q_[port].fb; }
  double input_fb(int port) const { return in_q_[port].fb; }
  Bytes rcc_window(int port) const { return ps_[port].w; }
  Bytes rcc_window_c(int port) const { return ps_[port].wc; }

  struct Counters {
    uint64_t cn_sent = 0, cn_received = 0;
    uint64_t rcc_triggers = 0, rcc_entries = 0, holds = 0, idle_windows = 0;
    Bytes rcc_bytes = 0, rcc_harmful_bytes = 0;  // crossed to outputs in RCC, and of harmful flows
    uint64_t sar_decisions = 0, sar_detours = 0, sar_detours_of_harmful = 0;
  };
  const Counters& counters() const { return cnt_; }

 private:
  struct QueueCrd {  // CRD state of one queue
    Bytes q_old = 0;
    Bytes counter = 0;
    Bytes next = 0;
    double fb = 0;     // last quantised F_b
    double scale = 0;  // F_bmax per byte of Q_off + w_q Q_delta
  };
  struct PortState {
    Time local_until, remote_until;  // flags are set while now < until
    double fb_remote = 0;            // F_br: the last CN's F_b'
    int severe = 0;                  // CNs with F_b' >= the severe level while the remote flag held
    // CFR
    std::vector<uint64_t> cam;
    int cam_pos = 0;
    int cam_countdown = 1;
    std::vector<uint64_t> harm;  // local harmful set (from the CAM)
    std::vector<uint64_t> remote_harm;
    int n_harm = 0, n_remote = 0;
    std::vector<uint64_t> cam_flows;  // distinct flows in the CAM
    int n_cam_flows = 0;
    std::vector<uint64_t> eff;  // edge / inner point: the root's IDs that pass here (else `harm`)
    int n_eff = 0;
    uint64_t eff_sig = 0;
    bool harm_specific = false;  // the CAM set came from the share rule (not "every flow")
    uint64_t harm_sig = 0, remote_sig = 0, rcc_sig = 0;  // set signatures; RCC re-measures on a change
    // RCC
    bool rcc = false;
    Bytes w = 0, wc0 = 0, wc = 0, sent_c = 0, sent_tot = 0;
    Time period;                // W at the port's line rate
    Time window_end;            // the current window's period ends here
    bool kick_pending = false;  // a timer will wake the crossbar at window_end
    bool edge = false;          // a CN arrived in this RCC episode (an edge or inner point)
  };
  struct SarEntry {
    uint64_t key = ~uint64_t{0};
    Time last;
    int port = -1;
  };

  double sample(QueueCrd& q, Bytes qlen, Bytes size);  // returns the new F_b, or NaN when not sampled
  void send_cn(int in_port, int out_port, double fb, int prio);
  void update_effective(PortState& s);
  const uint64_t* harmful_set(int port, int& n) const;
  void rcc_trigger(int port, double fb);
  void rcc_exit_if_idle(int port);
  void new_window(PortState& s);
  void cam_write(PortState& s, uint64_t key);
  void cfr_sample(PortState& s, const Packet& p);
  bool congested(int port) const;

  CcServices& net_;
  Switch& sw_;
  Rcm& scheme_;
  const RcmSettings& s_;
  double g_d_;
  Time gap_;
  Rng rng_;
  uint32_t handler_ = 0;
  std::vector<QueueCrd> in_q_, out_q_;
  std::vector<PortState> ps_;
  std::vector<SarEntry> sar_;
  std::vector<uint64_t> scratch_keys_;
  std::vector<int> scratch_counts_;
  Counters cnt_;
};

struct SchemeEntry;
// rcm in the scheme registry (cc/registry.h): the reader of [cc.rcm] (rcm.cc).
SchemeEntry rcm_scheme();

}  // namespace rocesim
