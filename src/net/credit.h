// Credit-based link-level flow control (InfiniBand-style CBFC), the alternative to PFC selected with
// switch.flow_control = "credit" (SwitchSettings::credit_enabled). The Node methods credit_* are
// declared in net/node.h and defined in net/credit.cc.
//
//   Downstream (every switch ingress port and every host NIC), per priority 1..7: grants its upstream
//   credit_buffer_bytes of buffer. Each packet received on the port is counted as freed when it leaves
//   the node's buffer (switch: at dequeue; host: when the NIC has processed it). On a free-running clock
//   of period T_c (credit_period), the node sends one credit frame per (port, priority) whose freed count
//   changed, carrying the cumulative freed bytes (absolute counts, like IB's FCCL, so a frame simply
//   supersedes the previous one). Credit frames are 64 B control frames ahead of every queue.
//   Upstream (every egress port), per priority: may start a packet of `size` bytes only if
//   sent + size <= credit_buffer + peer_freed. A priority without credits for its next packet is marked
//   paused (credit-starved, reported through on_pfc(port, prio, true) like a PAUSE) until a credit frame
//   covers that packet (on_pfc(..., false), like a RESUME: TCD's "credit refill").
//   Lossless by construction: bytes held for an (ingress port, priority) never exceed credit_buffer,
//   provided the switch's buffer holds all it grants (ports x credit_buffer x data priorities in use:
//   switches_over_committed in net/switch_mmu.h, refused as the scenario is read; docs/models.md A7).
//   Priority 0 (control) is outside flow control, as under PFC.
#pragma once
#include "net/node.h"
