#include "stats/monitors.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "net/switch.h"
#include "stats/writers.h"

namespace rocesim {

namespace {

uint64_t pause_key(int node, int port, int prio) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) | (static_cast<uint64_t>(port) << 8) |
         static_cast<uint64_t>(prio);
}

double gbps_of(Bytes bytes, Time width) {
  return static_cast<double>(bytes) * 8.0 / static_cast<double>(width.ps) * 1e3;  // bits/ps * 1e12 / 1e9
}

// At most kSummaryTop entries of `items` (pairs of sort key and JSON), largest keys first, ties in
// their original order: summary.json stays small when "all" ports are monitored.
constexpr size_t kSummaryTop = 16;
nlohmann::json top_entries(std::vector<std::pair<Bytes, nlohmann::json>> items) {
  std::stable_sort(items.begin(), items.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < items.size() && i < kSummaryTop; ++i) out.push_back(std::move(items[i].second));
  return out;
}

const char* event_name(Monitors::PfcEventKind k) {
  switch (k) {
    case Monitors::PfcEventKind::kPause:
      return "pause";
    case Monitors::PfcEventKind::kResume:
      return "resume";
    case Monitors::PfcEventKind::kEnd:
      return "end";
    case Monitors::PfcEventKind::kLinkDown:
      return "link_down";
    case Monitors::PfcEventKind::kLinkUp:
      return "link_up";
  }
  return "?";
}

}  // namespace

Monitors::Monitors(Network& net, const MonitorSpec& spec) : net_(net), spec_(spec) {
  for (const auto* list : {&spec_.queue_ports, &spec_.input_queue_ports, &spec_.port_throughput})
    for (const PortRef& p : *list)
      if (p.node < 0 || p.node >= net_.num_nodes() || p.port < 0 ||
          p.port >= static_cast<int>(net_.node(p.node).ports().size()) ||
          net_.node(p.node).port(p.port).peer->id() != p.peer)
        throw std::invalid_argument(
            fmt::format("monitors: node {} has no port {} towards node {}", p.node, p.port, p.peer));
  for (const PortRef& p : spec_.input_queue_ports)
    if (net_.is_host(p.node) || !net_.sw(p.node).input_output_queued())
      throw std::invalid_argument(fmt::format(
          "monitors: input queues need an input_output_queued switch (node {} is not one)", p.node));
  const Time now = net_.now();
  if (!spec_.queue_ports.empty() || !spec_.input_queue_ports.empty()) next_queue_ = now;
  if (!spec_.port_throughput.empty()) {
    rate_origin_ = Time{now.ps / spec_.rate_bin.ps * spec_.rate_bin.ps};
    next_rate_ = rate_origin_ + spec_.rate_bin;
    port_bins_.resize(spec_.port_throughput.size());
    for (const PortRef& p : spec_.port_throughput)
      port_prev_tx_.push_back(net_.node(p.node).port(p.port).tx_bytes);
  }
  if (spec_.buffer) {
    for (int id = 0; id < net_.num_nodes(); ++id)
      if (!net_.is_host(id)) switches_.push_back(id);
    buffer_.resize(switches_.size());
    next_buffer_ = now;
  }

  NetObservers& obs = net_.observers();
  saved_ = obs;
  if (spec_.pfc) {
    // Pauses already in force when we attach.
    for (int id = 0; id < net_.num_nodes(); ++id)
      for (Port& p : net_.node(id).ports())
        for (int prio = 0; prio < kNumPriorities; ++prio)
          if (p.paused[prio]) {
            open_pauses_[pause_key(id, p.index, prio)] = p.paused_since[prio];
            pfc_.push_back(
                {p.paused_since[prio], id, p.index, p.peer->id(), prio, PfcEventKind::kPause, Time{}});
          }
    obs.on_pfc_rx = [this, prev = saved_.on_pfc_rx](const Node& n, int port, int prio, bool pause, Time t) {
      if (prev) prev(n, port, prio, pause, t);
      on_pfc(n, port, prio, pause, t);
    };
    obs.on_link_change = [this, prev = saved_.on_link_change](const Node& n, int port, bool down, Time t) {
      if (prev) prev(n, port, down, t);
      on_link(n, port, down, t);
    };
  }
  if (spec_.all_flows || !spec_.flow_rates.empty()) {
    obs.on_data_delivered = [this, prev = saved_.on_data_delivered](const Qp& qp, Bytes payload) {
      if (prev) prev(qp, payload);
      on_delivered(qp, payload);
    };
  }
  if (spec_.cnp) {
    obs.on_cnp_received = [this, prev = saved_.on_cnp_received](const Qp& qp, bool from_switch) {
      if (prev) prev(qp, from_switch);
      on_cnp(qp, from_switch);
    };
    obs.on_flow_finished = [this, prev = saved_.on_flow_finished](const FlowRecord& r) {
      if (prev) prev(r);
      cnp_finished_.push_back({r.id, r.src, r.dst});
    };
  }
  if (spec_.cc_state()) {
    if (spec_.cc_state_period < Time::zero())
      throw std::invalid_argument("monitors: cc_state's period must not be negative");
    cc_nvars_ = net_.cc().state_variables().size();
    const bool rows = spec_.cc_state_period == Time::zero();
    net_.set_cc_trace(
        [all = spec_.cc_state_all, flows = spec_.cc_state_flows,
         classes = spec_.cc_state_classes](const Qp& q) {
          return all || std::binary_search(flows.begin(), flows.end(), q.flow_id) ||
                 std::binary_search(classes.begin(), classes.end(), q.class_id);
        },
        rows);
    if (rows)
      obs.on_cc_state = [this, prev = saved_.on_cc_state](const CcStateRow& r) {
        if (prev) prev(r);
        if (!finished_) add_cc_row(r);
      };
    else
      next_cc_ = now;
  }
  if (spec_.packet_trace) start_packet_trace();
  net_.sim().add_task(this);
}

