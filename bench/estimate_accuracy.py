#!/usr/bin/env python3
"""How close `rocesim validate`'s estimate comes to the run: for each bench_scaling case (DCQCN, WebSearch
30 %, run to completion; the k-ary fat-trees with 0.5 ms of arrivals, fat320 with 5 ms) and bench_fattree's
time-limited 10 ms case, runs `rocesim validate` (its probe included) and then `rocesim run`, one after the
other, and prints predicted against actual packet-hops, events, wall seconds and peak memory
(docs/performance.md, "Estimates of events and wall time", "Memory of large fabrics").

Usage: bench/estimate_accuracy.py [--rocesim build/rocesim] [--cases k16,k24,fat320,fattree10ms]
       [--probe-s 2] [--threads 1] [--csv out.csv]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

CASES = {
    'k8': ('kind = "fat_tree"\nk = 8\n', 500, True),
    'k16': ('kind = "fat_tree"\nk = 16\n', 500, True),
    'k24': ('kind = "fat_tree"\nk = 24\n', 500, True),
    'k32': ('kind = "fat_tree"\nk = 32\n', 500, True),
    'k64': ('kind = "fat_tree"\nk = 64\n', 500, True),
    'fat320': ('kind = "fat_tree_3tier"\n', 5000, True),
    # bench_fattree: arrivals until the end of a 10 ms run, which stops with flows unfinished.
    'fattree10ms': ('kind = "fat_tree_3tier"\n', None, False),
}


def scenario(name, threads):
    topo, arrivals_us, to_completion = CASES[name]
    duration = 1000 if to_completion else 10
    text = (f'name = "estimate-{name}"\nseed = 1\nduration_ms = {duration}\nthreads = {threads}\n'
            f'stop_when_done = {"true" if to_completion else "false"}\n'
            f'[topology]\n{topo}[cc]\nscheme = "dcqcn"\n'
            '[[traffic]]\nworkload = "websearch"\nload = 0.3\n')
    if arrivals_us:
        text += f'stop_us = {arrivals_us}\n'
    return text


UNIT = {'': 1, ' M': 1e6, ' G': 1e9}
BYTES = {'KB': 1e3, 'MB': 1e6, 'GB': 1e9}


def seconds(text):
    """format_duration's text ("9.4 s", "3 m 05 s", "2 h 07 m") in seconds."""
    m = re.fullmatch(r'([0-9.]+) s', text)
    if m:
        return float(m.group(1))
    m = re.fullmatch(r'(\d+) m (\d+) s', text)
    if m:
        return 60 * int(m.group(1)) + int(m.group(2))
    m = re.fullmatch(r'(\d+) h (\d+) m', text)
    if m:
        return 3600 * int(m.group(1)) + 60 * int(m.group(2))
    return float('nan')


def estimate(rocesim, path, probe_s):
    out = subprocess.run([rocesim, 'validate', path, '--probe-s', str(probe_s)], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r'# estimate: about ([0-9.]+)( [MG])? packet-hops \(data and ACKs\) and ([0-9.]+)( [MG])? '
                  r'events', out)
    hops = float(m.group(1)) * UNIT[m.group(2) or '']
    events = float(m.group(3)) * UNIT[m.group(4) or '']
    w = re.search(r'# wall time: (?:at least )?about (.+?) to run, plus (.+?) to set up', out)
    whole = re.search(r'# probe: the whole run took (.+?) here', out)
    wall = seconds(w.group(1)) if w else seconds(whole.group(1)) if whole else float('nan')
    mem = re.search(r'# memory: about ([0-9.]+) (KB|MB|GB) at the peak', out)
    return hops, events, wall, float(mem.group(1)) * BYTES[mem.group(2)]


def run(rocesim, path, out_dir):
    subprocess.run([rocesim, 'run', path, '-q', '-o', out_dir, '--force'], check=True)
    with open(os.path.join(out_dir, 'summary.json')) as f:
        j = json.load(f)
    p = j['performance']
    return p['packet_hops'], p['events'], p['wall_seconds'], p['peak_memory_bytes']


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--rocesim', default=os.path.join(os.path.dirname(__file__), '..', 'build', 'rocesim'))
    ap.add_argument('--cases', default='k16,k24,fat320,fattree10ms')
    ap.add_argument('--probe-s', type=float, default=2)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--csv')
    a = ap.parse_args()
    rows = []
    print(f'{"case":>12} {"hops pred":>10} {"hops run":>10} {"ratio":>6} {"events pred":>12} {"events run":>11} '
          f'{"ratio":>6} {"wall pred":>9} {"wall run":>9} {"ratio":>6} {"mem pred":>9} {"mem run":>9} {"ratio":>6}')
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.cases.split(','):
            path = os.path.join(tmp, name + '.toml')
            with open(path, 'w') as f:
                f.write(scenario(name, a.threads))
            ph, pe, pw, pm = estimate(a.rocesim, path, a.probe_s)
            rh, re_, rw, rm = run(a.rocesim, path, os.path.join(tmp, name + '_out'))
            row = (name, ph, rh, ph / rh, pe, re_, pe / re_, pw, rw, pw / rw, pm, rm, pm / rm)
            rows.append(row)
            print(f'{name:>12} {ph / 1e6:>9.1f}M {rh / 1e6:>9.1f}M {ph / rh:>6.2f} {pe / 1e6:>11.1f}M '
                  f'{re_ / 1e6:>10.1f}M {pe / re_:>6.2f} {pw:>8.1f}s {rw:>8.1f}s {pw / rw:>6.2f} '
                  f'{pm / 1e6:>7.0f}MB {rm / 1e6:>7.0f}MB {pm / rm:>6.2f}', flush=True)
    if a.csv:
        with open(a.csv, 'w') as f:
            f.write('case,hops_predicted,hops_run,hops_ratio,events_predicted,events_run,events_ratio,'
                    'wall_predicted_s,wall_run_s,wall_ratio,memory_predicted_bytes,memory_run_bytes,memory_ratio\n')
            for r in rows:
                f.write(','.join(str(x) for x in r) + '\n')
    worst = max(max(r[3], 1 / r[3], r[6], 1 / r[6], r[9], 1 / r[9], r[12], 1 / r[12]) for r in rows)
    print(f'largest ratio either way: {worst:.2f}x')
    return 0 if worst <= 2 else 1


if __name__ == '__main__':
    sys.exit(main())
