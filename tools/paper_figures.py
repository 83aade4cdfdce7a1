#!/usr/bin/env python3
"""One command per seed-paper experiment (docs/scenarios.md): run its sweep and draw the paper's figure.

    /usr/bin/python3 tools/paper_figures.py SCENARIO [-o DIR] [-j N] [--schemes a,b] [--loads 0.3,0.5]
                                            [--workloads hadoop,websearch] [--set KEY=VALUE ...] [--no-run]

SCENARIO is one of the names in SPECS below (mercury/victim, mercury/victim_spread, mercury/incast_burst,
mercury/small_hadoop, mercury/fattree, tcd/victim_40g, tcd/victim_100g, tcd/cbfc, icc/burst, icc/load).
The sweep goes to DIR (default runs/<paper>-<name>; one sub-directory per workload for the
workload x load grids) and is resumed, not redone, when it is already there (`rocesim sweep` skips
complete runs). Figures go to DIR/figures/*.png (and, for the FCT grids, the numbers drawn to
DIR/fct_table.json). --no-run only redraws.

Claims are not measured here: reproduce/<paper>.toml holds each claim and its rule, and `rocesim reproduce`
evaluates them. This script prints the claims of the scenario with the values and verdicts that
`rocesim reproduce` last stored in docs/reproduction/.

Needs matplotlib and pandas (Debian python3-matplotlib, python3-pandas; use /usr/bin/python3). The simulator is
build/rocesim (or $ROCESIM).
"""

import argparse
import json
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


def queue_series(run, node, peer):
    q = run.data.queues
    if q is None:
        return np.array([]), np.array([])
    m = (q["node"] == node) & (q["peer"] == peer)
    return q["time_us"][m].to_numpy(dtype=float), q["queue_bytes"][m].to_numpy(dtype=float)


def pause_events(run, node=None, peer=None):
    """Start times (us) of the paused intervals of node's port to peer."""
    p = run.data.pfc
    if p is None:
        return np.array([])
    m = p["event"] == "pause"
    if node:
        m &= p["node"] == node
    if peer:
        m &= p["peer"] == peer
    return p["time_us"][m].to_numpy(dtype=float)


def summary_fct(run, part, stat):
    """summary.json fct: part 'all' | 'short' | 'long'; stat avg | p99."""
    f = run.summary.get("fct", {})
    d = f if part == "all" else f.get(part, {})
    return d.get("fct_us", {}).get(stat, float("nan"))


# ----------------------------------------------------------------------------------------------------------
# Kind "victim": mercury/victim, mercury/victim_spread, tcd/victim_*, tcd/cbfc


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


# ----------------------------------------------------------------------------------------------------------
# Kind "incast": mercury/incast_burst


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
    q = run.data.queues
    r["maxq_kb"] = float(q["queue_bytes"].max()) / 1e3 if q is not None and len(q) else float("nan")
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


# ----------------------------------------------------------------------------------------------------------
# Kind "icc_burst"


def icc_burst_fcts(runs):
    """{scheme: victim F1's FCT, the burst flows' average and p99 FCT (us)}: the bars of the figure."""
    res = {}
    for s, by_load in runs.items():
        run = next(iter(by_load.values()))
        fl = run.flows()
        burst = np.array([fl["fct_us"][i] for i, c in enumerate(fl["class"]) if c in ("burst", "hb")])
        victim = fl["fct_us"][fl["id"] == 1].tolist()
        res[s] = dict(victim_fct=victim[0] if victim else float("nan"),
                      burst_avg=float(np.mean(burst)) if len(burst) else float("nan"),
                      burst_p99=rp.nearest_rank(burst, 0.99))
    return res


def fig_icc_burst(runs, spec, out_dir, title):
    b0 = spec["burst_us"][0]
    fig, axes = plt.subplots(2, 2, figsize=(13, 8))
    schemes = list(runs)
    res = icc_burst_fcts(runs)
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


# ----------------------------------------------------------------------------------------------------------


def print_claims(scenario):
    """The claims that reproduce/<paper>.toml measures on this scenario, with what `rocesim reproduce` last
    stored for them in docs/reproduction/ (this script measures no claim itself)."""
    import reproduce

    paper = scenario.split("/")[0]
    man = next((m for m in reproduce.load_manifests(os.path.join(ROOT, "reproduce")) if m.key == paper), None)
    sweeps = {sw["name"] for sw in man.sweeps if sw["scenario"] == scenario + ".toml"} if man else set()
    claims = [c for c in man.claims if sweeps & set(c["sweeps"])] if man else []
    if not claims:
        return
    stored = {}
    for scale in reproduce.SCALES:
        p = os.path.join(ROOT, "docs", "reproduction", f"{paper}.{scale}.json")
        stored[scale] = json.load(open(p))["claims"] if os.path.exists(p) else {}
    print(f"\nClaims of reproduce/{paper}.toml on {scenario}, as `rocesim reproduce {paper}` last measured them "
          f"(docs/reproduction/; its runs, not this sweep's):")
    for c in claims:
        print(f"- {c['id']}: {c['claim']}\n    paper: {c['paper']}")
        for scale in reproduce.SCALES:
            e = stored[scale].get(c["id"])
            if e:
                print(f"    ours ({scale}, {e.get('commit', '?')}): [{e['verdict']}] {e['shown'] or e['note']}")


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
    title = f"{a.scenario}" + (" " + " ".join(a.set) if a.set else "")
    kind = spec["kind"]
    if kind in ("victim", "incast", "icc_burst"):
        runs, _ = sweep_runs(dirs[wls[0]])
        runs = {s: runs[s] for s in schemes if s in runs}
        draw = {"victim": fig_victim, "incast": fig_incast, "icc_burst": fig_icc_burst}[kind]
        figs = [draw(runs, spec, figdir, title)]
    else:
        tables = {}
        for wl, d in dirs.items():
            if not rp.is_sweep_dir(d):
                print(f"warning: {d} has no results.csv; skipped")
                continue
            runs, _ = sweep_runs(d)
            tables[wl or "default"] = {s: {l: fct_row(r) for l, r in runs[s].items()} for s in schemes if s in runs}
        figs = [fig_fct(tables, figdir, title, "fct")]
        if kind == "icc_load":
            figs.insert(0, fig_icc_load(tables, figdir, title))
        with open(os.path.join(out, "fct_table.json"), "w") as f:
            json.dump(tables, f, indent=1)
    print_claims(a.scenario)
    print("\nfigures: " + " ".join(os.path.abspath(p) for p in figs if p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