Monitors::~Monitors() {
  net_.sim().remove_task(this);
  NetObservers& obs = net_.observers();
  if (spec_.pfc) {
    obs.on_pfc_rx = saved_.on_pfc_rx;
    obs.on_link_change = saved_.on_link_change;
  }
  if (spec_.all_flows || !spec_.flow_rates.empty()) obs.on_data_delivered = saved_.on_data_delivered;
  if (spec_.cnp) {
    obs.on_cnp_received = saved_.on_cnp_received;
    obs.on_flow_finished = saved_.on_flow_finished;
  }
  if (spec_.cc_state()) {
    net_.set_cc_trace({}, false);
    if (spec_.cc_state_period == Time::zero()) obs.on_cc_state = saved_.on_cc_state;
  }
}

Time Monitors::next_barrier() const {
  if (finished_ || chain_stopped_) return Time::max();
  return std::min({next_queue_, next_rate_, next_buffer_, next_cc_});
}

void Monitors::on_barrier(Time now) {
  if (finished_ || chain_stopped_) return;
  if (now >= next_queue_) {
    sample_queues();
    next_queue_ += spec_.queue_interval;
  }
  if (now >= next_rate_) {
    sample_rates();
    next_rate_ += spec_.rate_bin;
  }
  if (now >= next_buffer_) {
    sample_buffers();
    next_buffer_ += spec_.buffer_interval;
  }
  if (now >= next_cc_) {
    sample_cc_state();
    next_cc_ += spec_.cc_state_period;
  }
  // Nothing else pending: the network is idle for good, and a further sample would only move the clock.
  if (net_.sim().foreground_pending() == 0 && net_.pending_flow() == nullptr && net_.released_waiting() == 0)
    chain_stopped_ = true;
}

void Monitors::sample_queues() {
  queue_times_.push_back(net_.now());
  std::vector<Bytes> row;
  row.reserve(spec_.queue_ports.size());
  std::vector<PrioBytes> prio_row;
  prio_row.reserve(spec_.queue_ports.size());
  for (const PortRef& p : spec_.queue_ports) {
    const Port& port = net_.node(p.node).port(p.port);
    row.push_back(port.data_bytes);
    PrioBytes b{};
    for (int prio = 1; prio < kNumPriorities; ++prio) b[prio - 1] = port.q[prio].bytes;
    prio_row.push_back(b);
  }
  queue_bytes_.push_back(std::move(row));
  queue_prio_bytes_.push_back(std::move(prio_row));
  if (net_.has_link_events()) {
    std::vector<uint8_t> up;
    up.reserve(spec_.queue_ports.size());
    for (const PortRef& p : spec_.queue_ports) up.push_back(net_.node(p.node).port(p.port).down ? 0 : 1);
    queue_link_up_.push_back(std::move(up));
  }
  std::vector<Bytes> in;
  in.reserve(spec_.input_queue_ports.size());
  for (const PortRef& p : spec_.input_queue_ports) in.push_back(net_.sw(p.node).input_bytes(p.port));
  input_bytes_.push_back(std::move(in));
}

void Monitors::sample_rates() {
  for (size_t i = 0; i < spec_.port_throughput.size(); ++i) {
    const PortRef& p = spec_.port_throughput[i];
    const Bytes tx = net_.node(p.node).port(p.port).tx_bytes;
    port_bins_[i].push_back(tx - port_prev_tx_[i]);
    port_prev_tx_[i] = tx;
  }
}

void Monitors::sample_buffers() {
  for (size_t i = 0; i < switches_.size(); ++i) buffer_[i].push_back(net_.sw(switches_[i]).buffer_used());
}

// Every live traced flow whose sender this process simulates, in flow order.
void Monitors::sample_cc_state() {
  cc_scratch_.clear();
  for (uint32_t i = 0; i < net_.qp_capacity(); ++i) {
    const Qp& q = net_.qp(i);
    if (!q.in_use || !q.cc_traced || !q.started || q.sender_done || !net_.is_local_node(q.src)) continue;
    net_.read_cc_state(q, cc_scratch_.emplace_back());
  }
  std::sort(cc_scratch_.begin(), cc_scratch_.end(),
            [](const CcStateRow& a, const CcStateRow& b) { return a.flow_id < b.flow_id; });
  for (const CcStateRow& r : cc_scratch_) add_cc_row(r);
}

