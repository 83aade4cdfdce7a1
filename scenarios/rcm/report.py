#!/usr/bin/env python3
"""Figures and numbers of the rcm scenarios (seed 001 Figs. 6-9), from two run directories (RCM, DCQCN).

  report.py burst   <rcm dir> <dcqcn dir> [-o fig6.png]  per-flow goodput at the last switch (rates.csv)
  report.py victim  <rcm dir> <dcqcn dir> [-o fig7.png]  per-flow goodput, victim = flow 4 (rates.csv)
  report.py hotspot <rcm dir> <dcqcn dir> [-o fig8.png]  background / hot throughput and latency (flows.csv)
  report.py fct     <rcm dir> <dcqcn dir> [-o fig9.png]  average FCT by size class (flows.csv)

Prints the numbers the paper's claims are about; draws the figure when -o is given (needs matplotlib).
"""
import argparse
import collections
import os
import sys

# The rocesim package of this checkout (python/rocesim): the readers of the result files.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import rocesim  # noqa: E402


def rates(run):
    """{flow id: [(t_us, gbps)]} from rates.csv."""
    out = collections.defaultdict(list)
    df = rocesim.Run(run).rates
    if df is None:
        sys.exit(f"{run}: no rates.csv (the scenario's monitors.flow_rates)")
    for kind, fid, t, g in zip(df["kind"], df["id"], df["time_us"].tolist(), df["gbps"].tolist()):
        if kind == "flow":
            out[int(fid)].append((t, g))
    return out


def mean_between(series, t0, t1):
    v = [g for t, g in series if t0 <= t < t1]
    return sum(v) / len(v) if v else 0.0


def flows(run):
    """The finished flows of flows.csv, as dicts of its columns."""
    df = rocesim.Run(run).flows
    return [r for r in df.to_dict("records") if r["finish_us"] == r["finish_us"] and r["finish_us"] != -1]


