// A node (host or switch) and its ports. A port owns its egress queues, its PFC paused state
// (set by frames from the peer) and the one-way link towards the peer: each packet on the link is an event
// of the peer, at the time its last bit arrives.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/simulator.h"
#include "net/packet.h"

namespace rocesim {

class Network;
class Node;

constexpr int kNumPriorities = 8;

struct PortStats {
  uint64_t pause_sent = 0;  // PFC PAUSE frames this node sent out of this port (to the peer)
  uint64_t resume_sent = 0;
  uint64_t pause_received = 0;  // PFC PAUSE frames received on this port (pausing our egress)
  Time paused_time;             // total time any priority of this egress was paused (summed per priority)
  uint64_t ecn_marked = 0;
};

// Laid out for the cache: the first line holds what putting a packet on the link touches (start_tx, kick),
// the second the egress scheduler's state with the counters every packet updates, the third the PFC and
// control queues; the data queues follow, statistics and credit state come last. Receiving a packet does
// not touch the port it arrives on.
struct alignas(64) Port {
  // --- the link (one cache line) ---
  Node* peer = nullptr;
  int peer_port = -1;
  int index = 0;
  uint32_t peer_handler = 0;  // peer->handler(): the target of the packets' arrival events
  // Their kind: Node::arrive_kind(peer_port), and Simulator::kArgTwoLines when the peer is a host (which
  // reads the packet's second line too: sequence numbers, timestamps).
  uint32_t peer_arrive_kind = 0;
  Time delay;
  Time busy_until;               // the wire is busy until then
  Time next_wake = Time::max();  // earliest pending transmit-attempt event
  Rate rate;
  // tx_time(size, rate) = size x ps_per_byte when the rate divides 8e12 bit-ps (every Ethernet rate): an
  // integer product on the hot path instead of long double arithmetic; 0 when it does not.
  int64_t ps_per_byte = 0;

  // --- the egress scheduler (one cache line) ---
  double error_rate = 0;
  Bytes tx_bytes = 0;                // cumulative bytes sent (INT txBytes)
  Bytes data_bytes = 0;              // bytes queued in data queues 1..7
  uint64_t tx_packets = 0;           // packets put on the wire
  Bytes max_queue_bytes = 0;         // peak egress data-queue occupancy (switches)
  bool paused[kNumPriorities] = {};  // egress paused by the peer's PFC
  uint8_t rr_next = 1;               // switches: the data priority the round robin tries first
  // Bit prio set while q[prio] holds a packet (and pfc_queued below while pfc_q does): what the schedulers
  // test before they touch a queue, whose heads span four more cache lines. Kept by push() and pop().
  uint8_t queued = 0;
  // Link events (net/link_events.h): `down` while the link is failed (whatever is sent is lost); `cut`
  // once it has failed at least once (an arriving packet then checks whether it was on the wire at cut_at).
  bool down = false;
  bool cut = false;
  bool long_haul = false;  // LinkSpec::long_haul
  bool pfc_queued = false;

  // --- the queues (read them freely; change them only through push/pop below) ---
  alignas(64) PacketQueue pfc_q;  // PFC frames go before anything else
  PacketQueue q[kNumPriorities];  // 0 = control, strict priority; 1..7 data, round robin

  Node* node = nullptr;
  Time paused_since[kNumPriorities];
  // Per priority, the time paused by the peer (PFC, or credit-starved) in the pauses that have ended
  // (stats.paused_time is their sum over priorities). Kept by end_pause.
  Time paused_ended[kNumPriorities];

  PortStats stats;
  // PFC frames per priority this port has put on the wire, the pause value of the last one, and the frames
  // it has received: with the peer's count, the frames still in flight (net/checks.cc), whichever
  // partition holds them.
  uint32_t pfc_tx[kNumPriorities] = {};
  bool pfc_tx_last_pause[kNumPriorities] = {};
  uint32_t pfc_rx[kNumPriorities] = {};
  Rng loss_rng;  // draws the losses of a lossy wire (error_rate > 0), in transmission order
  Time cut_at;   // the link's last failure (with `cut`): packets that started before it and arrive after are
                 // lost

