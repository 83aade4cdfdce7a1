#!/usr/bin/env python3
"""Draws docs/figures/scaling.png from bench_scaling's CSV: M packet-hops per CPU second (per wall second
where a file has no CPU figure) and peak memory against the number of hosts, for one or more builds (e.g.
before and after a change). One thread's rows only; a case run in several rounds is drawn at its median.

Usage: plot_scaling.py OUT.png LABEL=FILE.csv [LABEL=FILE.csv ...]
"""
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rate(r):
    return float(r.get("mhops_per_cpu_s") or r["mhops_per_s"])


def read(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("threads", "1") == "1"]
    # Several rounds of one case (bench_scaling --rounds): its median speed and memory.
    by_case = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    rows = []
    for runs in by_case.values():
        runs.sort(key=rate)
        mid = dict(runs[len(runs) // 2])
        mid["peak_mib"] = str(statistics.median(float(r["peak_mib"]) for r in runs))
        rows.append(mid)
    # The k-ary fat-trees form the curve; the 320-host fat-tree (5 ms of arrivals) is a point of its own.
    tree = sorted((r for r in rows if r["case"].startswith("k")), key=lambda r: int(r["hosts"]))
    other = [r for r in rows if not r["case"].startswith("k")]
    return tree, other


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.exit(__doc__)
    fig, (speed, memory) = plt.subplots(1, 2, figsize=(10, 4))
    for spec in argv[2:]:
        label, path = spec.split("=", 1)
        tree, other = read(path)
        line = speed.plot([int(r["hosts"]) for r in tree], [rate(r) for r in tree], "o-",
                          label=f"{label}: k-ary fat-trees")[0]
        memory.plot([int(r["hosts"]) for r in tree], [float(r["peak_mib"]) for r in tree], "o-",
                    color=line.get_color(), label=f"{label}: k-ary fat-trees")
        for r in other:
            speed.plot([int(r["hosts"])], [rate(r)], "s", color=line.get_color(),
                       label=f"{label}: 320-host fat.txt, 5 ms")
            memory.plot([int(r["hosts"])], [float(r["peak_mib"])], "s", color=line.get_color())
    speed.set(xscale="log", xlabel="hosts", ylabel="M packet-hops per CPU second", ylim=(0, None),
              title="Speed (one core, DCQCN, WebSearch 30 %)")
    memory.set(xscale="log", yscale="log", xlabel="hosts", ylabel="peak resident memory (MiB)",
               title="Memory")
    for ax in (speed, memory):
        ax.grid(True, which="both", alpha=0.3)
    speed.legend(fontsize=8)
    memory.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[1], dpi=110)
    print(f"written: {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
