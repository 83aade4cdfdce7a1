#!/usr/bin/env python3
"""Figures and figures of merit of the LSCC scenarios (seed 004), from run or sweep directories.

Usage:
  /usr/bin/python3 scenarios/lscc/figures.py RUN_DIR [RUN_DIR ...]   micro-benchmarks (stability, convergence,
        fairness, motivation): per-flow rates and queues over time -> RUN_DIR/lscc_rates.png, and a table:
        per-flow mean rate over the last 20 % of the run, Jain's fairness index, first 5 ms window from which all
        flows stay within 10 % of their fair share (stability: N flows sharing 40 Gb/s), remote queue mean/p95 then
        (p95 by nearest rank, as summary.json's percentiles).
  /usr/bin/python3 scenarios/lscc/figures.py SWEEP_DIR                lscc/load sweep: average and p95 FCT,
        average PFC pause time per node (egress paused time summed per node, over the nodes that paused), PAUSEs sent across the long-haul link, egress buffer CDF p50/p95
        -> SWEEP_DIR/lscc_load.png, lscc_buffer_cdf.png and a table.
"""
import os
import sys

# The rocesim package of this checkout (python/rocesim): the readers of the result files, nearest_rank.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import rocesim  # noqa: E402


def flow_series(run):
    """{flow id: [(t_us, gbps)]} from rates.csv."""
    s = {}
    df = run.rates
    if df is not None:
        for kind, fid, t, g in zip(df["kind"], df["id"], df["time_us"].tolist(), df["gbps"].tolist()):
            if kind == "flow":
                s.setdefault(int(fid), []).append((t, g))
    return s


def queue_series(run):
    """{"NODE->PEER": [(t_us, bytes)]} from queues.csv."""
    s = {}
    df = run.queues
    if df is not None:
        for node, peer, t, q in zip(df["node"], df["peer"], df["time_us"].tolist(), df["queue_bytes"].tolist()):
            s.setdefault(node + "->" + peer, []).append((t, float(q)))
    return s


