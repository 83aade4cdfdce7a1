// ICC (Wang et al., CMC 2023, one of the seed papers): INT-based congestion identification at the switch
// egress, feedback piggybacked on passing ACKs, sender rate rules. Rules: docs/algorithms.md 3.3.
//
// Switch (IccAgent), per egress port:
//   samples   every >= sample_interval (5 us), at a data arrival or at the feedback timer: qlenRate =
//             d(qlen)/dt and lu = d(txBytes)/(C dt) over the interval; r1 = previous sample's rate,
//             r2 = the latest one (taken >= 5 us after r1), so the judgement uses "the latest such pair".
//   nFlows    distinct flows whose data was queued at the port in the current or previous flow_window.
//   judgement on every data arrival, qlen = bytes queued ahead of the packet:
//             qlen > 0, r1 >= 0, r2 >= 0, lu >= 70 %     congested: feedback now, 15 us timer restarts
//             qlen > 0, r2 < 0, lu < 70 %                 draining: nothing (do not slow the sources)
//             qlen > 0 otherwise                          "provide information": feedback now, timer restarts
//             qlen == 0                                   nothing; only the timer reports [interp: the
//               literal "else feedbackNow" of algorithms.md would put feedback on every ACK and make the
//               15 us period unobservable; the seed's "if not, provide information" follows the qlen > 0
//               branch]
//   timer     every feedback_period (15 us) after the last feedback of the port: feedback, unconditionally.
//   feedback  arms a stamp (a per-port sequence number) and a snapshot {qlen, qlenRate, lu, C, nFlows, ts}.
//             The next ACK of every flow whose data uses that egress carries it (no extra packets; the ACK
//             grows by feedback_bytes, once, as the switch writes the first record into it).
// Flow memory: the switch remembers, per flow 4-tuple (src, dst, sport, dport) of the data, the egress
// the data uses and the last stamp delivered. An ACK (src = receiver, dst = sender, ports swapped) is
// looked up by its reversed tuple in on_control, whichever port it leaves by. If the ACK already carries
// feedback from another switch, the more congested record is kept (congested flag, then qlen, then lu).
// Entries idle for flow_idle are dropped.
// ACK encoding: one IntHop {ts, qlen_bytes = qlen, rate = C, extra = qlenRate (B/s), tx_bytes = nFlows},
// cc_value = lu, cc_flags = kInfo | (kCongested).
//
// Sender, per ACK that carries feedback (n, C, lu, qlen, r = qlenRate; T = the QP's base RTT):
//   qlen > 0, r > 0:   V = min(V, Vmax)                               ("rate decrease" [interp: min])
//   qlen > 0, r <= 0:  t1 = qlen/|r|; V unchanged if t1 < T else V = Vmin
//   qlen == 0:         V = V lu + lineRate (1 - lu)                      (Eq. 6)
//   V clamped to [Rmin, lineRate].
//   Vmax = (C lu + (Q_d - qlen - r T) / T) / n
//   Vmin = (C - qlen / T) / n
// Derivation [interp; the seed's Eq. 1-5 add bytes to rates and, read literally, give a Vmax that grows
// as the time to reach Q_d shrinks (t_m -> 1 us gives Tb/s) and a Vmin above the fair share (queue never
// drains); algorithms.md's dimensionally restored forms keep both defects, see scenarios/icc/README.md]:
//   Vmax: a new rate reaches the switch about one RTT after the sample (t_d ~ T/2 to the source, T/2
//   back), so the queue is then qlen + r T; the port drains C lu (lu < 1 while it is paused). For the
//   queue to stay under Q_d over the following loop T: n V T - C lu T <= Q_d - qlen - r T. The seed's
//   B T lu (bytes in flight) is the r T term (what is in flight beyond the drain), its t_m the horizon T.
//   Vmin: the lowest rate that keeps the link busy while emptying the queue within one RTT (the seed's
//   stated purpose): n V T + qlen = C T. When the queue already drains within T (t1 < T), keep V.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "cc/per_qp.h"
#include "core/simulator.h"
#include "net/cc_api.h"

namespace rocesim {

struct IccSettings {
  double lu_threshold = 0.7;                 // LU_TH [ICC paper]
  Time sample_interval = Time::from_us(5);   // qlenRate2 taken 5 us after qlenRate1 [ICC paper]
  Time feedback_period = Time::from_us(15);  // periodic feedback [ICC paper]
  Time flow_window = Time::from_us(15);      // nFlows counting window [interp]
  Time flow_idle = Time::from_us(1000);      // flow-memory entries idle this long are dropped [ours]
  Bytes q_d_bytes = 0;                       // Q_d; 0 = min(q_d_fraction x the smallest PFC threshold
                                             //   of any switch port with an empty buffer (Xoff) [interp],
                                             //   q_d_cap_bytes)
  Bytes q_d_cap_bytes = 500'000;             // [ours, calibrated: Vmax lets the queue grow towards Q_d
                                             //   before it cuts; with Q_d = 3 MB (32 MB buffer) four
                                             //   flows hold a 330 KB average queue; <= 500 KB: < 1 KB]
  double q_d_fraction = 0.8;                 // [interp, algorithms.md 3.3 (d)]
  Rate min_rate = Rate::from_mbps(100);      // Rmin [interp]
  // What the feedback adds to the ACK that carries it, on the wire: an INT header (2 B, as
  // nic.int_base_bytes for HPCC) and one record {qLen 17 b, ts 24 b, C 4 b as HPCC's hop record (8 B,
  // algorithms.md 1.4); qlenRate 24 b signed, lu 8 b, nFlows 16 b, congested 1 b} = 94 b, in 12 B
  // [interp: the seed gives no format; algorithms.md 1.4 lists the fields].
  Bytes feedback_bytes = 14;
};

class Icc : public CongestionControl {
 public:
  static constexpr uint32_t kInfo = 1;       // ACK cc_flags: carries ICC feedback
  static constexpr uint32_t kCongested = 2;  // ACK cc_flags: the port judged itself congested

