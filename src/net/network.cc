#include "net/network.h"

#include <span>
#include <stdexcept>

#include "net/host.h"
#include "net/switch.h"

namespace rocesim {

namespace {
// What the scheme needs of the network, with the NIC's choice of ACK priority when it makes one.
CcNeeds needs_with_nic(const CongestionControl& cc, const NicSettings& nic) {
  CcNeeds needs = cc.needs();
  if (nic.ack_priority != NicSettings::AckPriority::kScheme)
    needs.ack_high_priority = nic.ack_priority == NicSettings::AckPriority::kHigh;
  return needs;
}
}  // namespace

Network::Network(const TopoSpec& topo, const SwitchSettings& sw, const NicSettings& nic, uint64_t seed,
                 std::unique_ptr<CongestionControl> cc, const SetupProgress& setup_progress)
    : CcServices(sw, nic, seed),
      cc_(std::move(cc)),
      needs_(needs_with_nic(*cc_, nic_)),
      fabric_(topo, nic_),
      flows_(fabric_, sim_, qps_, *cc_, nic_),
      run_(sim_, fabric_, flows_, results_, *cc_) {
  if (needs_.int_stamping) sw_.int_enabled = true;
  if (!needs_.ecn_marking) sw_.ecn_enabled = false;
  sim_.set_tie_salt(seed_);
  fabric_.build(*this, sim_, sw_, seed_, setup_progress);
  flows_.prepare();
  cc_->attach(*this);
  fabric_.attach_agents(*cc_);
}

Network::~Network() = default;

Host& Network::host(int id) { return static_cast<Host&>(fabric_.node(id)); }
Switch& Network::sw(int id) { return static_cast<Switch&>(fabric_.node(id)); }

void Network::run(Time until, bool stop_when_done, const std::function<void(Time)>& progress,
                  uint64_t progress_every) {
  if (!run_.started()) {
    run_.start();
    fabric_.settle_route_cache(has_link_events());
    flows_.begin();
  }
  run_.run(until, stop_when_done, progress, progress_every);
}

// --- services for schemes (CcServices) ---------------------------------------------------------------
Network& CcServices::net() { return static_cast<Network&>(*this); }
const Network& CcServices::net() const { return static_cast<const Network&>(*this); }
NetPartition& CcServices::first_partition() { return net().run_.first(); }

void CcServices::register_qp_state(std::function<void(size_t)> grow) const {
  net().flows_.register_qp_state(std::move(grow));
}
const TopoSpec& CcServices::topo() const { return net().fabric_.topo(); }
bool CcServices::is_host(int node) const { return !net().fabric_.is_switch(node); }
Rate CcServices::port_rate(int node, int port) const { return net().fabric_.node(node).ports()[port].rate; }

Bytes CcServices::min_pfc_threshold() const {
  const Fabric& f = net().fabric_;
  Bytes least = sw_.xoff_bytes;
  bool first = true;
  for (int id = 0; id < f.num_nodes(); ++id) {
    if (!f.is_switch(id)) continue;
    const auto& sw = static_cast<const Switch&>(f.node(id));
    for (size_t p = 0; p < sw.ports().size(); ++p) {
      const Bytes t = sw.pfc_threshold(static_cast<int>(p));
      if (first || t < least) least = t;
      first = false;
    }
  }
  return least;
}

std::vector<std::pair<int, int>> CcServices::path_of(int src, int dst, uint16_t sport, uint16_t dport) const {
  return net().fabric_.path_of(src, dst, sport, dport);
}
Time CcServices::base_rtt(int src, int dst, uint16_t sport, uint16_t dport) const {
  return net().fabric_.base_rtt(src, dst, sport, dport);
}
Time CcServices::max_base_rtt() const { return net().fabric_.max_base_rtt(); }

void CcServices::set_rate(Qp& qp, Rate r) {
  if (r == qp.rate) return;
  qp.rate = r;
  // Re-time the next packet from the last one at the new rate.
  if (qp.last_tx_size > 0) qp.next_avail = qp.last_tx + tx_time(qp.last_tx_size, r);
  if (qp.active) net().host(qp.src).kick_ports(qp.tx_ports);
}

void CcServices::set_window(Qp& qp, Bytes w) {
  const bool grew = (w == 0 && qp.window != 0) || w > qp.window;
  qp.window = w;
  if (grew && qp.active) net().host(qp.src).kick_ports(qp.tx_ports);
}

void CcServices::schedule_qp_timer(Qp& qp, Time at, uint32_t kind) {
  // At the receiver when its code runs now (a receiver-side timer), else at the sender.
  Host& receiver = net().host(qp.dst);
  const bool at_receiver = sim_.running_handler() == receiver.handler();
  const Host& h = at_receiver ? receiver : net().host(qp.src);
  sim_.at(at, h.handler(), Host::kQpTimer + (kind << 8), (static_cast<uint64_t>(qp.slot) << 32) | qp.tag);
}

void Network::on_qp_timer(Host& at, uint32_t kind, uint64_t arg) {
  const uint32_t slot = static_cast<uint32_t>(arg >> 32);
  if (slot >= flows_.capacity()) return;
  Qp& qp = flows_.qp(slot);
  if (!qp.in_use || qp.tag != static_cast<uint32_t>(arg)) return;
  if (at.id() == qp.src && qp.sender_done) return;
  cc_->on_timer(qp, kind);
  if (qp.cc_traced && at.id() == qp.src) [[unlikely]]
    cc_reacted(qp);
}

Packet* CcServices::make_cnp(const Qp& qp, int from_node) {
  Packet* c = pool().get();
  c->type = PktType::kCnp;
  c->prio = 0;
  c->src = from_node;
  c->dst = qp.src;
  c->sport = qp.dport;
  c->dport = qp.sport;
  c->qp = qp.slot;
  c->qp_tag = qp.tag;
  if (from_node == qp.dst) c->route = qp.rev_route;  // the ACKs' path
  c->size = static_cast<uint32_t>(nic_.cnp_bytes);
  if (net().fabric_.is_switch(from_node)) c->flags |= Packet::kFlagFromSwitch;
  return c;
}

void CcServices::inject(int from_node, Packet* p) {
  Network& n = net();
  if (n.fabric_.is_switch(from_node)) {
    p->in_port = -1;
    n.sw(from_node).forward(p);
  } else {
    n.host(from_node).send_control(p);
  }
}

// --- [monitors] cc_state ---
void Network::set_cc_trace(std::function<bool(const Qp&)> wants, bool rows) {
  if (cc_->state_variables().size() > kMaxCcVariables)
    throw std::logic_error(cc_->name() + " declares more than kMaxCcVariables state variables");
  cc_rows_ = rows && wants;
  flows_.set_cc_trace(std::move(wants));
}

void Network::read_cc_state(const Qp& qp, CcStateRow& row) const {
  row.t = now();
  row.key = 0;
  row.flow_id = qp.flow_id;
  row.rate = qp.rate;
  row.window = qp.window;
  row.ecn_marks = qp.ecn_echoes;
  row.cnps_received = qp.cnps_received + qp.cnp_acks;
  const size_t n = cc_->state_variables().size();
  row.vars.fill(0);
  cc_->read_state(qp, std::span<double>(row.vars.data(), n));
}

void Network::record_cc_state(const Qp& qp) {
  CcStateRow& r = part().cc_rows.emplace_back();
  read_cc_state(qp, r);
  r.key = sim_.current_key();
}

void Network::cc_data_sent(Qp& qp, Packet& p) {
  const Rate rate = qp.rate;
  const Bytes window = qp.window;
  cc_->on_data_sent(qp, p);
  if (qp.rate != rate || qp.window != window) cc_reacted(qp);
}

// --- observers ---------------------------------------------------------------------------------------
// A call made during the running event: logged with its time and key, replayed between windows.
void Network::log_call(NetPartition::Call c) {
  c.t = now();
  c.key = sim_.current_key();
  part().calls.push_back(std::move(c));
}

void Network::enable_packet_trace(PacketTraceSettings s) {
  results_.set_packet_trace(std::make_unique<PacketTrace>(std::move(s)));
  flows_.set_packet_trace(results_.packet_trace());
}

void Network::trace(const Packet& p, int node, int port, TraceEvent e, TraceDetail d, Bytes queue_bytes,
                    Time paused) {
  const PacketTrace* t = results_.packet_trace();
  if (!t) return;
  NetPartition& pt = part();
  if (pt.trace.size() >= t->room()) {
    pt.trace_overflow = true;
    return;
  }
  TraceRow& r = pt.trace.emplace_back();
  r.key = sim_.current_key();
  const Qp* q = qp_of(p);
  r.flow = q ? q->flow_id : t->flow_of(p.qp_tag);
  r.seq = p.seq;
  r.queue_bytes = queue_bytes;
  r.paused = paused;
  r.node = node;
  r.port = static_cast<int16_t>(port);
  r.prio = p.prio;
  r.event = e;
  r.detail = d;
}

void Network::notify_pfc(const Node& n, int port, int prio, bool pause) {
  NetPartition::Call c;
  c.type = NetPartition::Call::kPfc;
  c.node = n.id();
  c.port = port;
  c.prio = prio;
  c.flag = pause;
  log_call(std::move(c));
}

void Network::notify_delivered(const Qp& qp, Bytes payload) {
  NetPartition::Call c;
  c.type = NetPartition::Call::kDelivered;
  c.slot = qp.slot;
  c.payload = payload;
  log_call(std::move(c));
}

void Network::notify_cnp(const Qp& qp, bool from_switch) {
  NetPartition::Call c;
  c.type = NetPartition::Call::kCnp;
  c.slot = qp.slot;
  c.flag = from_switch;
  log_call(std::move(c));
}

}  // namespace rocesim