void Monitors::add_cc_row(const CcStateRow& r) {
  if (cc_rows_.size() >= spec_.cc_state_max_rows) {
    if (cc_dropped_++ == 0 && spec_.cc_state_period == Time::zero()) net_.stop_cc_rows();
    return;
  }
  cc_rows_.push_back({r.t, r.key, r.flow_id, r.rate, r.window, r.ecn_marks, r.cnps_received});
  cc_vars_.insert(cc_vars_.end(), r.vars.begin(), r.vars.begin() + static_cast<ptrdiff_t>(cc_nvars_));
  cc_sorted_ = false;
}

// cc_state.csv's order: time, flow, then event (the rows of one flow at one time in the order the scheme
// reacted). Rows arrive in event order (reactions) or in time and flow order (samples), so a stable sort by
// (time, flow) gives it.
void Monitors::sort_cc_rows() {
  if (cc_sorted_) return;
  std::vector<size_t> order(cc_rows_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const CcRow& x = cc_rows_[a];
    const CcRow& y = cc_rows_[b];
    return std::tie(x.t, x.flow_id) < std::tie(y.t, y.flow_id);
  });
  std::vector<CcRow> rows;
  std::vector<double> vars;
  rows.reserve(cc_rows_.size());
  vars.reserve(cc_vars_.size());
  for (size_t i : order) {
    rows.push_back(cc_rows_[i]);
    vars.insert(vars.end(), cc_vars_.begin() + static_cast<ptrdiff_t>(i * cc_nvars_),
                cc_vars_.begin() + static_cast<ptrdiff_t>((i + 1) * cc_nvars_));
  }
  cc_rows_ = std::move(rows);
  cc_vars_ = std::move(vars);
  cc_sorted_ = true;
}

const std::vector<Monitors::CcRow>& Monitors::cc_rows() {
  sort_cc_rows();
  return cc_rows_;
}

void Monitors::on_pfc(const Node& n, int port, int prio, bool pause, Time t) {
  if (finished_) return;
  const uint64_t key = pause_key(n.id(), port, prio);
  const int peer = net_.node(n.id()).port(port).peer->id();
  auto it = open_pauses_.find(key);
  if (pause) {
    if (it != open_pauses_.end()) return;  // a refresh while paused
    open_pauses_.emplace(key, t);
    pfc_.push_back({t, n.id(), port, peer, prio, PfcEventKind::kPause, Time{}});
  } else if (it != open_pauses_.end()) {
    pfc_.push_back({t, n.id(), port, peer, prio, PfcEventKind::kResume, t - it->second});
    open_pauses_.erase(it);
  }
}

// A link failed or came back: a row for this end; a failure also ends the pauses of this egress (cleared
// with the link's PFC state), each with the time it was paused.
void Monitors::on_link(const Node& n, int port, bool down, Time t) {
  if (finished_) return;
  const int peer = net_.node(n.id()).port(port).peer->id();
  pfc_.push_back({t, n.id(), port, peer, -1, down ? PfcEventKind::kLinkDown : PfcEventKind::kLinkUp, Time{}});
  if (!down) return;
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    auto it = open_pauses_.find(pause_key(n.id(), port, prio));
    if (it == open_pauses_.end()) continue;
    pfc_.push_back({t, n.id(), port, peer, prio, PfcEventKind::kLinkDown, t - it->second});
    open_pauses_.erase(it);
  }
}

void Monitors::on_delivered(const Qp& qp, Bytes payload) {
  if (finished_) return;
  if (!spec_.all_flows && !std::binary_search(spec_.flow_rates.begin(), spec_.flow_rates.end(), qp.flow_id))
    return;
  const int64_t bin = net_.now().ps / spec_.rate_bin.ps;
  FlowBins& b = flow_bins_[qp.flow_id];
  if (b.bytes.empty()) b.first_bin = bin;
  const size_t idx = static_cast<size_t>(bin - b.first_bin);
  if (idx >= b.bytes.size()) b.bytes.resize(idx + 1, 0);
  b.bytes[idx] += payload;
}

void Monitors::on_cnp(const Qp& qp, bool from_switch) {
  if (finished_) return;
  CnpTally& c = cnps_[qp.flow_id];
  c.src = qp.src;
  c.dst = qp.dst;
  ++c.received;
  if (from_switch) ++c.from_switches;
}

void Monitors::finish() {
  if (finished_) return;
  const Time now = net_.now();
  if (!spec_.port_throughput.empty()) {
    const Time last_boundary = rate_origin_ + spec_.rate_bin * static_cast<int64_t>(port_bins_[0].size());
    if (now > last_boundary) sample_rates();  // the partial bin the run ended in
  }
  if (spec_.pfc) {
    std::vector<PfcEvent> ends;
    for (const auto& [key, since] : open_pauses_) {
      const int node = static_cast<int>(key >> 32);
      const int port = static_cast<int>((key >> 8) & 0xffffff);
      const int prio = static_cast<int>(key & 0xff);
      ends.push_back(
          {now, node, port, net_.node(node).port(port).peer->id(), prio, PfcEventKind::kEnd, now - since});
    }
    std::sort(ends.begin(), ends.end(), [](const PfcEvent& a, const PfcEvent& b) {
      return std::tie(a.node, a.port, a.prio) < std::tie(b.node, b.port, b.prio);
    });
    pfc_.insert(pfc_.end(), ends.begin(), ends.end());
    open_pauses_.clear();
  }
  finished_ = true;
}