  // The pause of `prio` ends now: its time counts in the statistics.
  void end_pause(int prio, Time now) {
    paused[prio] = false;
    const Time d = now - paused_since[prio];
    stats.paused_time += d;
    paused_ended[prio] += d;
  }
  // The time `prio` of this egress has been paused since the run began, as of `now`.
  Time paused_time_of(int prio, Time now) const {
    return paused[prio] ? paused_ended[prio] + (now - paused_since[prio]) : paused_ended[prio];
  }

  // The queues, through these only (they keep `queued` and `pfc_queued`).
  void push(int prio, Packet* p) {
    q[prio].push(p);
    queued |= static_cast<uint8_t>(1u << prio);
  }
  Packet* pop(int prio) {
    Packet* p = q[prio].pop();
    if (q[prio].empty()) queued &= static_cast<uint8_t>(~(1u << prio));
    // The new head (the popped packet's next, in the cache now) leaves on the port's next transmission, a
    // serialisation later: fetched now, it is no longer a miss then (a queue's packets were written long
    // before they leave: tens of microseconds at a congested switch). A null head prefetches nothing.
    __builtin_prefetch(q[prio].head);
    return p;
  }
  void push_pfc(Packet* p) {
    pfc_q.push(p);
    pfc_queued = true;
  }
  Packet* pop_pfc() {
    Packet* p = pfc_q.pop();
    pfc_queued = !pfc_q.empty();
    return p;
  }
};

// Credit-based flow control (net/credit.h), per port and priority, kept beside the ports (Node::credit_)
// only in credit mode: 256 bytes a port that a PFC or lossy fabric does without. Egress: bytes sent to the
// peer and the peer's latest cumulative freed count (credits = buffer + peer_freed - sent). Ingress: bytes
// received on this port and freed, and the freed count last advertised to the peer.
struct PortCredit {
  Bytes sent[kNumPriorities] = {};
  Bytes peer_freed[kNumPriorities] = {};
  Bytes freed[kNumPriorities] = {};
  Bytes advertised[kNumPriorities] = {};
};

static_assert(offsetof(Port, error_rate) == 64,
              "the link fields of Port must fill exactly its first cache line");
static_assert(offsetof(Port, pfc_q) == 128,
              "the egress scheduler's fields of Port must fill its second line");
// A fabric holds one Port per link end (393,216 at k = 64): 11 cache lines, what is not needed on every port
// (credit state, test hooks) kept beside the ports. Fabric::estimate_memory_bytes counts sizeof(Port).
static_assert(sizeof(Port) <= 704, "Port grew past 11 cache lines: weigh the memory of large fabrics");

class Node : public EventHandler {
 public:
  // Events of a node. A packet reaching the node is an event of it, kind arrive_kind(the port it arrives
  // on) (with Simulator::kArgTwoLines when the node is a host: Port::peer_arrive_kind), with the packet's
  // address as arg (Simulator::kArgIsAddress), keyed (arrival time, sending node,
  // Simulator::kDeliverySeq + sending port): the same key whichever partition the sender runs in.
  // A transmit attempt is kind tx_attempt_kind() with the port's address as arg, so that the loop fetches
  // the port's first line with the node.
  enum EventKind : uint32_t { kTxAttempt = 0, kCreditTick = 2, kArrive = 3, kNodeKinds = 4 };
  static uint32_t arrive_kind(int in_port) {
    return Simulator::kArgIsAddress | kArrive | (static_cast<uint32_t>(in_port) << 8);
  }
  static constexpr uint32_t tx_attempt_kind() { return Simulator::kArgIsAddress | kTxAttempt; }

  Node(Network& net, int id);
  ~Node() override = default;

  int id() const { return id_; }
  uint32_t handler() const { return handler_; }
  void set_handler(uint32_t h) { handler_ = h; }
  virtual bool is_switch() const = 0;
  std::vector<Port>& ports() { return ports_; }
  const std::vector<Port>& ports() const { return ports_; }
  Port& port(int i) { return ports_[i]; }
  // Tests: on the lossy wire of `port_index` (error_rate > 0), `filter` decides each loss instead of
  // error_rate's draws (one port of the node at most; kept here, not in every Port).
  using LossFilter = bool (*)(const Packet& p, void* ctx);
  void set_loss_filter(int port_index, LossFilter filter, void* ctx) {
    loss_filter_port_ = port_index;
    loss_filter_ = filter;
    loss_filter_ctx_ = ctx;
  }
  // Sizes the credit state for the wired ports (credit mode only; Fabric::build_nodes, once wired).
  void size_credits() {
    if (credits_) credit_.assign(ports_.size(), PortCredit{});
  }

