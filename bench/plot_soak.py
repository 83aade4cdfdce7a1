#!/usr/bin/python3
"""Plots resident memory vs finished flows of build/soak_flows runs (the CSV of its 4th argument).

Usage: bench/plot_soak.py OUT.png LABEL=series.csv [LABEL=series.csv ...]
Each CSV: flows,sim_ms,wall_s,vm_rss_bytes (the last row is taken after the result files were written).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for arg in sys.argv[2:]:
        label, path = arg.split("=", 1)
        with open(path) as f:
            rows = list(csv.DictReader(f))
        run = rows[:-1]  # samples taken during the run
        x = [int(r["flows"]) / 1e3 for r in run]
        y = [int(r["vm_rss_bytes"]) / 2**20 for r in run]
        (line,) = ax.plot(x, y, marker="o", markersize=3, label=label)
        end = int(rows[-1]["vm_rss_bytes"]) / 2**20
        ax.plot([x[-1]], [end], marker="x", color=line.get_color(), markersize=8)
    ax.set_xlabel("finished flows (thousands)")
    ax.set_ylabel("VmRSS (MiB)")
    ax.set_ylim(bottom=0)
    ax.set_title("soak_flows: 1 M fb_hadoop flows, 16-host leaf-spine, 50 % load\n(x: after writing the results)",
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)


if __name__ == "__main__":
    main()