def plot_rates(runs, labels, out, title, t0, t1):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 3.5), sharey=True)
    for ax, run, lab in zip(axes, runs, labels):
        for fid, s in sorted(rates(run).items()):
            pts = [(t, g) for t, g in s if t0 <= t <= t1]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=f"flow {fid}")
        ax.set_title(f"{title}: {lab}")
        ax.set_xlabel("time (us)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("goodput (Gb/s)")
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def burst(a):
    labels = ["RCM", "DCQCN"]
    for run, lab in zip([a.rcm, a.dcqcn], labels):
        r = rates(run)
        b = mean_between(r[4], 160, 190)
        inc = [mean_between(r[i], 160, 190) for i in range(4)]
        done = [t for t, g in r[4] if g > 0]
        print(f"{lab}: burst mean {b:.1f} Gb/s (160-190 us), incast flows {', '.join(f'{x:.1f}' for x in inc)}"
              f" (sum {sum(inc):.1f}), burst last seen at {max(done) if done else 0:.0f} us")
    if a.o:
        plot_rates([a.rcm, a.dcqcn], labels, a.o, "incast + burst", 100, 260)


def victim(a):
    labels = ["RCM", "DCQCN"]
    for run, lab in zip([a.rcm, a.dcqcn], labels):
        r = rates(run)
        end = max(t for t, _ in r[4])
        v = mean_between(r[4], 200, end + 1)
        inc = [mean_between(r[i], 200, end + 1) for i in range(4)]
        print(f"{lab}: victim Sv {v:.1f} Gb/s, incast {', '.join(f'{x:.1f}' for x in inc)} (200 us to end)")
    if a.o:
        plot_rates([a.rcm, a.dcqcn], labels, a.o, "victim", 0, 1e9)


def by_class(run, ids=None):
    out = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for r in flows(run):
        if ids is not None and r["id"] not in ids:
            continue
        c = out[r["class"]]
        c[0] += 1
        c[1] += float(r["size_bytes"]) * 8 / (float(r["fct_us"]) * 1e3)  # Gb/s
        c[2] += float(r["fct_us"])
    return {k: (n, thr / n, lat / n) for k, (n, thr, lat) in out.items()}


def hotspot(a):
    res = {}
    ids = {r["id"] for r in flows(a.rcm)} & {r["id"] for r in flows(a.dcqcn)}
    for run, lab in zip([a.rcm, a.dcqcn], ["RCM", "DCQCN"]):
        res[lab] = by_class(run, ids)
        for k, (n, thr, lat) in sorted(res[lab].items()):
            print(f"{lab} {k}: {n} flows, mean throughput {thr:.2f} Gb/s, mean FCT {lat:.1f} us")
    for k in res["RCM"]:
        if k in res["DCQCN"]:
            d = 100 * (res["RCM"][k][1] / res["DCQCN"][k][1] - 1)
            print(f"{k}: RCM throughput {d:+.1f} % vs DCQCN")
    if a.o:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (x1, x2) = plt.subplots(1, 2, figsize=(9, 3.5))
        ks = sorted(res["RCM"])
        for i, lab in enumerate(["DCQCN", "RCM"]):
            x1.bar([j + 0.4 * i for j in range(len(ks))], [res[lab][k][1] for k in ks], 0.4, label=lab)
            x2.bar([j + 0.4 * i for j in range(len(ks))], [res[lab][k][2] for k in ks], 0.4, label=lab)
        for ax, yl in ((x1, "mean throughput (Gb/s)"), (x2, "mean FCT (us)")):
            ax.set_xticks([j + 0.2 for j in range(len(ks))])
            ax.set_xticklabels(ks)
            ax.set_ylabel(yl)
            ax.legend()
        fig.tight_layout()
        fig.savefig(a.o, dpi=120)


SIZE_CLASSES = [("<1MB", 0, 1e6), ("1-10MB", 1e6, 1e7), (">10MB", 1e7, 1e30), ("all", 0, 1e30)]


def fct_classes(run, ids=None):
    out = {}
    fl = [r for r in flows(run) if ids is None or r["id"] in ids]
    for name, lo, hi in SIZE_CLASSES:
        v = [float(r["fct_us"]) for r in fl if lo <= float(r["size_bytes"]) < hi]
        out[name] = (len(v), sum(v) / len(v) if v else 0.0)
    return out


def fct(a):
    # The same flows in both runs (same seed and workload): those that finished in both.
    ids = {r["id"] for r in flows(a.rcm)} & {r["id"] for r in flows(a.dcqcn)}
    res = {lab: fct_classes(run, ids) for run, lab in zip([a.rcm, a.dcqcn], ["RCM", "DCQCN"])}
    for name, _, _ in SIZE_CLASSES:
        (n, r), (_, d) = res["RCM"][name], res["DCQCN"][name]
        gain = 100 * (1 - r / d) if d else 0
        print(f"{name:>7}: {n:5d} flows  RCM {r:9.1f} us  DCQCN {d:9.1f} us  RCM better by {gain:+.1f} %")
    if a.o:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 3.5))
        names = [s[0] for s in SIZE_CLASSES]
        for i, lab in enumerate(["DCQCN", "RCM"]):
            ax.bar([j + 0.4 * i for j in range(len(names))], [res[lab][k][1] for k in names], 0.4, label=lab)
        ax.set_xticks([j + 0.2 for j in range(len(names))])
        ax.set_xticklabels(names)
        ax.set_yscale("log")
        ax.set_ylabel("average FCT (us)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.o, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["burst", "victim", "hotspot", "fct"])
    p.add_argument("rcm")
    p.add_argument("dcqcn")
    p.add_argument("-o", help="figure file (png)")
    a = p.parse_args()
    {"burst": burst, "victim": victim, "hotspot": hotspot, "fct": fct}[a.what](a)


if __name__ == "__main__":
    sys.exit(main())
