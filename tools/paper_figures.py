#!/usr/bin/env python3
"""One command per seed-paper experiment (docs/scenarios.md): run its sweep, draw its figures, print our
numbers beside the paper's claims.

    /usr/bin/python3 tools/paper_figures.py SCENARIO [-o DIR] [-j N] [--schemes a,b] [--loads 0.3,0.5]
                                            [--workloads hadoop,websearch] [--set KEY=VALUE ...] [--no-run]

SCENARIO is one of the names in SPECS below (mercury/victim, mercury/victim_spread, mercury/incast_burst,
mercury/small_hadoop, mercury/fattree, tcd/victim_40g, tcd/victim_100g, tcd/cbfc, icc/burst, icc/load).
The sweep goes to DIR (default runs/<paper>-<name>; one sub-directory per workload for the
workload x load grids) and is resumed, not redone, when it is already there (`rocesim sweep` skips
complete runs). Figures go to DIR/figures/*.png; the claims table is printed and written to
DIR/claims.csv (paper, scenario, claim, metric, paper value, ours, verdict). --no-run only redraws.

Verdicts are computed from the numbers with the rule printed next to each claim: "agree" when our run
shows the claimed direction and at least about the claimed size, "partly" when only the direction, and
"disagree" otherwise. They are a first reading, not a substitute for looking at the figures.

Needs matplotlib (Debian python3-matplotlib; use /usr/bin/python3). The simulator is build/rocesim
(or $ROCESIM).
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rocesim_plots as rp  # noqa: E402
from rocesim_plots import plt, np  # noqa: E402

ROOT = os.path.dirname(HERE)
MERCURY6 = ["timely", "dcqcn", "dcqcn_tcd", "pacc", "hpcc", "mercury"]
ICC4 = ["dcqcn", "timely", "pcn", "icc"]
VICTIM_PORTS = [("P1", "S1", "S2"), ("P2", "S2", "S3"), ("P3", "S3", "R2")]

SPECS = {
    # kind victim: F1 = flow 0 (victim), F2 = flow 1 (congested); burst [3.0, 3.5) ms.
    "mercury/victim": dict(kind="victim", schemes=MERCURY6, burst_us=(3000, 3500), window_ms=(2.5, 4.5)),
    "mercury/victim_spread": dict(kind="victim", schemes=MERCURY6, burst_us=(3000, 3500),
                                  window_ms=(2.5, 4.5)),
    "tcd/victim_40g": dict(kind="victim", schemes=["dcqcn", "dcqcn_tcd"], burst_us=(3000, 3500),
                           window_ms=(2.5, 5.5)),
    "tcd/victim_100g": dict(kind="victim", schemes=["dcqcn", "dcqcn_tcd"], burst_us=(3000, 3500),
                            window_ms=(2.5, 5.5)),
    "tcd/cbfc": dict(kind="victim", schemes=["dcqcn", "dcqcn_tcd"], burst_us=(3000, 3500),
                     window_ms=(2.5, 5.5)),
    "mercury/incast_burst": dict(kind="incast", schemes=MERCURY6, burst_us=(600, 600)),
    "mercury/small_hadoop": dict(kind="fct", schemes=MERCURY6),
    "mercury/fattree": dict(kind="fct", schemes=MERCURY6, loads=["0.3", "0.5", "0.8"],
                            workloads=["hadoop", "webserver", "cachefollower", "websearch"]),
    "icc/burst": dict(kind="icc_burst", schemes=ICC4, burst_us=(500, 500)),
    # > 50 000 flows in the seed; here 300 ms of Hadoop arrivals (~4 000-14 000 flows per run) and 1 s of
    # WebSearch arrivals (~1 500-5 000 flows), one core-second or two per run.
    "icc/load": dict(kind="icc_load", schemes=ICC4, loads=["0.2", "0.3", "0.4", "0.5", "0.6", "0.7"],
                     workloads=["hadoop", "websearch"],
                     workload_sets={"hadoop": ["traffic[0].stop_us=300000", "duration_ms=1000"],
                                    "websearch": ["traffic[0].stop_us=1000000", "duration_ms=2000"]}),
}


# ----------------------------------------------------------------------------------------------------------
# Running


def run_sweep(scenario, out, schemes, loads, workload, sets, jobs):
    exe = os.environ.get("ROCESIM", os.path.join(ROOT, "build", "rocesim"))
    cmd = ["nice", exe, "sweep", os.path.join(ROOT, "scenarios", scenario + ".toml"), "-q", "-j", str(jobs),
           "-o", out, "--grid", "scheme=" + ",".join(schemes)]
    if loads:
        cmd += ["--grid", "load=" + ",".join(loads)]
    if workload:
        cmd += ["--set", f'traffic[0].workload="{workload}"']
    for s in sets:
        cmd += ["--set", s]
    t0 = time.time()
    print("$ " + " ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    print(f"  sweep {out}: exit {rc}, {time.time() - t0:.0f} s wall", flush=True)
    if rc != 0:
        raise SystemExit(f"error: the sweep {out} failed (exit {rc})")


def sweep_runs(d):
    """{scheme: {load: Run}} of a sweep directory."""
    sw = rp.Sweep(d)
    out = defaultdict(dict)
    for run in sw.runs.values():
        out[run.values.get("scheme", run.label)][run.values.get("load", "")] = run
    return out, sw


# ----------------------------------------------------------------------------------------------------------
# Reading one run


def flow_series(run, fid):
    flows, _ = rp.read_rates(run)
    t, g = flows.get(str(fid), ([], []))
    return np.array(t), np.array(g)


def mean_in(t, g, t0, t1):
    m = (t >= t0) & (t < t1)
    return float(np.mean(g[m])) if m.any() else float("nan")


def min_smoothed(t, g, t0, t1, width_us=50.0):
    """Lowest mean rate over any width_us window inside [t0, t1)."""
    m = (t >= t0) & (t < t1)
    if not m.any():
        return float("nan")
    bin_us = t[1] - t[0] if len(t) > 1 else width_us
    k = max(1, int(round(width_us / bin_us)))
    v = g[m]
    if len(v) < k:
        return float(np.mean(v))
    return float(np.min(np.convolve(v, np.ones(k) / k, mode="valid")))


def recovery_us(t, g, since_us, ref, frac=0.9, hold_us=100.0):
    """Time from since_us until the rate is >= frac x ref and stays there for hold_us (nan: never)."""
    if not ref or math.isnan(ref) or len(t) < 2:
        return float("nan")
    bin_us = t[1] - t[0]
    k = max(1, int(round(hold_us / bin_us)))
    idx = np.nonzero(t >= since_us)[0]
    ok = g >= frac * ref
    for i in idx:
        if i + k <= len(g) and ok[i:i + k].all():
            return float(t[i] - since_us)
    return float("nan")


def queue_series(run, node, peer):
    t, b = [], []
    for r in rp.read_csv(os.path.join(run.path, "queues.csv")):
        if r["node"] == node and r["peer"] == peer:
            t.append(float(r["time_us"]))
            b.append(float(r["queue_bytes"]))
    return np.array(t), np.array(b)


def pause_events(run, node=None, peer=None):
    """Start times (us) and durations (us, nan while open) of the paused intervals of node's port to peer."""
    out = []
    for r in rp.read_csv(os.path.join(run.path, "pfc.csv")):
        if (node and r["node"] != node) or (peer and r["peer"] != peer):
            continue
        if r["event"] == "pause":
            out.append(float(r["time_us"]))
    return np.array(out)


