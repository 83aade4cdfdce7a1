#!/usr/bin/env python3
"""Tables of scenarios/ai/README.md from sweep directories (rocesim sweep ... -o DIR).

  report.py jobs DIR [DIR ...]          per run: scheme, the tables switched off, each job's mean and p99
                                        iteration time, bus bandwidth and exposed communication time, PFC
                                        pauses and paused time, and the mean / p99 FCT slowdown of every
                                        class that is not a job
  report.py victim WITH ALONE --class C per scheme, class C's mean and p99 slowdown in the WITH runs (job on)
                                        beside the ALONE runs (job switched off), and their ratio
  report.py pair BOTH ALONE_A ALONE_B   per scheme, each job's mean iteration time beside the other job and
                                        alone, and the victim slow-down (their ratio)
  report.py iterations DIR --at-us T    per run and job: the mean time of the iterations that finished before
                                        T, of the one running at T, and of those that started after it
                                        (collectives.csv), with the drops and retransmissions of the run
"""
import argparse
import os
import sys

# The rocesim package of this checkout (python/rocesim): the readers of the result files.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import rocesim  # noqa: E402


def runs(sweep):
    """(grid dict, summary) of every complete run of a sweep directory."""
    out = []
    for name in sorted(os.listdir(sweep)):
        if not os.path.isfile(os.path.join(sweep, name, "summary.json")):
            continue
        s = rocesim.Run(os.path.join(sweep, name)).summary
        grid = dict(kv.split("=", 1) for kv in name.split(",") if "=" in kv)
        grid.setdefault("scheme", s["scheme"])
        out.append((grid, s))
    if not out:
        sys.exit(f"{sweep}: no complete runs (summary.json) in it")
    return out


def job_means(s):
    return {j["job"]: j for j in s.get("jobs", []) if "iteration_us" in j}


def cls(s, name):
    c = s["fct"].get("classes", {}).get(name)
    return c if c and c["count"] > 0 else None


def cmd_jobs(args):
    print("| scheme | off | job: mean / p99 iteration (us), busbw (Gb/s), exposed communication (us) | PFC pauses | "
          "paused (us) | classes: slowdown avg / p99 |")
    print("|---|---|---|---|---|---|")
    for d in args.dirs:
        for grid, s in runs(d):
            off = [k.replace("_", "").replace(".enabled", "") for k, v in grid.items() if v == "false"]
            jobs = job_means(s)
            # summary.json's jobs: iteration_us (mean, p99), busbw_gbps (nccl-tests' bus bandwidth) and
            # exposed_comm_us (communication not overlapped by compute), as rocesim computes them.
            jt = "; ".join(
                f"{n} {j['iteration_us']['mean']:.0f} / {j['iteration_us'].get('p99', float('nan')):.0f}, "
                f"{j.get('busbw_gbps', 0):.1f}, {j.get('exposed_comm_us', float('nan')):.0f}"
                for n, j in jobs.items())
            ct = "; ".join(
                f"{n} {c['slowdown']['avg']:.2f} / {c['slowdown']['p99']:.2f}"
                for n, c in s["fct"].get("classes", {}).items() if n not in jobs and c["count"] > 0)
            print(f"| {grid['scheme']} | {','.join(off) or '-'} | {jt or '-'} | {s['pfc']['pauses_sent']} | "
                  f"{s['pfc']['paused_time_us']:.0f} | {ct or '-'} |")


def by_scheme(d, keep=lambda g: True):
    return {g["scheme"]: s for g, s in runs(d) if keep(g)}


