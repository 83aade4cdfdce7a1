#!/usr/bin/env python3
"""icc/burst figures of merit from run directories (one per scheme), beside the seed's claims.

Usage: python3 scenarios/icc/report_burst.py RUN_DIR [RUN_DIR ...]   (run dirs of scenarios/icc/burst.toml)

pauses      PAUSE frames sent anywhere (pfc.csv) and those received by H1 on the S0 -> H1 link (Fig. 4)
F1 recovery from the burst (500 us) until F1's goodput is back to >= 90 % of its mean rate over 300-500 us
            and stays there for 5 bins (100 us at 20 us bins) (Fig. 5)
victim      F1's FCT; burst: avg and p99 FCT of the 120 burst flows (classes burst and hb) (Figs. 9-10)
"""
import csv
import json
import os
import sys

BURST_US = 500.0


def pct(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    k = min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))
    return v[k]


def analyse(d):
    scheme = json.load(open(os.path.join(d, "summary.json"))).get("scheme", os.path.basename(d))
    pauses = pauses_h1 = 0
    with open(os.path.join(d, "pfc.csv")) as f:
        for r in csv.DictReader(f):
            if r["event"] != "pause":
                continue
            pauses += 1
            if r["node"] == "h1" and r["peer"] == "s0":
                pauses_h1 += 1
    bins = []
    with open(os.path.join(d, "rates.csv")) as f:
        for r in csv.DictReader(f):
            if r["kind"] == "flow" and r["id"] == "1":
                bins.append((float(r["time_us"]), float(r["gbps"])))
    width = bins[1][0] - bins[0][0] if len(bins) > 1 else 20.0
    pre = [g for t, g in bins if 300 <= t < BURST_US]
    pre_rate = sum(pre) / len(pre) if pre else 0.0
    rec = float("nan")
    post = [(t, g) for t, g in bins if t >= BURST_US]
    for i in range(len(post)):
        win = post[i:i + 5]
        if len(win) == 5 and all(g >= 0.9 * pre_rate for _, g in win):
            rec = post[i][0] - BURST_US
            break
    victim = None
    burst = []
    with open(os.path.join(d, "flows.csv")) as f:
        for r in csv.DictReader(f):
            if r["id"] == "1":
                victim = float(r["fct_us"])
            if r["class"] in ("burst", "hb"):
                burst.append(float(r["fct_us"]))
    return {
        "scheme": scheme, "pauses": pauses, "pauses_s0_h1": pauses_h1, "f1_pre_gbps": pre_rate,
        "f1_recovery_us": rec, "victim_fct_us": victim, "burst_avg_us": sum(burst) / max(1, len(burst)),
        "burst_p99_us": pct(burst, 0.99), "bursts": len(burst), "bin_us": width,
    }


def main():
    rows = [analyse(d) for d in sys.argv[1:]]
    print(f"{'scheme':8} {'pauses':>7} {'S0->H1':>7} {'F1 pre':>7} {'F1 rec us':>9} {'victim us':>10} "
          f"{'burst avg':>10} {'burst p99':>10}")
    for r in rows:
        print(f"{r['scheme']:8} {r['pauses']:7d} {r['pauses_s0_h1']:7d} {r['f1_pre_gbps']:7.1f} "
              f"{r['f1_recovery_us']:9.0f} {r['victim_fct_us']:10.0f} {r['burst_avg_us']:10.1f} "
              f"{r['burst_p99_us']:10.1f}")
    icc = next((r for r in rows if r["scheme"] == "icc"), None)
    if icc:
        print("\nICC vs others (seed: pauses -56/-63/-38 % vs DCQCN/TIMELY/PCN; F1 0.4 ms vs 2.5/1.8/1.4 ms;"
              " victim avg 2.3x/2.2x/1.7x; burst p99 3.5x/3.4x/2.7x)")
        for r in rows:
            if r is icc:
                continue
            red = 100.0 * (1 - icc["pauses"] / r["pauses"]) if r["pauses"] else float("nan")
            vr = r['victim_fct_us'] / icc['victim_fct_us']
            print(f"  vs {r['scheme']:7} pauses {red:+6.1f} % fewer   victim {vr:.2f}x"
                  f"   burst avg {r['burst_avg_us'] / icc['burst_avg_us']:.2f}x"
                  f"   burst p99 {r['burst_p99_us'] / icc['burst_p99_us']:.2f}x")


if __name__ == "__main__":
    main()