def paused_time_us(run, node, peer):
    tot = 0.0
    for r in rp.read_csv(os.path.join(run.path, "pfc.csv")):
        if r["node"] == node and r["peer"] == peer and r["event"] in ("resume", "end"):
            tot += rp.to_float(r["duration_us"], 0.0)
    return tot


def cnps(run, fid):
    for r in rp.read_csv(os.path.join(run.path, "cnps.csv")):
        if r["flow_id"] == str(fid):
            return int(r["cnps_received"]), int(r["cnps_from_switches"])
    return 0, 0


def fct_of(run, pred):
    fl = run.flows()
    return np.array([fl["fct_us"][i] for i in range(len(fl["fct_us"])) if pred(fl, i)])


def pct(v, q):
    return rp.nearest_rank(v, q) if len(v) else float("nan")


def summary_fct(run, part, stat):
    """summary.json fct: part 'all' | 'short' | 'long'; stat avg | p99."""
    f = run.summary.get("fct", {})
    d = f if part == "all" else f.get(part, {})
    return d.get("fct_us", {}).get(stat, float("nan"))


# ----------------------------------------------------------------------------------------------------------
# Claims


class Claims:
    def __init__(self, paper, scenario):
        self.paper, self.scenario, self.rows = paper, scenario, []

    def add(self, claim, metric, paper_value, ours, verdict, scenario=None):
        self.rows.append(dict(paper=self.paper, scenario=scenario or self.scenario, claim=claim, metric=metric,
                              paper_value=paper_value, ours=ours, verdict=verdict))

    def write(self, out_dir):
        if not self.rows:
            return
        p = os.path.join(out_dir, "claims.csv")
        with open(p, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(self.rows[0].keys()))
            w.writeheader()
            w.writerows(self.rows)
        print(f"\nClaims ({p}):")
        for r in self.rows:
            print(f"- [{r['verdict']}] {r['scenario']}: {r['claim']}\n    {r['metric']}: paper {r['paper_value']}"
                  f" | ours {r['ours']}")


def verdict(direction_ok, size_ok):
    return "agree" if direction_ok and size_ok else ("partly" if direction_ok else "disagree")


def reduction(ours, other):
    """Percent by which ours is below other."""
    return 100.0 * (1.0 - ours / other) if other and not math.isnan(other) else float("nan")


# ----------------------------------------------------------------------------------------------------------
# Kind "victim": mercury/victim, mercury/victim_spread, tcd/victim_*, tcd/cbfc


def analyse_victim(runs, spec):
    b0, b1 = spec["burst_us"]
    res = {}
    for s, by_load in runs.items():
        run = next(iter(by_load.values()))
        r = {}
        for name, fid in (("f1", 0), ("f2", 1)):
            t, g = flow_series(run, fid)
            r[name + "_pre"] = mean_in(t, g, b0 - 500, b0)
            r[name + "_during"] = mean_in(t, g, b0, b1 + 100)
            r[name + "_min"] = min_smoothed(t, g, b0, b1 + 500)
            r[name + "_rec_us"] = recovery_us(t, g, b1, r[name + "_pre"])
            r[name + "_after"] = mean_in(t, g, b1 + 100, b1 + 600)
            # reaction: us from the burst start until the 10 us rate is below half the pre-burst rate
            below = np.nonzero((t >= b0) & (g < 0.5 * r[name + "_pre"]))[0]
            r[name + "_cut_us"] = float(t[below[0]] - b0) if len(below) else float("nan")
            r[name + "_cnps"] = cnps(run, fid)[0]
        for pname, node, peer in VICTIM_PORTS:
            _, q = queue_series(run, node, peer)
            r[pname + "_maxq_kb"] = float(q.max()) / 1e3 if len(q) else float("nan")
            r[pname + "_pauses"] = len(pause_events(run, node, peer))
            r[pname + "_paused_us"] = paused_time_us(run, node, peer)
        res[s] = r
    return res