def cmd_victim(args):
    on = lambda g: all(v != "false" for v in g.values())
    off = lambda g: any(v == "false" for v in g.values())
    with_job = by_scheme(args.with_dir, on)
    alone = by_scheme(args.alone_dir, off if args.alone_dir == args.with_dir else (lambda g: True))
    print(f"| scheme | job mean iteration (us) | PFC pauses | {args.cls} slowdown avg / p99 with the job | "
          f"without | victim slow-down (avg, p99) |")
    print("|---|---|---|---|---|---|")
    for scheme, s in with_job.items():
        a = alone.get(scheme)
        c, ca = cls(s, args.cls), cls(a, args.cls) if a else None
        jobs = job_means(s)
        jt = "; ".join(f"{j['iteration_us']['mean']:.0f}" for j in jobs.values())
        if not c or not ca:
            continue
        print(f"| {scheme} | {jt} | {s['pfc']['pauses_sent']} | {c['slowdown']['avg']:.2f} / "
              f"{c['slowdown']['p99']:.2f} | {ca['slowdown']['avg']:.2f} / {ca['slowdown']['p99']:.2f} | "
              f"{c['slowdown']['avg'] / ca['slowdown']['avg']:.2f}x, "
              f"{c['slowdown']['p99'] / ca['slowdown']['p99']:.2f}x |")


def cmd_pair(args):
    both, alone_a, alone_b = by_scheme(args.both), by_scheme(args.alone_a), by_scheme(args.alone_b)
    print("| scheme | PFC pauses (both) | job | mean iteration beside the other (us) | alone (us) | "
          "victim slow-down |")
    print("|---|---|---|---|---|---|")
    for scheme, s in both.items():
        jobs = job_means(s)
        for alone in (alone_a, alone_b):
            a = alone.get(scheme)
            if not a:
                continue
            for name, j in job_means(a).items():
                if name not in jobs:
                    continue
                t, t0 = jobs[name]["iteration_us"]["mean"], j["iteration_us"]["mean"]
                print(f"| {scheme} | {s['pfc']['pauses_sent']} | {name} | {t:.0f} | {t0:.0f} | {t / t0:.2f}x |")


def cmd_iterations(args):
    print("| run | job | before (us) | across the event (us) | after (us) | after / before | link-failure "
          "drops | retransmitted bytes | PFC pauses |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in sorted(os.listdir(args.dir)):
        if not os.path.isfile(os.path.join(args.dir, name, "collectives.csv")):
            continue
        run = rocesim.Run(os.path.join(args.dir, name))
        s = run.summary
        c = run.collectives
        c = c[(c["trace_id"].fillna("") == "") & c["finish_us"].notna()]  # the iterations' rows, finished
        for job, its in c.groupby("job", sort=False):
            before = list(its[its["finish_us"] < args.at_us]["duration_us"])
            across = list(its[(its["start_us"] <= args.at_us) & (its["finish_us"] >= args.at_us)]["duration_us"])
            after = list(its[its["start_us"] > args.at_us]["duration_us"])

            def mean(v):
                return sum(v) / len(v) if v else float("nan")
            lr = s.get("loss_recovery", {})
            print(f"| {name} | {job} | {mean(before):.0f} ({len(before)}) | {mean(across):.0f} | "
                  f"{mean(after):.0f} ({len(after)}) | {mean(after) / mean(before):.2f} | "
                  f"{s['drops'].get('link_failure', 0)} | {lr.get('retransmitted_bytes', '-')} | "
                  f"{s['pfc']['pauses_sent']} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("jobs")
    j.add_argument("dirs", nargs="+")
    v = sub.add_parser("victim")
    v.add_argument("with_dir")
    v.add_argument("alone_dir")
    v.add_argument("--class", dest="cls", required=True)
    pr = sub.add_parser("pair")
    pr.add_argument("both")
    pr.add_argument("alone_a")
    pr.add_argument("alone_b")
    it = sub.add_parser("iterations")
    it.add_argument("dir")
    it.add_argument("--at-us", type=float, required=True)
    args = p.parse_args()
    {"jobs": cmd_jobs, "victim": cmd_victim, "pair": cmd_pair, "iterations": cmd_iterations}[args.cmd](args)


if __name__ == "__main__":
    main()