void Monitors::gather_ranks() {
  RankComm* comm = net_.ranks();
  if (!comm) return;
  finish();
  if (spec_.packet_trace) net_.packet_trace()->gather_ranks(*comm);
  // Per series kind, the entries whose node this rank simulates: (index, its values in sample order).
  std::vector<char> mine;
  auto local = [&](int node) { return net_.is_local_node(node); };
  for (size_t i = 0; i < spec_.queue_ports.size(); ++i)
    if (local(spec_.queue_ports[i].node)) {
      put_raw(mine, static_cast<uint64_t>(i));
      for (size_t t = 0; t < queue_bytes_.size(); ++t) {
        put_raw(mine, queue_bytes_[t][i]);
        put_raw(mine, queue_prio_bytes_[t][i]);
      }
    }
  put_raw(mine, ~uint64_t{0});
  for (size_t i = 0; i < spec_.input_queue_ports.size(); ++i)
    if (local(spec_.input_queue_ports[i].node)) {
      put_raw(mine, static_cast<uint64_t>(i));
      for (const auto& row : input_bytes_) put_raw(mine, row[i]);
    }
  put_raw(mine, ~uint64_t{0});
  for (size_t i = 0; i < spec_.port_throughput.size(); ++i)
    if (local(spec_.port_throughput[i].node)) {
      put_raw(mine, static_cast<uint64_t>(i));
      for (Bytes b : port_bins_[i]) put_raw(mine, b);
    }
  put_raw(mine, ~uint64_t{0});
  for (size_t i = 0; i < switches_.size(); ++i)
    if (local(switches_[i])) {
      put_raw(mine, static_cast<uint64_t>(i));
      for (Bytes b : buffer_[i]) put_raw(mine, b);
    }
  put_raw(mine, ~uint64_t{0});
  std::vector<std::vector<char>> all;
  comm->all_gather(mine, all);
  for (int r = 0; r < comm->size(); ++r) {
    if (r == comm->rank()) continue;
    const char* in = all[r].data();
    for (uint64_t i; (i = take_raw<uint64_t>(in)) != ~uint64_t{0};)
      for (size_t t = 0; t < queue_bytes_.size(); ++t) {
        queue_bytes_[t][i] = take_raw<Bytes>(in);
        queue_prio_bytes_[t][i] = take_raw<PrioBytes>(in);
      }
    for (uint64_t i; (i = take_raw<uint64_t>(in)) != ~uint64_t{0};)
      for (auto& row : input_bytes_) row[i] = take_raw<Bytes>(in);
    for (uint64_t i; (i = take_raw<uint64_t>(in)) != ~uint64_t{0};)
      for (Bytes& b : port_bins_[i]) b = take_raw<Bytes>(in);
    for (uint64_t i; (i = take_raw<uint64_t>(in)) != ~uint64_t{0};)
      for (Bytes& b : buffer_[i]) b = take_raw<Bytes>(in);
  }
  if (spec_.cc_state() && spec_.cc_state_period > Time::zero()) gather_cc_samples(*comm);
}

// cc_state samples: each rank took its own senders' (the rows of reactions reached every rank already).
// Every rank's, then the first max_rows of them in (time, flow) order: what one process keeps.
void Monitors::gather_cc_samples(RankComm& comm) {
  std::vector<char> mine;
  put_raw(mine, static_cast<uint64_t>(cc_rows_.size()));
  put_raw(mine, cc_dropped_);
  for (const CcRow& r : cc_rows_) put_raw(mine, r);
  for (double v : cc_vars_) put_raw(mine, v);
  std::vector<std::vector<char>> all;
  comm.all_gather(mine, all);
  std::vector<CcRow> rows;
  std::vector<double> vars;
  uint64_t dropped = 0;
  for (const std::vector<char>& blob : all) {
    const char* in = blob.data();
    const auto n = take_raw<uint64_t>(in);
    dropped += take_raw<uint64_t>(in);
    for (uint64_t i = 0; i < n; ++i) rows.push_back(take_raw<CcRow>(in));
    for (uint64_t i = 0; i < n * cc_nvars_; ++i) vars.push_back(take_raw<double>(in));
  }
  cc_rows_ = std::move(rows);
  cc_vars_ = std::move(vars);
  cc_sorted_ = false;
  sort_cc_rows();
  if (cc_rows_.size() > spec_.cc_state_max_rows) {
    const size_t keep = static_cast<size_t>(spec_.cc_state_max_rows);
    dropped += cc_rows_.size() - keep;
    cc_rows_.resize(keep);
    cc_vars_.resize(keep * cc_nvars_);
  }
  cc_dropped_ = dropped;
}

