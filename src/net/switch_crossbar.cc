#include "net/switch_crossbar.h"

#include "net/network.h"
#include "net/switch.h"

namespace rocesim {

void Crossbar::configure() {
  on_ = s_.model == SwitchModel::kInputOutputQueued;
  if (!on_) return;
  const size_t n = sw_.ports_.size();
  const size_t nw = n * kNumPriorities;
  n_ports_ = static_cast<int>(n);
  voq_ = s_.input_queueing == InputQueueing::kVoq;
  const size_t nq = voq_ ? nw * n : nw;  // one queue per (input, priority[, output])
  iq_.assign(nq, {});
  waiting_on_.assign(nq, -1);
  waiters_.assign(n, {});
  for (auto& r : waiters_) r.buf.assign(nw, 0);
  pulling_.assign(n, 0);
}

void Crossbar::arrive(Packet* p, int out) {
  const int in = p->in_port;
  const int w = in * kNumPriorities + p->prio;
  p->acct_prio = p->prio;
  p->out_port = static_cast<int16_t>(out);
  SwitchMmu& mmu = sw_.mmu_;
  if (!mmu.input_has_room(in, p->prio, p->size)) {
    ++(p->type == PktType::kData ? sw_.net_.counters().data_drops : sw_.net_.counters().ctrl_drops);
    if (p->traced()) [[unlikely]]
      sw_.net_.trace(*p, sw_.id_, out, TraceEvent::kDrop, TraceDetail::kBuffer);
    sw_.net_.pool().put(p);
    return;
  }
  const int q = voq_ ? w * n_ports_ + out : w;
  iq_[q].push(p);
  mmu.input_enqueued(in, p->prio, p->size);
  if (InputAgent* a = sw_.input_agent_) a->on_input_enqueue(*p, in);
  advance(q);
}

// Moves the heads of input queue q while they can cross; else registers q with the output it waits on.
void Crossbar::advance(int q) {
  if (waiting_on_[q] >= 0) return;
  InputAgent* a = sw_.input_agent_;
  while (Packet* h = iq_[q].head) {
    const int out = h->out_port;
    const bool room = sw_.ports_[out].data_bytes + h->size <= s_.output_queue_bytes;
    if (room && waiters_[out].n == 0 && !(a && a->hold(*h, out))) {
      move(q, out);
      continue;
    }
    waiting_on_[q] = static_cast<int16_t>(out);
    waiters_[out].push(static_cast<uint32_t>(q));
    if (room) pull(out);  // others wait (held): let the crossbar choose
    return;
  }
}

// Serves the inputs waiting on `out` round robin while its output queue has room.
void Crossbar::pull(int out) {
  if (pulling_[out]) return;
  pulling_[out] = 1;
  InputAgent* a = sw_.input_agent_;
  WaitRing& r = waiters_[out];
  size_t held = 0;
  bool retried = false;
  while (r.n > 0) {
    if (held >= r.n) {
      if (retried || !a || !a->on_crossbar_idle(out)) break;
      retried = true;
      held = 0;
    }
    const int q = static_cast<int>(r.front());
    const Packet* h = iq_[q].head;
    if (sw_.ports_[out].data_bytes + h->size > s_.output_queue_bytes) break;
    r.pop();
    if (a && a->hold(*h, out)) {
      r.push(static_cast<uint32_t>(q));
      ++held;
      continue;
    }
    held = 0;
    waiting_on_[q] = -1;
    move(q, out);
    advance(q);  // its next head joins the back of a ring (round robin) or crosses elsewhere
  }
  pulling_[out] = 0;
}

void Crossbar::move(int q, int out) {
  Packet* p = iq_[q].pop();
  const int in = acct_of(q) / kNumPriorities;
  sw_.mmu_.input_dequeued(in, p->acct_prio, p->size);
  sw_.enqueue_output(p, out);
  if (SwitchAgent* a = sw_.agent_.get()) a->on_enqueue(*p, out);
  if (!sw_.in_dequeue_[out]) sw_.kick(out);
}

}  // namespace rocesim