def micro(dirs):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
    print(f"{'run':40s} {'scheme':10s} {'flows Gb/s (last 20 %)':34s} {'Jain':>5s} {'t_fair ms':>9s} "
          f"{'Q mean MB':>9s} {'Q p95 MB':>8s}")
    for d in dirs:
        run = rocesim.Run(d)
        summ = run.summary
        rates = flow_series(run)
        queues = queue_series(run)
        end = summ.get("simulated_time_ms", 0) * 1000
        tail0 = 0.8 * end
        means = []
        for fid in sorted(rates):
            v = [g for t, g in rates[fid] if t >= tail0]
            means.append(sum(v) / len(v) if v else 0.0)
        jain = (sum(means) ** 2 / (len(means) * sum(m * m for m in means))) if means and any(means) else float("nan")
        # First 5 ms window from which every flow stays within 10 % of its share of the 40 Gb/s receiver link
        # (stability: all flows live from t = 0), from the rate bins averaged per window.
        t_fair = float("nan")
        if rates:
            n = len(rates)
            fair = 40.0 * 1000 / 1048 / n  # goodput share of the 40 Gb/s receiver link
            win = {}
            for fid, s in rates.items():
                for t, g in s:
                    win.setdefault(int(t // 5000), {}).setdefault(fid, []).append(g)
            keys = sorted(win)
            ok = [all(abs(sum(win[k].get(f, [0])) / len(win[k].get(f, [0])) - fair) <= 0.1 * fair for f in rates)
                  for k in keys]
            for i in range(len(keys)):
                if all(ok[i:]):
                    t_fair = keys[i] * 5.0
                    break
        qkey = next((k for k in queues if k.startswith("egress_b->")), None)
        qv = [q for t, q in queues.get(qkey, []) if t >= tail0] if qkey else []
        qmean = sum(qv) / len(qv) / 1e6 if qv else float("nan")
        print(f"{os.path.basename(os.path.normpath(d)):40s} {summ.get('scheme', '?'):10s} "
              f"{' '.join(f'{m:5.1f}' for m in means):34s} {jain:5.3f} {t_fair:9.1f} {qmean:9.2f} "
              f"{rocesim.nearest_rank(qv, 0.95) / 1e6:8.2f}")
        if plt:
            fig, ax = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
            for fid in sorted(rates):
                ax[0].plot([t / 1000 for t, _ in rates[fid]], [g for _, g in rates[fid]], label=f"flow {fid}")
            ax[0].set_ylabel("rate (Gb/s)")
            ax[0].legend(fontsize=7)
            for k, v in queues.items():
                ax[1].plot([t / 1000 for t, _ in v], [q / 1e6 for _, q in v], label=k)
            ax[1].set_ylabel("queue (MB)")
            ax[1].set_xlabel("time (ms)")
            ax[1].legend(fontsize=7)
            ax[0].set_title(f"{summ.get('scenario', '')} / {summ.get('scheme', '')}")
            fig.tight_layout()
            fig.savefig(os.path.join(d, "lscc_rates.png"), dpi=110)
            plt.close(fig)


def load_sweep(d):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
    rows = []
    cdfs = {}
    for run in rocesim.Sweep(d).runs.values():  # the complete runs
        s = run.summary
        load = None
        try:
            load = run.scenario["traffic"][0]["load"]
        except Exception:
            pass
        fct = s["fct"]["fct_us"] if "fct_us" in s.get("fct", {}) else s["fct"].get("all", {})
        ports = s["pfc"]["ports"]
        nodes = {p["node_name"] for p in ports}
        per_node = {}
        for p in ports:
            per_node[p["node_name"]] = per_node.get(p["node_name"], 0.0) + p["paused_time_us"]
        long_pauses = sum(p["pauses_sent"] for p in ports
                          if {p["node_name"], p["peer_name"]} == {"egress_a", "egress_b"})
        buf = {}
        if run.buffer is not None:
            for sw, b, c in zip(run.buffer["switch"], run.buffer["buffer_bytes"].tolist(), run.buffer["cdf"].tolist()):
                buf.setdefault(sw, []).append((float(b), c))
        def q(sw, p):
            v = buf.get(sw, [])
            return rocesim.cdf_quantile([b for b, _ in v], [c for _, c in v], p) / 1e6
        sw = "egress_b"
        rows.append(dict(scheme=s["scheme"], load=load, avg=fct.get("avg", float("nan")),
                         p95=fct.get("p95", float("nan")), paused_node=sum(per_node.values()) / max(1, len(nodes)),
                         long_pauses=long_pauses, b50=q(sw, 0.5), b95=q(sw, 0.95), a95=q("egress_a", 0.95),
                         unfinished=s["flows"]["unfinished"], wall=s["performance"]["wall_seconds"],
                         sim_ms=s["simulated_time_ms"]))
        cdfs[(s["scheme"], load)] = buf.get(sw, [])
    rows.sort(key=lambda r: (r["load"] or 0, r["scheme"]))
    print(f"{'load':>5s} {'scheme':10s} {'avg FCT us':>11s} {'p95 FCT us':>11s} {'pause us/node':>13s} "
          f"{'LH PAUSEs':>9s} {'egB p50 MB':>10s} {'egB p95 MB':>10s} {'egA p95 MB':>10s} {'unfin':>5s} "
          f"{'wall s/sim s':>12s}")
    for r in rows:
        print(f"{r['load'] or 0:5.2f} {r['scheme']:10s} {r['avg']:11.0f} {r['p95']:11.0f} {r['paused_node']:13.0f} "
              f"{r['long_pauses']:9d} {r['b50']:10.2f} {r['b95']:10.2f} {r['a95']:10.2f} {r['unfinished']:5d} "
              f"{r['wall'] / max(1e-9, r['sim_ms'] / 1000):12.0f}")
    if plt and rows:
        loads = sorted({r["load"] for r in rows})
        schemes = sorted({r["scheme"] for r in rows})
        fig, ax = plt.subplots(1, 3, figsize=(13, 4))
        w = 0.8 / max(1, len(schemes))
        for i, sc in enumerate(schemes):
            for j, key in enumerate(["avg", "p95", "paused_node"]):
                xs = [k + i * w for k in range(len(loads))]
                ys = [next((r[key] for r in rows if r["scheme"] == sc and r["load"] == l), 0) for l in loads]
                ax[j].bar(xs, ys, w, label=sc)
        for j, t in enumerate(["average FCT (us)", "p95 FCT (us)", "PFC pause time per node (us)"]):
            ax[j].set_title(t)
            ax[j].set_xticks([k + 0.4 - w / 2 for k in range(len(loads))])
            ax[j].set_xticklabels([f"{l:.0%}" for l in loads])
        ax[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(d, "lscc_load.png"), dpi=110)
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(6, 4))
        for (sc, l), v in sorted(cdfs.items(), key=lambda x: (x[0][1] or 0, x[0][0])):
            if v and l == loads[len(loads) // 2]:
                ax.plot([b / 1e6 for b, _ in v], [c for _, c in v], label=sc)
        ax.set_xlabel("egress_b buffer (MB)")
        ax.set_ylabel("CDF")
        ax.set_title(f"egress switch buffer, load {loads[len(loads) // 2]}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(d, "lscc_buffer_cdf.png"), dpi=110)
        plt.close(fig)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    if len(sys.argv) == 2 and os.path.exists(os.path.join(sys.argv[1], "results.csv")):
        load_sweep(sys.argv[1])
    else:
        micro(sys.argv[1:])


if __name__ == "__main__":
    main()