std::vector<Monitors::CnpCount> Monitors::cnp_counts() {
  std::unordered_map<uint64_t, CnpCount> all;
  auto add = [&](uint64_t id, int src, int dst) {
    CnpCount& c = all[id];
    c.flow_id = id;
    c.src = src;
    c.dst = dst;
  };
  for (const FlowRecord& r : net_.finished()) add(r.id, r.src, r.dst);
  for (const FlowEnds& f : cnp_finished_) add(f.id, f.src, f.dst);
  for (uint32_t i = 0; i < net_.qp_capacity(); ++i) {
    const Qp& q = net_.qp(i);
    if (q.in_use) add(q.flow_id, q.src, q.dst);
  }
  for (const auto& [id, t] : cnps_) {
    add(id, t.src, t.dst);
    all[id].received = t.received;
    all[id].from_switches = t.from_switches;
  }
  std::vector<CnpCount> out;
  out.reserve(all.size());
  for (const auto& [id, c] : all) out.push_back(c);
  std::sort(out.begin(), out.end(),
            [](const CnpCount& a, const CnpCount& b) { return a.flow_id < b.flow_id; });
  return out;
}

std::vector<std::pair<Time, Bytes>> Monitors::flow_bins(uint64_t flow_id) const {
  std::vector<std::pair<Time, Bytes>> out;
  auto it = flow_bins_.find(flow_id);
  if (it == flow_bins_.end()) return out;
  for (size_t k = 0; k < it->second.bytes.size(); ++k)
    out.emplace_back(spec_.rate_bin * (it->second.first_bin + static_cast<int64_t>(k)), it->second.bytes[k]);
  return out;
}

std::vector<std::pair<Time, Bytes>> Monitors::port_bins(size_t i) const {
  std::vector<std::pair<Time, Bytes>> out;
  if (i >= port_bins_.size()) return out;
  for (size_t k = 0; k < port_bins_[i].size(); ++k)
    out.emplace_back(rate_origin_ + spec_.rate_bin * static_cast<int64_t>(k), port_bins_[i][k]);
  return out;
}

const std::vector<Bytes>& Monitors::buffer_samples(int sw) const {
  static const std::vector<Bytes> kEmpty;
  for (size_t i = 0; i < switches_.size(); ++i)
    if (switches_[i] == sw) return buffer_[i];
  return kEmpty;
}

// --- CSV writers ---

void Monitors::write_queues_csv(std::ostream& out) const {
  write_port_samples(out, spec_.queue_ports, queue_bytes_, &queue_prio_bytes_);
}

void Monitors::write_input_queues_csv(std::ostream& out) const {
  write_port_samples(out, spec_.input_queue_ports, input_bytes_);
}

void Monitors::write_port_samples(std::ostream& out, const std::vector<PortRef>& ports,
                                  const std::vector<std::vector<Bytes>>& samples,
                                  const std::vector<std::vector<PrioBytes>>* per_prio) const {
  fmt::memory_buffer buf;
  buf.append(std::string_view("time_us,node,port,peer,queue_bytes"));
  if (per_prio)
    for (int prio = 1; prio < kNumPriorities; ++prio)
      fmt::format_to(std::back_inserter(buf), ",prio{}_bytes", prio);
  const bool link_up = per_prio && !queue_link_up_.empty();  // queues.csv of a run with link events
  if (link_up) buf.append(std::string_view(",link_up"));
  buf.append(std::string_view("\n"));
  std::vector<std::string> prefix;  // ",node,port,peer," per port
  for (const PortRef& p : ports)
    prefix.push_back(
        fmt::format(",{},{},{},", csv_field(node_name(p.node)), p.port, csv_field(node_name(p.peer))));
  for (size_t s = 0; s < queue_times_.size(); ++s) {
    const std::string t = format_time_us(queue_times_[s]);
    for (size_t i = 0; i < prefix.size(); ++i) {
      buf.append(t);
      buf.append(prefix[i]);
      fmt::format_to(std::back_inserter(buf), "{}", samples[s][i]);
      if (per_prio) fmt::format_to(std::back_inserter(buf), ",{}", fmt::join((*per_prio)[s][i], ","));
      if (link_up) fmt::format_to(std::back_inserter(buf), ",{}", queue_link_up_[s][i]);
      buf.push_back('\n');
      if (buf.size() > kCsvFlushBytes) flush_buffer(out, buf);
    }
  }
  flush_buffer(out, buf);
}