def fig_victim(runs, spec, out_dir, title):
    w0, w1 = spec["window_ms"]
    schemes = list(runs)
    fig, axes = plt.subplots(2, 3, figsize=(15, 7.5))
    for i, s in enumerate(schemes):
        run = next(iter(runs[s].values()))
        st = dict(color=rp.COLORS[i % len(rp.COLORS)], lw=1.2, label=s)
        for ax, fid in ((axes[0][0], 1), (axes[0][1], 0)):
            t, g = flow_series(run, fid)
            m = (t >= w0 * 1e3) & (t <= w1 * 1e3)
            ax.step(t[m] / 1e3, g[m], where="post", **st)
        for ax, (pname, node, peer) in zip((axes[1][0], axes[1][1], axes[1][2]), VICTIM_PORTS):
            t, q = queue_series(run, node, peer)
            m = (t >= w0 * 1e3) & (t <= w1 * 1e3)
            ax.plot(t[m] / 1e3, q[m] / 1e3, **st)
        ev = pause_events(run, "S1", "S2")
        ev = ev[(ev >= w0 * 1e3) & (ev <= w1 * 1e3)]
        ev2 = pause_events(run, "S2", "S3")
        ev2 = ev2[(ev2 >= w0 * 1e3) & (ev2 <= w1 * 1e3)]
        axes[0][2].bar(i - 0.2, len(ev), 0.4, color=st["color"])
        axes[0][2].bar(i + 0.2, len(ev2), 0.4, color=st["color"], alpha=0.5)
    axes[0][0].set_title("F2 (H2\u2192R2, congested): goodput")
    axes[0][1].set_title("F1 (H1\u2192R1, victim): goodput")
    axes[0][2].set_title("paused intervals: P1 = S1\u2192S2 (solid), P2 = S2\u2192S3 (light)")
    axes[0][2].set_xticks(range(len(schemes)))
    axes[0][2].set_xticklabels(schemes, rotation=30)
    for ax in (axes[0][0], axes[0][1]):
        ax.set_ylabel("Gb/s (10 \u00b5s bins)")
        ax.axvspan(spec["burst_us"][0] / 1e3, spec["burst_us"][1] / 1e3, color="grey", alpha=0.12)
    for ax, (pname, node, peer) in zip(axes[1], VICTIM_PORTS):
        ax.set_title(f"{pname} = {node}\u2192{peer} egress queue")
        ax.set_ylabel("KB")
        ax.set_xlabel("time (ms)")
        ax.axvspan(spec["burst_us"][0] / 1e3, spec["burst_us"][1] / 1e3, color="grey", alpha=0.12)
    axes[0][1].legend(frameon=False, fontsize=8)
    fig.suptitle(title + " (grey: burst senders active)")
    fig.tight_layout()
    return rp.save(fig, out_dir, "victim")


def print_victim(res):
    print(f"{'scheme':10} {'F1 pre':>7} {'F1 burst':>8} {'F1 after':>8} {'F1 min':>7} {'F1 rec':>7} {'F1 CNPs':>7}"
          f" {'F2 pre':>7} {'F2 burst':>8} {'F2 after':>8} {'F2 cut':>7} {'F2 CNPs':>7} {'P1 maxQ':>8} {'P2 maxQ':>8}"
          f" {'P3 maxQ':>8} {'P1 paus':>7} {'P2 paus':>7}")
    for s, r in res.items():
        print(f"{s:10} {r['f1_pre']:7.1f} {r['f1_during']:8.1f} {r['f1_after']:8.1f} {r['f1_min']:7.1f}"
              f" {r['f1_rec_us']:7.0f} {r['f1_cnps']:7d} {r['f2_pre']:7.1f} {r['f2_during']:8.1f} {r['f2_after']:8.1f}"
              f" {r['f2_cut_us']:7.0f} {r['f2_cnps']:7d} {r['P1_maxq_kb']:8.0f} {r['P2_maxq_kb']:8.0f}"
              f" {r['P3_maxq_kb']:8.0f} {r['P1_pauses']:7d} {r['P2_pauses']:7d}")
    print("(rates Gb/s: pre = mean over the 500 us before the burst, burst = mean over the burst + 100 us, after ="
          " mean over the 500 us after that, min = lowest 50 us mean within the burst + 500 us; rec = us after"
          " the burst senders stop until >= 90 % of pre for 100 us; F2 cut = us from the burst start until F2's"
          " 10 us rate < 50 % of pre; maxQ KB; paus = paused intervals of P1 = S1->S2, P2 = S2->S3)")