  // A packet arrives on `in_port` (the whole packet has been received).
  virtual void receive(Packet* p, int in_port) = 0;

  // Starts a transmission on the port if it is idle and has something to send.
  void kick(int port_index);
  // Sends a PFC PAUSE (pause=true) or RESUME for `prio` out of `port_index` towards the peer.
  void send_pfc(int port_index, int prio, bool pause);

  void on_event(uint32_t kind, uint64_t arg) override;

 protected:
  friend class Network;
  // Picks the next packet to transmit on the port, or nullptr. May call schedule_wake() when the
  // port will have something later (pacing).
  virtual Packet* dequeue(Port& port) = 0;
  // True when, once the wire frees up, the port should try again.
  virtual bool has_backlog(const Port& port) const = 0;
  // Handles node-specific events (kinds >= kNodeKinds).
  virtual void on_node_event(uint32_t kind, uint64_t arg) {
    (void)kind;
    (void)arg;
  }
  // A PFC frame arrived on `in_port`: the peer pauses or resumes our egress.
  void handle_pfc(Packet* p, int in_port);
  virtual void on_pfc_change(int port_index, int prio, bool paused) {
    (void)port_index;
    (void)prio;
    (void)paused;
  }

  // Credit-based flow control (defined in net/credit.cc). credit_ok: true when `size` bytes of `prio` may
  // go out of the port now (always without credit mode or for priority 0); else the priority is marked
  // paused (credit-starved) until a credit update covers its next packet. credit_consume after sending;
  // credit_release when a packet received on `in_port` leaves this node's buffer.
  // The checks are inline: without credit mode (the usual case) they cost a test on the hot path.
  bool credit_ok(Port& port, int prio, Bytes size) {
    return !credits_ || prio == 0 || credit_check(port, prio, size);
  }
  void credit_consume(Port& port, int prio, Bytes size) {
    if (credits_ && prio != 0) credit_[port.index].sent[prio] += size;
  }
  void credit_release(int in_port, int prio, Bytes size) {
    if (credits_ && prio != 0 && in_port >= 0) credit_free(in_port, prio, size);
  }
  bool credits() const { return credits_; }
  Bytes credit_max_packet() const;
  void handle_credit(Packet* p, int in_port);
  void credit_tick();
  bool credit_tick_pending_ = false;
  bool credit_check(Port& port, int prio, Bytes size);
  void credit_free(int in_port, int prio, Bytes size);

  void schedule_wake(Port& port, Time t);
  void start_tx(Port& port, Packet* p, Time now);  // now: the caller's net_.now()
  // What kick() does once it has its packet: puts it on the wire and, if the port has more to send, a
  // transmit attempt for when the wire frees. Also for a packet that need not queue first (the port idle,
  // nothing ahead of it: Switch::forward, Host::send_control).
  void transmit(Port& port, Packet* p, Time now) {
    start_tx(port, p, now);
    if (has_backlog(port)) schedule_wake(port, port.busy_until);
  }
  // A packet arriving on `port` that was on the wire when the link failed, or arrives while it is down:
  // lost (counted and freed; true).
  bool lost_to_failure(const Port& port, Packet* p);
  void lose_to_failure(Packet* p);  // counts the packet as lost on a failed link and frees it

  Network& net_;
  int id_;
  const bool credits_;  // SwitchSettings::credit_enabled (credit-based flow control, net/credit.h)
  // A link of this node has failed at least once (Port::cut): arrivals check their port only then.
  bool any_cut_ = false;
  uint32_t handler_ = 0;
  std::vector<Port> ports_;
  std::vector<PortCredit> credit_;    // per port in credit mode (credits_), else empty
  LossFilter loss_filter_ = nullptr;  // set_loss_filter
  void* loss_filter_ctx_ = nullptr;
  int loss_filter_port_ = -1;
};

}  // namespace rocesim