void Monitors::write_rates_csv(std::ostream& out) const {
  fmt::memory_buffer buf;
  buf.append(std::string_view("time_us,kind,id,gbps\n"));
  std::vector<uint64_t> ids;
  ids.reserve(flow_bins_.size());
  for (const auto& [id, b] : flow_bins_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (uint64_t id : ids) {
    for (const auto& [t, bytes] : flow_bins(id)) {
      fmt::format_to(std::back_inserter(buf), "{},flow,{},{:.6f}\n", format_time_us(t), id,
                     gbps_of(bytes, spec_.rate_bin));
      if (buf.size() > kCsvFlushBytes) flush_buffer(out, buf);
    }
  }
  for (size_t i = 0; i < spec_.port_throughput.size(); ++i) {
    const std::string name = csv_field(rate_port_name(i));
    for (const auto& [t, bytes] : port_bins(i)) {
      fmt::format_to(std::back_inserter(buf), "{},port,{},{:.6f}\n", format_time_us(t), name,
                     gbps_of(bytes, spec_.rate_bin));
      if (buf.size() > kCsvFlushBytes) flush_buffer(out, buf);
    }
  }
  flush_buffer(out, buf);
}

std::string Monitors::rate_port_name(size_t i) const {
  const PortRef& p = spec_.port_throughput[i];
  for (const PortRef& q : spec_.port_throughput)
    if (q.node == p.node && q.peer == p.peer && q.port != p.port)
      return fmt::format("{}:{}", port_name(p), p.port);
  return port_name(p);
}

void Monitors::write_pfc_csv(std::ostream& out) const {
  fmt::memory_buffer buf;
  buf.append(std::string_view("time_us,node,port,peer,prio,event,duration_us\n"));
  for (const PfcEvent& e : pfc_) {
    fmt::format_to(std::back_inserter(buf), "{},{},{},{},{},{},", format_time_us(e.t),
                   csv_field(node_name(e.node)), e.port, csv_field(node_name(e.peer)),
                   e.prio >= 0 ? std::to_string(e.prio) : std::string(), event_name(e.kind));
    if (e.kind == PfcEventKind::kResume || e.kind == PfcEventKind::kEnd ||
        (e.kind == PfcEventKind::kLinkDown && e.prio >= 0))
      buf.append(format_time_us(e.duration));
    buf.push_back('\n');
    if (buf.size() > kCsvFlushBytes) flush_buffer(out, buf);
  }
  flush_buffer(out, buf);
}

void Monitors::write_cnps_csv(std::ostream& out) {
  fmt::memory_buffer buf;
  buf.append(std::string_view("flow_id,src,dst,cnps_received,cnps_from_switches\n"));
  for (const CnpCount& c : cnp_counts()) {
    fmt::format_to(std::back_inserter(buf), "{},{},{},{},{}\n", c.flow_id, c.src, c.dst, c.received,
                   c.from_switches);
    if (buf.size() > kCsvFlushBytes) flush_buffer(out, buf);
  }
  flush_buffer(out, buf);
}

void Monitors::write_buffer_csv(std::ostream& out) const {
  fmt::memory_buffer buf;
  buf.append(std::string_view("switch,buffer_bytes,cdf\n"));
  for (size_t i = 0; i < switches_.size(); ++i) {
    std::vector<Bytes> v = buffer_[i];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const std::string name = csv_field(node_name(switches_[i]));
    const double n = static_cast<double>(v.size());
    for (size_t k = 0; k < v.size(); ++k) {
      if (k + 1 < v.size() && v[k + 1] == v[k]) continue;  // the last of equal values carries the CDF
      fmt::format_to(std::back_inserter(buf), "{},{},{:.6f}\n", name, v[k], static_cast<double>(k + 1) / n);
      if (buf.size() > kCsvFlushBytes) flush_buffer(out, buf);
    }
  }
  flush_buffer(out, buf);
}

void Monitors::write_cc_state_csv(std::ostream& out) {
  sort_cc_rows();
  fmt::memory_buffer buf;
  buf.append(std::string_view("time_us,flow,rate_gbps,window_bytes"));
  for (const CcVariable& v : cc_variables()) {
    buf.push_back(',');
    buf.append(std::string_view(v.name));
  }
  buf.append(std::string_view(",ecn_marks,cnps_received\n"));
  for (size_t i = 0; i < cc_rows_.size(); ++i) {
    const CcRow& r = cc_rows_[i];
    fmt::format_to(std::back_inserter(buf), "{},{},{:.6f},{}", format_time_us(r.t), r.flow_id, r.rate.gbps(),
                   r.window);
    for (double v : cc_vars(i)) fmt::format_to(std::back_inserter(buf), ",{}", v);
    fmt::format_to(std::back_inserter(buf), ",{},{}\n", r.ecn_marks, r.cnps_received);
    if (buf.size() > kCsvFlushBytes) flush_buffer(out, buf);
  }
  flush_buffer(out, buf);
}

std::vector<std::string> Monitors::warnings() {
  std::vector<std::string> w;
  if (cc_dropped_ > 0)
    w.push_back(
        fmt::format("monitors.cc_state: cc_state.csv holds only its first {} rows "
                    "(monitors.cc_state.max_rows), up to {} us; the later ones were not kept: raise "
                    "max_rows, trace fewer flows or sample less often (period_us)",
                    spec_.cc_state_max_rows, format_time_us(cc_rows().back().t)));
  if (spec_.packet_trace && net_.packet_trace()->truncated())
    w.push_back(
        fmt::format("packet_trace.csv holds only the first {} events of the traced packets: "
                    "[monitors] packet_trace.max_rows = {} was reached (raise it, or trace fewer "
                    "flows)",
                    spec_.trace_max_rows, spec_.trace_max_rows));
  return w;
}

std::vector<std::string> Monitors::write(const std::filesystem::path& dir) {
  finish();
  std::vector<std::string> files;
  auto emit = [&](const char* name, auto&& fn) {
    std::ofstream f(dir / name, std::ios::binary);
    fn(f);
    if (!f) throw std::runtime_error("cannot write " + (dir / name).string());
    files.emplace_back(name);
  };
  if (!spec_.queue_ports.empty()) emit("queues.csv", [&](std::ostream& o) { write_queues_csv(o); });
  if (!spec_.input_queue_ports.empty())
    emit("input_queues.csv", [&](std::ostream& o) { write_input_queues_csv(o); });
  if (spec_.all_flows || !spec_.flow_rates.empty() || !spec_.port_throughput.empty())
    emit("rates.csv", [&](std::ostream& o) { write_rates_csv(o); });
  if (spec_.pfc) emit("pfc.csv", [&](std::ostream& o) { write_pfc_csv(o); });
  if (spec_.cnp) emit("cnps.csv", [&](std::ostream& o) { write_cnps_csv(o); });
  if (spec_.buffer) emit("buffer.csv", [&](std::ostream& o) { write_buffer_csv(o); });
  if (spec_.cc_state()) emit("cc_state.csv", [&](std::ostream& o) { write_cc_state_csv(o); });
  if (spec_.packet_trace) emit("packet_trace.csv", [&](std::ostream& o) { write_packet_trace_csv(o); });
  return files;
}

nlohmann::json Monitors::queue_summary(const std::vector<PortRef>& ports,
                                       const std::vector<std::vector<Bytes>>& samples,
                                       const std::function<Bytes(size_t)>& true_peak) const {
  // The ports with the largest sampled peaks: peak and mean sampled queue, true peak when known.
  std::vector<std::pair<Bytes, nlohmann::json>> top;
  size_t with_data = 0;
  for (size_t i = 0; i < ports.size(); ++i) {
    Bytes mx = 0;
    double sum = 0;
    for (const auto& row : samples) {
      mx = std::max(mx, row[i]);
      sum += static_cast<double>(row[i]);
    }
    const PortRef& p = ports[i];
    if (mx == 0) continue;
    ++with_data;
    nlohmann::json e{{"node", node_name(p.node)},
                     {"port", p.port},
                     {"peer", node_name(p.peer)},
                     {"max_sampled_queue_bytes", mx},
                     {"mean_sampled_queue_bytes", sum / static_cast<double>(samples.size())}};
    if (true_peak) e["max_queue_bytes"] = true_peak(i);
    top.emplace_back(mx, std::move(e));
  }
  return {{"interval_us", spec_.queue_interval.us()},
          {"ports_monitored", ports.size()},
          {"ports_with_data", with_data},
          {"samples", queue_times_.size()},
          {"top_ports", top_entries(std::move(top))}};
}

nlohmann::json Monitors::summary() {
  finish();
  nlohmann::json j = nlohmann::json::object();
  if (!spec_.queue_ports.empty()) {
    j["queues"] = queue_summary(spec_.queue_ports, queue_bytes_, [this](size_t i) {
      const PortRef& p = spec_.queue_ports[i];
      return net_.node(p.node).port(p.port).max_queue_bytes;  // Port: the true peak
    });
  }
  // No per-port true peak of the input queues exists (NetStats::max_ingress_bytes is network-wide).
  if (!spec_.input_queue_ports.empty())
    j["input_queues"] = queue_summary(spec_.input_queue_ports, input_bytes_, {});
  if (spec_.all_flows || !spec_.flow_rates.empty() || !spec_.port_throughput.empty()) {
    std::vector<std::pair<Bytes, nlohmann::json>> ports;
    for (size_t i = 0; i < spec_.port_throughput.size(); ++i) {
      Bytes total = 0, mx = 0;
      for (Bytes b : port_bins_[i]) {
        total += b;
        mx = std::max(mx, b);
      }
      if (total == 0) continue;
      ports.emplace_back(total, nlohmann::json{{"port", rate_port_name(i)},
                                               {"bytes", total},
                                               {"max_gbps", gbps_of(mx, spec_.rate_bin)}});
    }
    j["rates"] = {{"bin_us", spec_.rate_bin.us()},
                  {"flows_with_data", flow_bins_.size()},
                  {"ports_monitored", spec_.port_throughput.size()},
                  {"top_ports", top_entries(std::move(ports))}};
  }
  if (spec_.pfc) {
    uint64_t pauses = 0, resumes = 0, ends = 0, link_events = 0;
    Time paused;
    for (const PfcEvent& e : pfc_) {
      if (e.kind == PfcEventKind::kPause)
        ++pauses;
      else if (e.kind == PfcEventKind::kResume)
        ++resumes;
      else if (e.kind == PfcEventKind::kEnd)
        ++ends;
      else if (e.prio < 0)
        ++link_events;
      if (e.kind != PfcEventKind::kPause) paused += e.duration;
    }
    j["pfc"] = {{"pause_events", pauses},
                {"resume_events", resumes},
                {"paused_at_end", ends},
                {"paused_time_us", paused.us()}};
    if (link_events > 0) j["pfc"]["link_events"] = link_events;
  }
  if (spec_.cnp) {
    uint64_t flows = 0, with = 0, received = 0, from_sw = 0;
    for (const CnpCount& c : cnp_counts()) {
      ++flows;
      with += c.received > 0 ? 1 : 0;
      received += c.received;
      from_sw += c.from_switches;
    }
    j["cnp"] = {{"flows", flows},
                {"flows_with_cnps", with},
                {"cnps_received", received},
                {"cnps_from_switches", from_sw}};
  }
  if (spec_.cc_state()) {
    sort_cc_rows();
    nlohmann::json vars = nlohmann::json::array();
    for (const CcVariable& v : cc_variables())
      vars.push_back({{"name", v.name}, {"unit", v.unit}, {"description", v.description}});
    std::vector<uint64_t> flows;
    for (const CcRow& r : cc_rows_) flows.push_back(r.flow_id);
    std::sort(flows.begin(), flows.end());
    j["cc_state"] = {{"period_us", spec_.cc_state_period.us()},
                     {"scheme", net_.cc().name()},
                     {"variables", std::move(vars)},
                     {"flows", std::unique(flows.begin(), flows.end()) - flows.begin()},
                     {"rows", cc_rows_.size()},
                     {"truncated", cc_dropped_ > 0}};
  }
  if (spec_.buffer) {
    std::vector<std::pair<Bytes, nlohmann::json>> sws;
    for (size_t i = 0; i < switches_.size(); ++i) {
      std::vector<Bytes> v = buffer_[i];
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      if (v.back() == 0) continue;
      const auto rank = [&](size_t num, size_t den) {  // nearest rank, as stats/fct_stats.h
        const size_t r = (v.size() * num + den - 1) / den;
        return v[r == 0 ? 0 : r - 1];
      };
      sws.emplace_back(v.back(), nlohmann::json{{"switch", node_name(switches_[i])},
                                                {"p50_bytes", rank(50, 100)},
                                                {"p99_bytes", rank(99, 100)},
                                                {"max_bytes", v.back()}});
    }
    j["buffer"] = {{"interval_us", spec_.buffer_interval.us()},
                   {"samples", buffer_.empty() ? size_t{0} : buffer_[0].size()},
                   {"top_switches", top_entries(std::move(sws))}};
  }
  if (spec_.packet_trace) j["packet_trace"] = packet_trace_summary();
  return j;
}

// --- packet_trace ---

void Monitors::start_packet_trace() {
  PacketTraceSettings s;
  s.flows = spec_.trace_flows;
  s.max_rows = spec_.trace_max_rows;
  const std::vector<std::string>& labels = net_.class_labels();
  for (const std::string& c : spec_.trace_classes) {
    const auto it = std::find(labels.begin(), labels.end(), c);
    if (it == labels.end())
      throw std::invalid_argument(fmt::format("monitors: packet_trace: no traffic class '{}'", c));
    s.classes.push_back(static_cast<uint16_t>(it - labels.begin()));
  }
  std::sort(s.classes.begin(), s.classes.end());
  net_.enable_packet_trace(std::move(s));
}

void Monitors::write_packet_trace_csv(std::ostream& out) const {
  fmt::memory_buffer buf;
  buf.append(std::string_view("time_us,flow,seq,node,port,peer,prio,event,detail,queue_bytes,paused_us\n"));
  std::vector<std::string> names(static_cast<size_t>(net_.num_nodes()));
  const auto name = [&](int id) -> const std::string& {
    std::string& n = names[static_cast<size_t>(id)];
    if (n.empty()) n = csv_field(node_name(id));
    return n;
  };
  for (const TraceRow& r : net_.packet_trace()->rows()) {
    fmt::format_to(std::back_inserter(buf), "{},{},{},{},", format_time_us(r.time()), r.flow, r.seq,
                   name(r.node));
    if (r.port >= 0)
      fmt::format_to(std::back_inserter(buf), "{},{},", r.port,
                     name(net_.node(r.node).port(r.port).peer->id()));
    else
      buf.append(std::string_view(",,"));
    fmt::format_to(std::back_inserter(buf), "{},{},{},", r.prio, to_string(r.event), to_string(r.detail));
    if (r.queue_bytes >= 0) fmt::format_to(std::back_inserter(buf), "{}", r.queue_bytes);
    buf.push_back(',');
    if (r.paused >= Time::zero()) buf.append(format_time_us(r.paused));
    buf.push_back('\n');
    if (buf.size() > kCsvFlushBytes) flush_buffer(out, buf);
  }
  flush_buffer(out, buf);
}

nlohmann::json Monitors::packet_trace_summary() const {
  const PacketTrace& t = *net_.packet_trace();
  return {{"flows_traced", t.flows_traced()},
          {"rows", t.rows().size()},
          {"max_rows", t.settings().max_rows},
          {"truncated", t.truncated()}};
}

}  // namespace rocesim