def claims_victim(name, res, claims):
    # Goodput drops to 0 under any PAUSE whatever the scheme does, so the rate claims use means: over the
    # burst (+100 us) and over the 500 us after it (what the sender's rate was left at).
    def ratio(s, k="during"):
        r = res[s]
        return r[f"f1_{k}"] / r["f1_pre"] if r["f1_pre"] else float("nan")

    if name.startswith("mercury/"):
        base = [s for s in ("timely", "dcqcn", "hpcc", "pacc") if s in res]
        cut = [s for s in base if min(ratio(s), ratio(s, "after")) < 0.8]
        claims.add("every baseline (Timely, DCQCN, HPCC, PACC) cuts F1",
                   "F1 mean during burst / after burst, over pre-burst",
                   "cut (Fig. 9b)", ", ".join(f"{s} {ratio(s):.2f}/{ratio(s, 'after'):.2f}" for s in base),
                   verdict(len(cut) >= max(1, len(base) - 1), len(cut) == len(base)) if base else "n/a")
        if "dcqcn_tcd" in res:
            r = res["dcqcn_tcd"]
            others = [ratio(s) for s in base]
            claims.add("DCQCN+TCD cuts F1 less than the baselines (to ~5 Gb/s)", "F1 mean during burst (Gb/s)",
                       "~5 Gb/s, above the baselines",
                       f"{r['f1_during']:.1f} Gb/s (ratio {ratio('dcqcn_tcd'):.2f}; baselines "
                       f"{min(others):.2f}-{max(others):.2f})" if others else f"{r['f1_during']:.1f}",
                       verdict(bool(others) and ratio("dcqcn_tcd") > sorted(others)[len(others) // 2],
                               bool(others) and ratio("dcqcn_tcd") < 0.8))
        if "mercury" in res:
            r = res["mercury"]
            claims.add("Mercury keeps F1 at its rate", "F1 mean during / after burst, over pre-burst", "unchanged",
                       f"{ratio('mercury'):.2f}/{ratio('mercury', 'after'):.2f} ({r['f1_during']:.1f}/"
                       f"{r['f1_after']:.1f} of {r['f1_pre']:.1f} Gb/s; lowest 50 us {r['f1_min']:.1f})",
                       verdict(min(ratio("mercury"), ratio("mercury", "after")) >= 0.8,
                               min(ratio("mercury"), ratio("mercury", "after")) >= 0.9))
            mc = r["f2_cut_us"]
            oc = [res[s]["f2_cut_us"] for s in res if s != "mercury"]
            claims.add("Mercury cuts F2 and reacts faster when the burst starts",
                       "us from the burst start until F2 < 50 % of pre-burst", "fastest",
                       f"mercury {mc:.0f}; " + ", ".join(f"{s} {res[s]['f2_cut_us']:.0f}" for s in res
                                                         if s != "mercury"),
                       "n/a: every F2 drops in the first 10 us bin (queued behind the burst at P3)"
                       if all(o == mc for o in oc) else verdict(all(not (o < mc) for o in oc), True))
    else:
        if "dcqcn" in res and "dcqcn_tcd" in res:
            d, t = res["dcqcn"], res["dcqcn_tcd"]
            spread = d["P1_pauses"] + d["P2_pauses"] + t["P1_pauses"] + t["P2_pauses"] > 0
            claims.add("with DCQCN+TCD the victim F1 keeps more rate than with DCQCN",
                       "F1 mean during burst / after burst (Gb/s)",
                       "TCD > DCQCN", f"TCD {t['f1_during']:.1f} / {t['f1_after']:.1f}; DCQCN {d['f1_during']:.1f} /"
                       f" {d['f1_after']:.1f}" + ("" if spread else " (no pause logged at P1/P2)"),
                       verdict(t["f1_during"] > d["f1_during"] + 0.5, t["f1_after"] >= d["f1_after"] - 0.5))
            claims.add("victim flows are not marked CE (P1/P2 undetermined); F1 gets UE-CNPs that hold its rate",
                       "CNPs received by F1 / F2 here; CE vs UE split in tests/tcd_test.cc",
                       "F1: no CE-CNPs",
                       f"TCD {t['f1_cnps']} / {t['f2_cnps']}, DCQCN {d['f1_cnps']} / {d['f2_cnps']}; F1 back to 90 %"
                       f" {t['f1_rec_us']:.0f} us (TCD) vs {d['f1_rec_us']:.0f} us (DCQCN) after the burst",
                       "see test")


# ----------------------------------------------------------------------------------------------------------
# Kind "incast": mercury/incast_burst


def analyse_incast(runs, spec):
    b0 = spec["burst_us"][0]
    res = {}
    for s, by_load in runs.items():
        run = next(iter(by_load.values()))
        t, g = flow_series(run, 0)
        _, q = queue_series(run, "s0", "s1")
        pre = mean_in(t, g, b0 - 200, b0)
        burst = fct_of(run, lambda fl, i: fl["class"][i] == "incast")
        res[s] = dict(pre=pre, minrate=min_smoothed(t, g, b0, b0 + 1000, 30.0), maxq_kb=float(q.max()) / 1e3,
                      rec_us=recovery_us(t, g, b0, pre, frac=0.8, hold_us=200.0),
                      incast_fct_max=float(burst.max()) if len(burst) else float("nan"))
    return res


def fig_incast(runs, spec, out_dir, title):
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2))
    for i, s in enumerate(runs):
        run = next(iter(runs[s].values()))
        st = dict(color=rp.COLORS[i % len(rp.COLORS)], lw=1.2, label=s)
        t, g = flow_series(run, 0)
        axes[0].step(t / 1e3, g, where="post", **st)
        t, q = queue_series(run, "s0", "s1")
        axes[1].plot(t / 1e3, q / 1e3, **st)
    axes[0].set_title("long flow H1\u2192R1: goodput (10 \u00b5s bins)")
    axes[0].set_ylabel("Gb/s")
    axes[1].set_title("S1\u2192S2 egress queue")
    axes[1].set_ylabel("KB")
    for ax in axes:
        ax.set_xlabel("time (ms)")
        ax.axvline(spec["burst_us"][0] / 1e3, color="grey", ls=":")
    axes[0].legend(frameon=False, fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return rp.save(fig, out_dir, "incast")


def print_incast(res):
    print(f"{'scheme':10} {'pre Gb/s':>8} {'min Gb/s':>8} {'rec us':>7} {'S1 maxQ KB':>10} {'incast max FCT':>14}")
    for s, r in res.items():
        print(f"{s:10} {r['pre']:8.1f} {r['minrate']:8.1f} {r['rec_us']:7.0f} {r['maxq_kb']:10.0f}"
              f" {r['incast_fct_max']:14.0f}")
    print("(min = lowest 30 us mean in the 1 ms after 600 us; rec = us after 600 us until >= 80 % of pre for 200 us)")


def claims_incast(name, res, claims):
    base = [s for s in ("dcqcn", "timely", "hpcc") if s in res]
    claims.add("DCQCN, Timely and HPCC build > 1000 KB at S1", "S1->S2 max queue (KB)", "> 1000 KB",
               ", ".join(f"{s} {res[s]['maxq_kb']:.0f}" for s in base),
               verdict(all(res[s]["maxq_kb"] > 500 for s in base), all(res[s]["maxq_kb"] > 1000 for s in base)))
    claims.add("... and drive the long flow near zero for a while", "long flow lowest 30 us mean (Gb/s)", "~0",
               ", ".join(f"{s} {res[s]['minrate']:.1f}" for s in base),
               verdict(all(res[s]["minrate"] < 0.3 * res[s]["pre"] for s in base),
                       all(res[s]["minrate"] < 2 for s in base)))
    if "mercury" in res:
        m = res["mercury"]
        claims.add("Mercury keeps the long flow above 6 Gb/s", "long flow lowest 30 us mean (Gb/s)", "> 6",
                   f"{m['minrate']:.1f}", verdict(m["minrate"] > 6, True))
        others = [res[s]["rec_us"] for s in res if s != "mercury" and not math.isnan(res[s]["rec_us"])]
        claims.add("... and recovers faster", "long flow back to 80 % of pre-burst for 200 us (us after 600 us)", "fastest",
                   f"mercury {m['rec_us']:.0f}; " + ", ".join(f"{s} {res[s]['rec_us']:.0f}" for s in res
                                                             if s != "mercury"),
                   verdict(not math.isnan(m["rec_us"]) and all(m["rec_us"] <= o for o in others), True))


# ----------------------------------------------------------------------------------------------------------
# Kind "fct": mercury/small_hadoop, mercury/fattree (one sweep per workload)


def fct_row(run):
    r = {}
    for part in ("all", "short", "long"):
        for stat in ("avg", "p99"):
            r[f"{part}_{stat}"] = summary_fct(run, part, stat)
    r["pauses"] = run.summary.get("pfc", {}).get("pauses_sent", 0)
    r["flows"] = run.summary.get("flows", {}).get("finished", 0)
    r["complete"] = run.summary.get("complete", True)
    q = []
    if run.file("queues.csv"):
        for row in rp.read_csv(run.file("queues.csv")):
            q.append(float(row["queue_bytes"]))
    r["maxq_kb"] = max(q) / 1e3 if q else float("nan")
    return r


def fig_fct(tables, out_dir, title, name):
    """tables: {workload: {scheme: {load: row}}}; one row of 6 panels per workload."""
    panels = [("all", "avg"), ("all", "p99"), ("short", "avg"), ("short", "p99"), ("long", "avg"), ("long", "p99")]
    wls = list(tables)
    fig, axes = plt.subplots(len(wls), len(panels), figsize=(3.3 * len(panels), 3.0 * len(wls) + 0.6),
                             squeeze=False)
    for wi, wl in enumerate(wls):
        tab = tables[wl]
        schemes = list(tab)
        loads = sorted({l for s in tab for l in tab[s]}, key=rp.load_key)
        width = 0.8 / max(1, len(schemes))
        x = np.arange(len(loads))
        for ax, (part, stat) in zip(axes[wi], panels):
            for i, s in enumerate(schemes):
                vals = [tab[s].get(l, {}).get(f"{part}_{stat}", np.nan) for l in loads]
                ax.bar(x + (i - (len(schemes) - 1) / 2) * width, vals, width * 0.92, color=rp.COLORS[i % 8],
                       label=s)
            ax.set_xticks(x)
            ax.set_xticklabels([f"{float(l):g}" if l else "-" for l in loads])
            ax.set_title(f"{wl}: {part} flows, {stat} FCT", fontsize=9)
            ax.grid(axis="x", visible=False)
            if part == "all":
                ax.set_ylabel("FCT (\u00b5s)")
            if wi == len(wls) - 1:
                ax.set_xlabel("load")
    axes[0][0].legend(frameon=False, fontsize=7)
    fig.suptitle(title + " (short < 100 KB <= long)")
    fig.tight_layout()
    return rp.save(fig, out_dir, name)


def print_fct(tables):
    for wl, tab in tables.items():
        print(f"\n{wl}: FCT us (avg / p99) overall, short (< 100 KB), long; PFC pauses; max monitored queue KB")
        for s, by_load in tab.items():
            for l, r in sorted(by_load.items(), key=lambda kv: rp.load_key(kv[0])):
                print(f"  {s:10} load {l or '-':4} all {r['all_avg']:8.1f} / {r['all_p99']:8.1f}   short"
                      f" {r['short_avg']:7.1f} / {r['short_p99']:7.1f}   long {r['long_avg']:8.1f} / {r['long_p99']:8.1f}"
                      f"   pauses {r['pauses']:6d}   maxQ {r['maxq_kb']:6.0f}   flows {r['flows']}"
                      + ("" if r["complete"] else " (incomplete)"))


def claims_fct(name, tables, claims):
    if name == "mercury/small_hadoop":
        tab = next(iter(tables.values()))
        if "mercury" not in tab:
            return
        one = {s: next(iter(v.values())) for s, v in tab.items()}
        m = one["mercury"]
        others = [s for s in tab if s != "mercury"]
        red = {s: reduction(m["all_p99"], one[s]["all_p99"]) for s in others}
        claims.add("Mercury cuts p99 FCT 16-26 % vs the others", "p99 FCT reduction vs each scheme (%)",
                   "16.1-25.5 %", ", ".join(f"{s} {v:+.1f}" for s, v in red.items()),
                   verdict(all(v > 0 for v in red.values()), all(v >= 10 for v in red.values())))
        redq = {s: reduction(m["maxq_kb"], one[s]["maxq_kb"]) for s in others}
        claims.add("Mercury cuts the max switch queue 21-39 % vs the others",
                   "max monitored queue reduction (%)", "20.9-39.2 %",
                   ", ".join(f"{s} {v:+.1f}" for s, v in redq.items()),
                   verdict(all(v > 0 for v in redq.values()), all(v >= 15 for v in redq.values())))
        return
    # mercury/fattree
    paper_avg = {"cachefollower": "21.1-38.5 %", "hadoop": "11.2-36.1 %", "websearch": "up to 21.9 %",
                 "webserver": "up to 32.6 %"}
    for wl, tab in tables.items():
        if "mercury" not in tab:
            continue
        others = [s for s in tab if s != "mercury"]
        if not others:  # --schemes mercury alone: nothing to compare with
            continue
        loads = sorted(tab["mercury"], key=rp.load_key)
        for stat, claimtxt, pv in (("avg", "Mercury has the lowest overall average FCT", paper_avg.get(wl, "")),
                                   ("p99", "Mercury has the lowest overall p99 FCT", "lowest (Fig. 12)")):
            red = [(s, l, reduction(tab["mercury"][l][f"all_{stat}"], tab[s][l][f"all_{stat}"]))
                   for s in others for l in loads if l in tab[s]]
            wins = sum(1 for _, _, v in red if v > 0)
            lo = min(v for _, _, v in red)
            hi = max(v for _, _, v in red)
            per = "; ".join(f"{s} " + "/".join(f"{v:+.0f}" for ss, _, v in red if ss == s) for s in others)
            claims.add(claimtxt, f"reduction vs others, loads {'/'.join(loads)} (%)", pv,
                       f"{wins}/{len(red)} lower, {lo:+.1f}..{hi:+.1f} % ({per})",
                       verdict(wins >= 0.75 * len(red), wins == len(red)), scenario=f"{name} {wl}")
        if "hpcc" in tab:
            d = [tab["mercury"][l]["short_avg"] - tab["hpcc"][l]["short_avg"] for l in loads if l in tab["hpcc"]]
            dp = [-reduction(tab["mercury"][l]["short_avg"], tab["hpcc"][l]["short_avg"]) for l in loads
                  if l in tab["hpcc"]]  # Mercury above HPCC, % of HPCC's
            near = all(tab["mercury"][l]["short_avg"] >= 0.95 * tab["hpcc"][l]["short_avg"] for l in loads
                       if l in tab["hpcc"])  # "slightly above": not more than 5 % below HPCC (no upper bound)
            beats = [s for s in others if s != "hpcc"]
            w = sum(1 for s in beats for l in loads
                    if tab["mercury"][l]["short_avg"] < tab[s][l]["short_avg"])
            claims.add("short flows: Mercury below Timely/DCQCN/TCD/PACC, slightly above HPCC",
                       "short avg FCT: Mercury - HPCC (us) per load; wins vs the others",
                       "slightly above HPCC", "/".join(f"{v:+.1f}" for v in d) +
                       " us (" + "/".join(f"{v:+.0f}" for v in dp) + " %)" +
                       f"; lower than the other four in {w}/{len(beats) * len(loads)}",
                       verdict(w >= 0.75 * len(beats) * len(loads), near),
                       scenario=f"{name} {wl}")
        if wl == "hadoop":
            pv = {"timely": 45.1, "dcqcn": 41.8, "dcqcn_tcd": 38.7, "pacc": 30.9, "hpcc": 37.9}
            pa = {"timely": 26.5, "dcqcn": 26.3, "dcqcn_tcd": 21.8, "pacc": 19.7, "hpcc": 27.1}
            for stat, ref, txt in (("p99", pv, "long-flow p99 FCT reduction up to"),
                                   ("avg", pa, "long-flow average FCT reduction up to")):
                best = {s: max(reduction(tab["mercury"][l][f"long_{stat}"], tab[s][l][f"long_{stat}"])
                               for l in loads if l in tab[s]) for s in others}
                claims.add(f"{txt} {'/'.join(f'{ref[s]}' for s in others if s in ref)} % vs "
                           f"{'/'.join(s for s in others if s in ref)} (Hadoop)",
                           f"max over loads of the long-flow {stat} reduction (%)",
                           "/".join(f"{ref[s]}" for s in others if s in ref),
                           "/".join(f"{best[s]:+.1f}" for s in others if s in ref),
                           verdict(all(best[s] > 0 for s in others),
                                   all(best[s] >= 0.5 * ref.get(s, 0) for s in others)),
                           scenario=f"{name} {wl}")


# ----------------------------------------------------------------------------------------------------------
# Kind "icc_burst"


FAIR_GBPS = 50.0  # F0 and F1 share R0's 100 Gb/s link: F1's fair share


def analyse_icc_burst(runs, spec):
    b0 = spec["burst_us"][0]
    res = {}
    for s, by_load in runs.items():
        run = next(iter(by_load.values()))
        t, g = flow_series(run, 1)
        pre = mean_in(t, g, b0 - 200, b0)
        fl = run.flows()
        burst_idx = [i for i, c in enumerate(fl["class"]) if c in ("burst", "hb")]
        burst = np.array([fl["fct_us"][i] for i in burst_idx])
        rows = rp.read_csv(os.path.join(run.path, "flows.csv"))
        bend = max((float(r["finish_us"]) for r in rows if r["class"] in ("burst", "hb")), default=float("nan"))
        victim = [float(r["fct_us"]) for r in rows if r["id"] == "1"]
        _, q = queue_series(run, "s0", "s1")
        res[s] = dict(pauses=run.summary.get("pfc", {}).get("pauses_sent", 0),
                      pauses_h1=len(pause_events(run, "h1", "s0")),
                      paused_h1_us=paused_time_us(run, "h1", "s0"), f1_pre=pre,
                      rec_start_us=recovery_us(t, g, b0, pre), burst_end_us=bend,
                      rec_fair_us=recovery_us(t, g, b0, FAIR_GBPS),
                      rec_end_us=recovery_us(t, g, bend, pre) if not math.isnan(bend) else float("nan"),
                      f1_mean_2ms=mean_in(t, g, b0, b0 + 2000),
                      victim_fct=victim[0] if victim else float("nan"),
                      burst_avg=float(np.mean(burst)) if len(burst) else float("nan"), burst_p99=pct(burst, 0.99),
                      maxq_kb=float(q.max()) / 1e3 if len(q) else float("nan"))
    return res


def fig_icc_burst(runs, spec, out_dir, title):
    b0 = spec["burst_us"][0]
    fig, axes = plt.subplots(2, 2, figsize=(13, 8))
    schemes = list(runs)
    res = analyse_icc_burst(runs, spec)
    tmax = 3000.0
    for i, s in enumerate(schemes):
        run = next(iter(runs[s].values()))
        st = dict(color=rp.COLORS[i % 8], lw=1.3, label=s)
        ev = pause_events(run, "h1", "s0")
        # PAUSE frames are not logged one by one: pfc.csv holds paused intervals (a refresh while paused is
        # not an event); count interval starts per 100 us and draw the paused fraction of each bin too.
        edges = np.arange(0, tmax + 100, 100)
        cnt, _ = np.histogram(ev, edges)
        axes[0][0].step(edges[:-1] / 1e3, cnt, where="post", **st)
        t, g = flow_series(run, 1)
        m = t <= tmax
        axes[0][1].step(t[m] / 1e3, g[m], where="post", **st)
        t, q = queue_series(run, "s0", "s1")
        m = t <= tmax
        axes[1][1].plot(t[m] / 1e3, q[m] / 1e6, **st)
    axes[0][0].set_title("PFC pauses received on S0\u2192H1 (H1 paused by S0) per 100 \u00b5s")
    axes[0][0].set_ylabel("pause events / 100 \u00b5s")
    axes[0][1].set_title("F1 (H1\u2192R0, victim) goodput, 20 \u00b5s bins")
    axes[0][1].set_ylabel("Gb/s")
    axes[1][1].set_title("S0\u2192S1 (P0) egress queue")
    axes[1][1].set_ylabel("MB")
    x = np.arange(4)
    width = 0.8 / len(schemes)
    for i, s in enumerate(schemes):
        r = res[s]
        vals = [r["victim_fct"] / 1e3, r["burst_avg"] / 1e3, r["burst_p99"] / 1e3]
        axes[1][0].bar(x[:3] + (i - (len(schemes) - 1) / 2) * width, vals, width * 0.92, color=rp.COLORS[i % 8],
                       label=s)
    axes[1][0].set_xticks(x[:3])
    axes[1][0].set_xticklabels(["victim F1 FCT", "burst avg FCT", "burst p99 FCT"])
    axes[1][0].set_yscale("log")
    axes[1][0].set_ylabel("ms (log)")
    axes[1][0].set_title("FCT of the victim and of the 120 burst flows")
    for ax in (axes[0][0], axes[0][1], axes[1][1]):
        ax.axvline(b0 / 1e3, color="grey", ls=":")
        ax.set_xlabel("time (ms)")
    axes[0][1].legend(frameon=False, fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return rp.save(fig, out_dir, "icc_burst")


def print_icc_burst(res):
    print(f"{'scheme':8} {'pauses':>7} {'S0->H1':>7} {'paused us':>9} {'F1 pre':>7} {'rec/start':>9} {'rec/fair':>8}"
          f" {'rec/end':>8}"
          f" {'burst end':>9} {'F1 0-2ms':>8} {'victim us':>10} {'burst avg':>10} {'burst p99':>10} {'P0 maxQ':>8}")
    for s, r in res.items():
        print(f"{s:8} {r['pauses']:7d} {r['pauses_h1']:7d} {r['paused_h1_us']:9.0f} {r['f1_pre']:7.1f}"
              f" {r['rec_start_us']:9.0f} {r['rec_fair_us']:8.0f} {r['rec_end_us']:8.0f} {r['burst_end_us']:9.0f} {r['f1_mean_2ms']:8.1f}"
              f" {r['victim_fct']:10.0f} {r['burst_avg']:10.1f} {r['burst_p99']:10.1f} {r['maxq_kb']:8.0f}")
    print("(pauses: PAUSE frames sent anywhere (summary.json); S0->H1: paused intervals of H1's port; F1 pre:"
          " mean Gb/s over 300-500 us; rec/start, rec/end: us from the burst start (500 us) / from the last"
          " burst flow's finish until F1 is >= 90 % of pre for 100 us; rec/fair: us from the burst start until F1 is"
          " >= 90 % of its 50 Gb/s fair share for 100 us; F1 0-2ms: F1's mean over the 2 ms"
          " after the burst start)")


def claims_icc_burst(name, res, claims):
    if "icc" not in res:
        return
    i = res["icc"]
    others = [s for s in ("dcqcn", "timely", "pcn") if s in res]
    red = {s: reduction(i["pauses"], res[s]["pauses"]) for s in others}
    claims.add("ICC sends at least 56/63/38 % fewer PFC pauses than DCQCN/TIMELY/PCN",
               "PAUSE frames sent, reduction (%)", "56/63/38",
               "/".join(f"{red[s]:+.0f}" for s in others) + " (" + ", ".join(f"{s} {res[s]['pauses']}" for s in res)
               + ")", verdict(all(v > 0 for v in red.values()),
                              all(red[s] >= {"dcqcn": 56, "timely": 63, "pcn": 38}[s] for s in others)))
    claims.add("F1 recovers in 0.4 ms vs 2.5/1.8/1.4 ms (DCQCN/TIMELY/PCN)",
               "F1 back to >= 45 Gb/s (90 % of its fair share) for 100 us, from the burst start (ms); in"
               " brackets: to 90 % of its own pre-burst rate from the burst start / from the last burst flow's end",
               "0.4 vs 2.5/1.8/1.4",
               f"{i['rec_fair_us'] / 1e3:.2f} vs " + "/".join(f"{res[s]['rec_fair_us'] / 1e3:.2f}" for s in others)
               + " (" + ", ".join(f"{s} {res[s]['rec_start_us'] / 1e3:.2f}/{res[s]['rec_end_us'] / 1e3:.2f}"
                                  for s in res) + ")",
               verdict(all(not (res[s]["rec_fair_us"] < i["rec_fair_us"]) for s in others), i["rec_fair_us"] <= 600))
    v = {s: res[s]["victim_fct"] / i["victim_fct"] for s in others}
    claims.add("victim average FCT 2.3x/2.2x/1.7x lower", "F1 FCT other / ICC", "2.3/2.2/1.7",
               "/".join(f"{v[s]:.2f}" for s in others), verdict(all(x > 1.0 for x in v.values()),
                                                                 all(x >= 1.5 for x in v.values())))
    b = {s: res[s]["burst_p99"] / i["burst_p99"] for s in others}
    claims.add("burst p99 FCT 3.5x/3.4x/2.7x lower", "burst flows' p99 FCT other / ICC", "3.5/3.4/2.7",
               "/".join(f"{b[s]:.2f}" for s in others), verdict(all(x > 1.0 for x in b.values()),
                                                                 all(x >= 2.0 for x in b.values())))


# ----------------------------------------------------------------------------------------------------------
# Kind "icc_load"


def fig_icc_load(tables, out_dir, title):
    wls = list(tables)
    fig, axes = plt.subplots(len(wls), 2, figsize=(11, 3.6 * len(wls) + 0.5), squeeze=False)
    for wi, wl in enumerate(wls):
        for i, (s, by_load) in enumerate(tables[wl].items()):
            loads = sorted(by_load, key=rp.load_key)
            xs = [float(l) for l in loads]
            axes[wi][0].plot(xs, [by_load[l]["all_avg"] for l in loads], label=s, **rp.style(i))
            axes[wi][1].plot(xs, [by_load[l]["pauses"] for l in loads], label=s, **rp.style(i))
        axes[wi][0].set_title(f"{wl}: average FCT vs load")
        axes[wi][0].set_ylabel("avg FCT (\u00b5s)")
        axes[wi][1].set_title(f"{wl}: PFC PAUSE frames sent vs load")
        axes[wi][1].set_ylabel("PAUSE frames")
        for ax in axes[wi]:
            ax.set_xlabel("load (fraction of the S0\u2192S1 link)")
            ax.set_ylim(bottom=0)
    axes[0][0].legend(frameon=False)
    fig.suptitle(title)
    fig.tight_layout()
    return rp.save(fig, out_dir, "icc_load")


def claims_icc_load(name, tables, claims):
    for wl, tab in tables.items():
        if "icc" not in tab:
            continue
        others = [s for s in ("dcqcn", "timely", "pcn") if s in tab]
        loads = sorted(tab["icc"], key=rp.load_key)
        wins = [(s, l) for s in others for l in loads if tab["icc"][l]["all_avg"] < tab[s][l]["all_avg"]]
        n = sum(1 for s in others for l in loads if l in tab[s])
        claims.add("ICC's average FCT is lower at every load", f"avg FCT other / ICC at loads {'/'.join(loads)}",
                   "> 1 everywhere", "; ".join(f"{s} " + "/".join(f"{tab[s][l]['all_avg'] / tab['icc'][l]['all_avg']:.2f}"
                                                             for l in loads) for s in others),
                   verdict(len(wins) >= 0.75 * n, len(wins) == n), scenario=f"{name} {wl}")
        if "0.5" in loads:
            f = {s: tab[s]["0.5"]["all_avg"] / tab["icc"]["0.5"]["all_avg"] for s in others}
            claims.add("at 50 % load 2.45x/2.83x/1.84x better average FCT than DCQCN/TIMELY/PCN",
                       "avg FCT other / ICC at 50 %", "2.45/2.83/1.84", "/".join(f"{f[s]:.2f}" for s in others),
                       verdict(all(x > 1 for x in f.values()), all(x >= 1.5 for x in f.values())),
                       scenario=f"{name} {wl}")
            p = {s: reduction(tab["icc"]["0.5"]["pauses"], tab[s]["0.5"]["pauses"]) for s in others}
            claims.add("at 50 % load 47/56/34 % fewer PFC pauses than DCQCN/TIMELY/PCN",
                       "PAUSE frames sent, reduction at 50 % (%)", "47/56/34",
                       "/".join(f"{p[s]:+.0f}" for s in others) + " (" +
                       ", ".join(f"{s} {tab[s]['0.5']['pauses']}" for s in tab) + ")",
                       verdict(all(x > 0 for x in p.values()),
                               all(p[s] >= {"dcqcn": 47, "timely": 56, "pcn": 34}[s] for s in others)),
                       scenario=f"{name} {wl}")


# ----------------------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", choices=sorted(SPECS))
    ap.add_argument("-o", "--out", help="sweep directory (default runs/<paper>-<name>)")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--schemes", help="comma-separated (default: the paper's)")
    ap.add_argument("--loads", help="comma-separated loads (grids only)")
    ap.add_argument("--workloads", help="comma-separated workloads (grids only)")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for every run (rocesim sweep --set)")
    ap.add_argument("--no-run", action="store_true", help="only read existing results and redraw")
    ap.add_argument("--dpi", type=int, default=110, help="PNG resolution (docs/figures uses 80)")
    a = ap.parse_args(argv)
    plt.rcParams["savefig.dpi"] = a.dpi
    spec = SPECS[a.scenario]
    paper, short = a.scenario.split("/")
    out = a.out or os.path.join("runs", f"{paper}-{short}")
    schemes = a.schemes.split(",") if a.schemes else spec["schemes"]
    loads = a.loads.split(",") if a.loads else spec.get("loads")
    wls = a.workloads.split(",") if a.workloads else spec.get("workloads", [None])
    figdir = os.path.join(out, "figures")
    os.makedirs(out, exist_ok=True)
    dirs = {wl: (os.path.join(out, wl) if wl else out) for wl in wls}
    if not a.no_run:
        for wl, d in dirs.items():
            run_sweep(a.scenario, d, schemes, loads, wl, spec.get("workload_sets", {}).get(wl, []) + a.set, a.jobs)
    claims = Claims({"mercury": "Mercury", "tcd": "TCD", "icc": "ICC"}[paper], a.scenario)
    title = f"{a.scenario}" + (" " + " ".join(a.set) if a.set else "")
    kind = spec["kind"]
    if kind in ("victim", "incast", "icc_burst"):
        runs, _ = sweep_runs(dirs[wls[0]])
        runs = {s: runs[s] for s in schemes if s in runs}
        if kind == "victim":
            res = analyse_victim(runs, spec)
            p = fig_victim(runs, spec, figdir, title)
            print_victim(res)
            claims_victim(a.scenario, res, claims)
        elif kind == "incast":
            res = analyse_incast(runs, spec)
            p = fig_incast(runs, spec, figdir, title)
            print_incast(res)
            claims_incast(a.scenario, res, claims)
        else:
            res = analyse_icc_burst(runs, spec)
            p = fig_icc_burst(runs, spec, figdir, title)
            print_icc_burst(res)
            claims_icc_burst(a.scenario, res, claims)
        figs = [p]
    else:
        tables = {}
        for wl, d in dirs.items():
            if not rp.is_sweep_dir(d):
                print(f"warning: {d} has no results.csv; skipped")
                continue
            runs, _ = sweep_runs(d)
            tables[wl or "default"] = {s: {l: fct_row(r) for l, r in runs[s].items()} for s in schemes if s in runs}
        print_fct(tables)
        if kind == "fct":
            figs = [fig_fct(tables, figdir, title, "fct")]
            claims_fct(a.scenario, tables, claims)
        else:
            figs = [fig_icc_load(tables, figdir, title), fig_fct(tables, figdir, title, "fct")]
            claims_icc_load(a.scenario, tables, claims)
        with open(os.path.join(out, "fct_table.json"), "w") as f:
            json.dump(tables, f, indent=1)
    claims.write(out)
    print("\nfigures: " + " ".join(os.path.abspath(p) for p in figs if p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