  explicit Icc(const IccSettings& s) : s_(s) {}
  std::string name() const override { return "icc"; }
  CcNeeds needs() const override;
  const IccSettings& settings() const { return s_; }
  Bytes q_d() const { return q_d_; }

  void attach(CcServices& net) override;
  void on_flow_start(Qp& qp) override;
  void on_line_rate_change(Qp& qp, Rate old_line) override;
  void on_ack(Qp& qp, const Packet& ack) override;
  std::unique_ptr<SwitchAgent> make_switch_agent(Switch& sw) override;

  // The feedback an ACK carries (decoded).
  struct Feedback {
    Bytes qlen = 0;
    double qlen_rate = 0;  // bytes per second
    double lu = 0;
    Rate c;
    int n_flows = 1;
    Time ts;
    bool congested = false;
  };
  static bool decode(const Packet& ack, Feedback& f);
  // The rate rule (pure: for tests).
  static Rate next_rate(Rate v, const Feedback& f, Rate line_rate, Time t, Bytes q_d, Rate r_min);
  static Rate v_max(const Feedback& f, Time t, Bytes q_d);
  static Rate v_min(const Feedback& f, Time t);

  struct State {
    Rate rate;
    uint64_t feedbacks = 0;  // ACKs with feedback received
    uint64_t decreases = 0;  // Vmax or Vmin applied
    Time first_fb, last_fb;  // arrival times of the first and last feedback ACK
    Feedback last;           // the last feedback (for monitors)
  };
  // cc_state.csv: the last feedback the sender acted on and its counts (V is rate_gbps).
  static constexpr std::array<CcVariable, 7> kVariables = {{
      {"fb_qlen_bytes", "bytes", "qlen of the last feedback: the queue at the reporting egress"},
      {"fb_qlen_rate_gbps", "Gb/s", "qlenRate of the last feedback: how fast that queue grew (< 0: drained)"},
      {"fb_lu", "", "lu of the last feedback: that link's utilisation"},
      {"fb_flows", "", "nFlows of the last feedback: flows counted at that egress"},
      {"fb_congested", "", "1 when the last feedback's port judged itself congested, else 0"},
      {"feedbacks", "", "ACKs with feedback received"},
      {"decreases", "", "feedbacks that lowered the rate (Vmax or Vmin applied)"},
  }};
  std::span<const CcVariable> state_variables() const override { return kVariables; }
  void read_state(const Qp& qp, std::span<double> out) const override;
  const State& state(const Qp& qp) const { return st_[qp.slot]; }

 private:
  IccSettings s_;
  Bytes q_d_ = 0;
  PerQp<State> st_;
};

// The per-switch judgement, flow memory and feedback timers (public for tests).
class IccAgent : public SwitchAgent, public EventHandler {
 public:
  IccAgent(CcServices& net, Switch& sw, const IccSettings& s);
  void on_enqueue(Packet& p, int port) override;
  void on_control(Packet& p, int port) override;
  void on_event(uint32_t kind, uint64_t arg) override;

  uint64_t immediate_feedbacks() const { return immediate_; }  // stamps armed by the judgement
  uint64_t periodic_feedbacks() const { return periodic_; }    // stamps armed by the timer
  uint64_t congested_judgements() const { return congested_; }
  uint64_t acks_written() const { return written_; }
  size_t flows_remembered() const { return flows_.size(); }

 private:
  struct PortState {
    // samples
    Time sample_t;
    Bytes sample_q = 0;
    Bytes sample_tx = 0;
    bool sampled = false;
    double r1 = 0, r2 = 0;  // bytes per second
    double lu = 0;
    // flow counting
    Time epoch_start;
    uint32_t epoch = 1;
    uint32_t cnt_cur = 0, cnt_prev = 0;
    // feedback
    uint64_t stamp = 0;
    Time last_fb;
    Time last_data;
    bool timer_pending = false;
    Icc::Feedback snap;
  };
  struct FlowKey {
    int32_t src, dst;
    uint16_t sport, dport;
    bool operator==(const FlowKey&) const = default;
  };
  struct FlowKeyHash {
    size_t operator()(const FlowKey& k) const {
      uint64_t h = (static_cast<uint64_t>(static_cast<uint32_t>(k.src)) << 32) ^ static_cast<uint32_t>(k.dst);
      h ^= (static_cast<uint64_t>(k.sport) << 16 | k.dport) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
      return static_cast<size_t>(h * 0xBF58476D1CE4E5B9ull);
    }
  };
  struct FlowEntry {
    int port = -1;
    uint32_t epoch = 0;
    uint64_t delivered = 0;
    Time last_seen;
  };

  void sample(int port);
  void feedback(int port, bool immediate);
  void arm_timer(int port);
  void sweep();

  CcServices& net_;
  Switch& sw_;
  IccSettings s_;
  uint32_t handler_ = 0;
  std::vector<PortState> ports_;
  std::unordered_map<FlowKey, FlowEntry, FlowKeyHash> flows_;
  Time last_sweep_;
  uint64_t immediate_ = 0, periodic_ = 0, congested_ = 0, written_ = 0;
};

struct SchemeEntry;
// icc in the scheme registry (cc/registry.h): the reader of [cc.icc] and its switch defaults (icc.cc).
SchemeEntry icc_scheme();

}  // namespace rocesim
