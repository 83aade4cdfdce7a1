"""Unit tests of tools/rocesim_common.py (the helpers every tool shares), and of tools/rocesim_plots.py and
tools/report.py on synthetic directories.

Run by sweep_test.cc's Tools.PythonUnitTests through /usr/bin/python3, or directly:
/usr/bin/python3 tests/tools/tools_test.py. Run as a program, this file runs every *_test.py of tests/tools/
(package_test.py: the rocesim package of python/ on real runs; notebook_test.py: docs/notebooks/example.ipynb),
as /usr/bin/python3 -m unittest discover -s tests/tools -p '*_test.py' does.

Covers what a real sweep in the C++ tests does not: percentiles as summary.json computes them, size bins,
a sweep without flows.csv (bucket fallback), runs without monitor files (figures skipped, no error), input
queues (input_queues.csv) drawn beside the egress queues,
several seeds (pooled), a grid axis other than scheme/load/seed (part of the series label), and link events
(drops by kind, the events' table and their lines on the time series, one line per monitored port; also on a
real run of scenarios/multipath/link_failure.toml when the rocesim binary is there)."""

import csv
import json
import math
import os
import re
import shutil
import sys
import tempfile
import unittest
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np  # noqa: E402

import report  # noqa: E402
import reproduce  # noqa: E402
import rocesim_common as common  # noqa: E402
import rocesim_plots as rp  # noqa: E402

BUCKETS = [("0-10KB", 0, 10000), ("10KB-100KB", 10001, 100000), ("100KB+", 100001, 10**12)]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def dist(values):
    v = sorted(values)
    return {"avg": sum(v) / len(v), "count": len(v), "max": v[-1], "p50": rp.nearest_rank(v, 0.5),
            "p95": rp.nearest_rank(v, 0.95), "p99": rp.nearest_rank(v, 0.99),
            "p999": rp.nearest_rank(v, 0.999)}


CLASSES = ("incast", "background")


def add_job(d, scheme):
    """collectives.csv, collective_steps.csv and summary.json "jobs" of a 4-rank ring all-reduce of 3
    iterations (the last one unfinished) in run directory `d`; slower under "none"."""
    step_us = 10.0 if scheme == "none" else 8.0
    with open(os.path.join(d, "collectives.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job", "collective", "ranks", "iteration", "bytes", "start_us", "finish_us", "duration_us",
                    "algbw_gbps", "busbw_gbps", "ideal_us", "slowdown"])
        for it in range(2):
            t0 = it * 100.0
            w.writerow(["ar", "ring_allreduce", 4, it, 4000000, t0, t0 + 6 * step_us, 6 * step_us, 1, 1.5, 40, 1.2])
        w.writerow(["ar", "ring_allreduce", 4, 2, 4000000, 200.0, "", "", "", "", "", ""])
    with open(os.path.join(d, "collective_steps.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job", "iteration", "step", "flows", "bytes", "start_us", "finish_us"])
        for it in range(3):
            for st in range(6):
                t0 = it * 100.0 + st * step_us
                w.writerow(["ar", it, st, 4, 4 * 250000, t0, t0 + step_us if it < 2 else ""])
    with open(os.path.join(d, "summary.json")) as f:
        j = json.load(f)
    j["jobs"] = [{"job": "ar", "collective": "ring_allreduce", "ranks": 4, "bytes": 4000000, "iterations": 3,
                  "iterations_finished": 2, "iteration_us": {"mean": 6 * step_us, "min": 6 * step_us,
                                                             "max": 6 * step_us},
                  "algbw_gbps": 1, "busbw_gbps": 1.5, "ideal_us": 40, "slowdown": 6 * step_us / 40}]
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(j, f)


def make_run(d, scheme, seed, load, flows_csv=True, pauses=0, classes=False, monitors=False, min_size=1000):
    """A run directory with summary.json and flows.csv of synthetic flows; with `classes` every other flow
    is "incast" (else all "default"); with `monitors` also rates.csv and queues.csv."""
    os.makedirs(d)
    rng = np.random.default_rng(seed)
    sizes = np.exp(rng.uniform(np.log(min_size), np.log(5e6), 400)).astype(int)
    sd = 1 + rng.exponential(0.5 + load * (3 if scheme == "none" else 1), sizes.size)
    fct = sizes * 8 / 100e3 * sd + 2
    cls = [CLASSES[i % 2] if classes else "default" for i in range(sizes.size)]
    if flows_csv:
        with open(os.path.join(d, "flows.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "src", "dst", "size_bytes", "start_us", "finish_us", "fct_us", "ideal_fct_us",
                        "slowdown", "class"])
            for i, (s, t, x) in enumerate(zip(sizes, fct, sd)):
                w.writerow([i, i % 8, (i + 1) % 8, s, 0, t, t, t / x, x, cls[i]])
    if monitors:
        with open(os.path.join(d, "rates.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["time_us", "kind", "id", "gbps"])
            for fid in range(3):
                for t in range(50):
                    w.writerow([f"{t * 10:.6f}", "flow", fid, 50 + 10 * math.sin(t / 5 + fid)])
        with open(os.path.join(d, "queues.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["time_us", "node", "port", "peer", "queue_bytes"] + [f"prio{p}_bytes" for p in range(1, 8)])
            for t in range(50):
                q = 1000 * (t % 20)
                w.writerow([f"{t * 10:.6f}", "s0", 1, "h1", q, 0, 0, q, 0, 0, 0, 0])
    buckets = []
    for label, lo, hi in BUCKETS:
        m = (sizes >= lo) & (sizes <= hi)
        empty = {"avg": 0, "count": 0, "max": 0, "p50": 0, "p95": 0, "p99": 0, "p999": 0}
        buckets.append({"label": label, "min_bytes": lo, "max_bytes": hi, "count": int(m.sum()),
                        "fct_us": dist(fct[m]) if m.any() else empty,
                        "slowdown": dist(sd[m]) if m.any() else empty})
    summary = {"scheme": scheme, "seed": seed, "scenario": "synthetic", "simulated_time_ms": 5.0,
               "complete": True,
               "flows": {"started": 400, "finished": 400, "unfinished": 0},
               "fct": {"buckets": buckets, "count": 400, "fct_us": dist(fct), "slowdown": dist(sd),
                       "classes": {c: {"count": int(sum(1 for k in cls if k == c)),
                                       "fct_us": dist(fct[np.array(cls) == c]),
                                       "slowdown": dist(sd[np.array(cls) == c])}
                                   for c in (CLASSES if classes else ("default",))}},
               "pfc": {"pauses_sent": pauses, "paused_time_us": pauses * 3.0, "ports": []},
               "cnp": {"sent_by_receivers": 0, "sent_by_switches": 0}, "drops": {"data_buffer": 0},
               "performance": {"wall_seconds": 0.5}}
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f)
    return summary


def make_sweep(d, flows_csv=True, buffers=("16MB",), grid=None, **run_opts):
    """A sweep over scheme x load x seed (x buffer when given several; or `grid`), results.csv as rocesim
    writes it (with per-class rows when run_opts has classes)."""
    os.makedirs(d)
    if grid is None:
        grid = [("scheme", ["dcqcn", "none"]), ("load", ["0.3", "0.6"]), ("seed", ["1", "2"])]
        if len(buffers) > 1:
            grid.insert(1, ("switch.buffer", list(buffers)))
    keys = [k for k, _ in grid]
    points = [[]]
    for _, vals in grid:
        points = [p + [v] for p in points for v in vals]
    head = keys + ["run", "bucket", "class", "min_bytes", "max_bytes", "count", "fct_avg_us", "fct_p50_us",
                   "fct_p95_us", "fct_p99_us", "fct_p999_us", "slowdown_avg", "slowdown_p50", "slowdown_p95",
                   "slowdown_p99",
                   "slowdown_p999", "flows_started", "flows_finished", "complete", "simulated_ms", "pauses",
                   "paused_time_us", "max_buffer_bytes", "wall_seconds", "cnps", "drops"]
    rows = []
    for p in points:
        v = dict(zip(keys, p))
        name = ",".join(f"{k}={x}" for k, x in zip(keys, p))
        j = make_run(os.path.join(d, name), v["scheme"], int(v.get("seed", 1)), float(v["load"]), flows_csv,
                     pauses=100 if v["scheme"] == "none" else 0, **run_opts)
        classes = j["fct"]["classes"]
        for b in j["fct"]["buckets"] + [dict(j["fct"], label="all")] + (
                [dict(c, label="all", cls=k) for k, c in classes.items()] if len(classes) > 1 else []):
            f, s = b["fct_us"], b["slowdown"]
            rows.append(p + [name, b["label"], b.get("cls", "all"), b.get("min_bytes", ""), b.get("max_bytes", ""),
                             b["count"],
                             f["avg"], f["p50"], f["p95"], f["p99"], f["p999"], s["avg"], s["p50"], s["p95"],
                             s["p99"], s["p999"], 400, 400, 1, 5.0, j["pfc"]["pauses_sent"],
                             j["pfc"]["paused_time_us"], 0, 0.5, 0, 0])
    with open(os.path.join(d, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(rows)
    with open(os.path.join(d, "sweep.json"), "w") as f:
        json.dump({"scenario": "synthetic.toml", "sets": [],
                   "grid": [{"key": k, "values": v} for k, v in grid],
                   "runs": [",".join(f"{k}={x}" for k, x in zip(keys, p)) for p in points]}, f)


class Common(unittest.TestCase):
    def test_one_definition_of_each_helper(self):
        for name in ("nearest_rank", "to_float"):
            self.assertIs(getattr(rp, name), getattr(common, name), name)
        for name in ("nearest_rank", "reduction", "ratio", "jain", "to_float", "MetricError"):
            self.assertIs(getattr(reproduce, name), getattr(common, name), name)
        # The percentile rule and the readers are the rocesim package's (python/rocesim).
        self.assertIs(common.nearest_rank, common.rocesim.nearest_rank)
        self.assertEqual(os.path.dirname(os.path.abspath(common.rocesim.__file__)),
                         os.path.join(common.PYTHON_DIR, "rocesim"))  # this checkout's, installed or not

    def test_nearest_rank_is_exact(self):
        v = list(range(1, 11))
        # 0.3 * 10 is 3.0000000000000004 in floating point; the rank is 3, as summary.json's integer rank
        self.assertEqual(common.nearest_rank(v, 0.3), 3)
        self.assertEqual(common.nearest_rank(v, 0.7), 7)
        self.assertEqual(common.nearest_rank(v, 0.05), 1)
        self.assertEqual(common.nearest_rank(v, 1.0), 10)
        self.assertEqual(common.nearest_rank(list(range(1000, 0, -1)), Fraction(999, 1000)), 999)
        self.assertEqual(common.nearest_rank(np.array([3.0, 1.0, 2.0]), 0.5), 2.0)
        self.assertTrue(math.isnan(common.nearest_rank([], 0.99)))

    def test_reduction_ratio_and_jain(self):
        self.assertAlmostEqual(common.reduction(25, 100), 75.0)
        self.assertAlmostEqual(common.reduction(150, 100), -50.0)
        self.assertTrue(math.isnan(common.reduction(math.nan, 100)))
        self.assertTrue(math.isnan(common.reduction(1, math.nan)))
        with self.assertRaises(common.MetricError):
            common.reduction(1, 0)
        with self.assertRaises(common.MetricError):
            common.ratio(1, 0)
        self.assertEqual(common.ratio(3, 2), 1.5)
        self.assertAlmostEqual(common.jain([5, 5, 5]), 1.0)
        self.assertAlmostEqual(common.jain([1, 0]), 0.5)
        with self.assertRaises(common.MetricError):
            common.jain([0, 0])

    def test_to_float(self):
        self.assertEqual(common.to_float("2.5"), 2.5)
        self.assertTrue(math.isnan(common.to_float("")))
        self.assertEqual(common.to_float(None, 0.0), 0.0)


class Seeds(unittest.TestCase):
    """Claims over seeds (tools/reproduce.py): the 95 % interval, the numbers shown, and the verdict rule."""

    def test_confidence_interval_is_students_t(self):
        m, h = common.mean_ci95([10.0, 12.0, 14.0])  # s = 2, t(0.975, 2) = 4.303
        self.assertAlmostEqual(m, 12.0)
        self.assertAlmostEqual(h, 4.303 * 2 / math.sqrt(3), places=6)
        m, h = common.mean_ci95([1.0, 2.0, 3.0, 4.0, 5.0])  # s = sqrt(2.5), t(0.975, 4) = 2.776
        self.assertAlmostEqual(h, 2.776 * math.sqrt(2.5) / math.sqrt(5), places=6)
        self.assertEqual(common.mean_ci95([7.0]), (7.0, 0.0))
        self.assertEqual(common.mean_ci95([3.0, 3.0, 3.0]), (3.0, 0.0))
        with self.assertRaises(common.MetricError):
            common.mean_ci95([])

    def test_estimate_formats_mean_and_half_width_with_the_claims_spec(self):
        self.assertEqual(f"{reproduce.Estimate([10.0, 12.0, 14.0]):.1f}", "12.0 \u00b1 5.0")
        self.assertEqual(f"{reproduce.Estimate([-10.0, -12.0, -14.0]):+.0f}", "-12 \u00b1 5")
        self.assertEqual(f"{reproduce.Estimate([4.0, 4.0]):.2f}", "4.00")  # no interval: the mean alone
        self.assertEqual(f"{reproduce.Estimate([4.0, 4.001]):.1f}", "4.0")  # an interval that rounds to 0

    def test_comparisons_are_paired_per_seed(self):
        # Both sides vary a lot over seeds, but a is above b by 1.0-1.2 in every seed: a > b holds.
        per_seed = {"a": [10.0, 20.0, 30.0, 40.0, 50.0], "b": [9.0, 18.9, 28.8, 39.0, 49.0]}
        self.assertIs(reproduce.tri_eval("a > b", per_seed), True)
        self.assertIs(reproduce.tri_eval("a < b", per_seed), False)
        self.assertIs(reproduce.tri_eval("not a > b", per_seed), False)
        # A difference whose interval straddles the threshold is neither.
        self.assertIsNone(reproduce.tri_eval("a > 30", per_seed))
        self.assertIs(reproduce.tri_eval("a > 30 or a > b", per_seed), True)
        self.assertIs(reproduce.tri_eval("a > 30 and a < b", per_seed), False)
        self.assertIsNone(reproduce.tri_eval("a > 30 and a > b", per_seed))
        # Chains, min/max/abs/mean and all() over seeds.
        self.assertIs(reproduce.tri_eval("0 <= b - a + 1.2 <= 1", {"a": [1.0] * 3, "b": [0.5] * 3}), True)
        self.assertIs(reproduce.tri_eval("min(a, b) >= 9 and max(a, b) <= 50", per_seed), True)
        self.assertIs(reproduce.tri_eval("abs(a - b - 1.1) < 0.5", per_seed), True)
        self.assertIs(reproduce.tri_eval("mean([a, b]) > 5", per_seed), True)
        self.assertIs(reproduce.tri_eval("all(x > 5 for x in [a, b])", per_seed), True)
        # Equality: the same in every seed, or an interval that excludes it.
        self.assertIs(reproduce.tri_eval("z == 0", {"z": [0.0, 0.0, 0.0]}), True)
        self.assertIs(reproduce.tri_eval("z == 0", {"z": [5.0, 5.1, 4.9]}), False)
        self.assertIsNone(reproduce.tri_eval("z == 0", {"z": [0.0, 1.0, 0.0]}))
        # One seed: plain comparisons.
        self.assertIs(reproduce.tri_eval("a > 30", {"a": [31.0]}), True)

    def test_verdict_uses_the_interval(self):
        c = {"agree": "x >= 10", "partly": "x > 0"}
        self.assertEqual(reproduce.interval_verdict(c, {"x": [12.0, 13.0, 12.5, 12.8, 13.1]}), ("agree", ""))
        self.assertEqual(reproduce.interval_verdict(c, {"x": [5.0, 6.0, 5.5, 5.2, 5.9]}), ("partly", ""))
        self.assertEqual(reproduce.interval_verdict(c, {"x": [-5.0, -6.0, -5.5, -5.2, -5.9]}), ("disagree", ""))
        self.assertEqual(reproduce.interval_verdict(c, {"x": [8.0, 12.0, 9.0, 11.0, 10.5]}),
                         ("inconclusive", "partly to agree within the 95 % intervals"))
        self.assertEqual(reproduce.interval_verdict(c, {"x": [-1.0, 1.0, 0.5, -0.5, 0.2]}),
                         ("inconclusive", "disagree to partly within the 95 % intervals"))
        self.assertEqual(reproduce.interval_verdict({"agree": "x >= 10", "partly": ""}, {"x": [8.0, 12.0, 9.5]}),
                         ("inconclusive", "disagree to agree within the 95 % intervals"))

    def _rule(self, **c):
        return reproduce.parse_rule(c, "test")

    def test_one_rule_decides_every_branch_against_every_baseline(self):
        c = self._rule(effect={"A": "a", "B": "b"}, unit="%", size={"A": 40, "B": 20})
        self.assertEqual(c["rule"]["agree_at"], {"A": 40.0, "B": 20.0})
        five = lambda x: [x - 1.0, x + 1.0, x, x - 0.5, x + 0.5]  # noqa: E731 (interval about x +- 1.1)
        self.assertEqual(reproduce.interval_verdict(c, {"a": five(50), "b": five(30)}), ("agree", ""))
        # one baseline below the paper's size: not agree, though the other is far above it
        self.assertEqual(reproduce.interval_verdict(c, {"a": five(90), "b": five(15)}), ("partly", ""))
        # partly needs the real margin (10 %) against every baseline: one at +5 % is disagree
        self.assertEqual(reproduce.interval_verdict(c, {"a": five(50), "b": five(5)}), ("disagree", ""))
        self.assertEqual(reproduce.interval_verdict(c, {"a": five(-20), "b": five(30)}), ("disagree", ""))
        # an interval that straddles a boundary: inconclusive, naming the verdicts it lies between
        self.assertEqual(reproduce.interval_verdict(c, {"a": five(50), "b": five(20)}),
                         ("inconclusive", "partly to agree within the 95 % intervals"))
        self.assertEqual(reproduce.interval_verdict(c, {"a": five(50), "b": five(10)}),
                         ("inconclusive", "disagree to partly within the 95 % intervals"))
        # a straddle that cannot change the verdict (another baseline already disagrees) is not inconclusive
        self.assertEqual(reproduce.interval_verdict(c, {"a": five(20), "b": five(-5)}), ("disagree", ""))

    def test_rule_levels_fraction_ratio_and_no_size(self):
        self.assertEqual(reproduce.agree_at("%", 45.0, 0.5), 22.5)
        self.assertEqual(reproduce.agree_at("%", 12.0, 0.5), 10.0)  # never below the margin
        self.assertAlmostEqual(reproduce.agree_at("x", 3.0, 0.5), 2.0)  # half the gain above 1x
        self.assertEqual(reproduce.agree_at("x", None, 1.0), 1.1)  # no size: the margin
        c = self._rule(effect={"A": "base / ours"}, unit="x")
        self.assertEqual(reproduce.interval_verdict(c, {"base": [2.0] * 3, "ours": [1.0] * 3}), ("agree", ""))
        self.assertEqual(reproduce.interval_verdict(c, {"base": [1.05] * 3, "ours": [1.0] * 3}), ("disagree", ""))
        iv = reproduce.effect_intervals(c["rule"], {"base": [2.0, 3.0], "ours": [1.0, 1.0]})
        self.assertAlmostEqual(iv["A"][0], 2.5)
        self.assertLess(iv["A"][1], 2.5)
        self.assertIn("A 2.50x", reproduce.rule_text(c["rule"], iv))

    def test_observations_have_no_partly_and_claims_cannot_bring_their_own(self):
        c = self._rule(agree="q > 1000")
        self.assertEqual(c["partly"], "")
        self.assertEqual(reproduce.interval_verdict(c, {"q": [900.0]}), ("disagree", ""))
        for bad in ({"agree": "x > 0", "partly": "x > -1"}, {"effect": {"A": "a"}, "agree": "a > 0"},
                    {"agree": "x > 0", "size": 3}, {"effect": {"A": "a"}, "unit": "Gb/s"},
                    {"effect": {"A": "a", "B": "b"}, "size": {"A": 3}}, {"effect": {"A": "a"}, "fraction": 1.5}):
            with self.assertRaises(reproduce.ManifestError, msg=bad):
                reproduce.parse_rule(bad, "test")

    def test_every_claim_uses_the_rule_and_improvement_is_positive(self):
        mans = reproduce.load_manifests(os.path.join(REPO, "reproduce"))
        for m in mans:
            for c in m.claims:
                self.assertEqual(c["partly"] == "", c["rule"] is None, c["id"])
                # the paper's number is improvement positive: no "-N %" (a reduction written as a minus)
                self.assertNotRegex(c["paper"], r"(^|[\s/(])-\d", f"{m.key} {c['id']}: {c['paper']}")
                if c["rule"] and c["rule"]["unit"] == "%":
                    self.assertRegex(c["show"], r"\{[a-z_0-9]+:\+", f"{c['id']}: show the sign of a percentage")

    def test_rejudge_uses_the_stored_per_seed_values(self):
        man_dir = tempfile.mkdtemp()
        docs = tempfile.mkdtemp()
        with open(os.path.join(man_dir, "p.toml"), "w") as f:
            f.write('[paper]\nkey = "p"\norder = 0\ntitle = "P"\nseed = "s.txt"\n'
                    '[[sweep]]\nname = "w"\nscenario = "x.toml"\ngrid = ["scheme=a,b"]\ntest = true\n'
                    '[[claim]]\nid = "C1"\nsweeps = ["w"]\nclaim = "c"\npaper = "+20 %"\n'
                    'values = { r = "1" }\nshow = "{r:+.0f} %"\neffect = { A = "r" }\nunit = "%"\nsize = 20\n'
                    'deviation = "Xoff 30 KB (the paper: 320 KB)"\n')
        os.makedirs(os.path.join(docs, "reproduction"))
        entry = {"verdict": "agree", "per_seed": {"r": [14.0, 15.0, 16.0]}, "seeds": [1, 2, 3], "commit": "abc",
                 "date": "2026-01-01", "shown": "old", "note": ""}
        with open(os.path.join(docs, "reproduction", "p.full.json"), "w") as f:
            json.dump({"claims": {"C1": entry}}, f)
        mans = reproduce.load_manifests(man_dir)
        self.assertEqual(reproduce.rejudge(docs, mans), [("p", "full", "C1", "agree", "partly", "")])
        reproduce.write_reproduction_md(docs, mans)
        with open(os.path.join(docs, "REPRODUCTION.md")) as f:
            md = f.read()
        self.assertIn("*Deviation:* Xoff 30 KB (the paper: 320 KB).", md)
        self.assertIn("full column measured at commit abc", md)
        # one commit for every stored number: the document says so once, at its top
        self.assertIn("**Commit.** Every claim's numbers below, at both scales and for every paper, were measured "
                      "at commit abc.", md)
        self.assertIn("A +15 % [", md)
        self.assertIn("+15 \u00b1 2 %", md)

    def test_a_part_run_replaces_its_sweeps_times_in_the_wall_time(self):
        # A full run of two sweeps at 1 seed, then `--claim` re-runs sweep "b" at 5 seeds.
        full = {"date": "2026-11-22", "commit": "aaa", "wall_s": 110.0, "seeds": 1,
                "sweeps": {"a": {"ok": True, "wall_s": 10.0}, "b": {"ok": True, "wall_s": 95.0}}}
        part = {"date": "2026-11-26", "commit": "bbb", "wall_s": 520.0, "seeds": 5, "claims_only": ["X"],
                "sweeps": {"b": {"ok": True, "wall_s": 500.0}}}
        lr = reproduce.merge_part_run(full, part)
        self.assertEqual(full["sweeps"]["b"]["wall_s"], 95.0)  # the stored run is not modified
        self.assertAlmostEqual(lr["wall_s"], 110.0 - 95.0 + 500.0)
        self.assertEqual((lr["sweeps"]["a"]["seeds"], lr["sweeps"]["b"]["seeds"]), (1, 5))
        self.assertEqual(lr["date"], "2026-11-26")
        self.assertEqual(reproduce.seeds_text(lr), "1-5 seeds by sweep")
        # 5 seeds everywhere: a's 10 s x 5, b's 500 s as measured, and the 5 s outside the sweeps once.
        self.assertAlmostEqual(reproduce.five_seed_time(lr), 50.0 + 500.0 + 5.0)
        self.assertAlmostEqual(reproduce.five_seed_time(full), 550.0)
        self.assertEqual(reproduce.seeds_text(full), "1 seed")
        # Re-running "a" at 5 seeds too: every sweep at 5 seeds again.
        lr = reproduce.merge_part_run(lr, dict(part, sweeps={"a": {"ok": True, "wall_s": 40.0}}))
        self.assertEqual(reproduce.seeds_text(lr), "5 seeds")
        self.assertAlmostEqual(reproduce.five_seed_time(lr), lr["wall_s"])

    def test_sweep_args_add_the_seed_axis_and_respect_a_long_sweeps_cap(self):
        sw = {"grid": ["scheme=a,b"], "set": ["x=1"], "quick": {"grid": [], "set": []},
              "full": {"grid": [], "set": [], "seeds": 3}}
        self.assertEqual(reproduce.sweep_args(sw, "quick", 1), (["scheme=a,b"], ["x=1"]))
        self.assertEqual(reproduce.sweep_args(sw, "quick", 5)[0], ["scheme=a,b", "seed=1,2,3,4,5"])
        self.assertEqual(reproduce.sweep_args(sw, "full", 5)[0], ["scheme=a,b", "seed=1,2,3"])

    def test_manifest_checks_seeds_and_sensitivity(self):
        d = tempfile.mkdtemp(prefix="rocesim_manifest_")
        self.addCleanup(shutil.rmtree, d, True)
        head = ('[paper]\nkey = "p"\norder = 0\ntitle = "t"\nseed = "s"\n'
                '[[sweep]]\nname = "a"\nscenario = "x.toml"\ngrid = ["scheme=dcqcn,hpcc"]\ntest = true\n{extra}'
                '[[claim]]\nid = "C1"\nsweeps = ["a"]\nclaim = "c"\npaper = "p"\nvalues = {{ v = "1" }}\n'
                'show = "{{v}}"\nagree = "v > 0"\n{tail}')
        cases = [("full = { seeds = 0 }\n", "", "'full.seeds' must be an integer >= 1"),
                 ('full = { grid = ["seed=1,2"] }\n', "", "'seed' must not be a grid key"),
                 ("", '[[sensitivity]]\nclaim = "C9"\nvary = ["a=1"]\n', "unknown claim 'C9'"),
                 ("", '[[sensitivity]]\nclaim = "C1"\nvary = ["scheme=hpcc"]\n', "'scheme' is a grid key"),
                 ("", '[[sensitivity]]\nclaim = "C1"\nvary = ["novalue"]\n', "expected space-separated key=value"),
                 ("", '[[sensitivity]]\nclaim = "C1"\nvary = []\n', "'vary' must list")]
        for extra, tail, want in cases:
            p = os.path.join(d, "p.toml")
            with open(p, "w") as f:
                f.write(head.format(extra=extra, tail=tail))
            with self.assertRaises(reproduce.ManifestError) as e:
                reproduce.Manifest(p)
            self.assertIn(want, str(e.exception))
        with open(p, "w") as f:
            f.write(head.format(extra="full = { seeds = 2 }\n",
                                tail='[[sensitivity]]\nclaim = "C1"\nvary = ["switch.kmin_bytes=1 switch.kmax_bytes=2"]\n'))
        m = reproduce.Manifest(p)
        self.assertEqual(m.sweeps[0]["full"]["seeds"], 2)
        self.assertEqual(m.sensitivity, [{"claim": "C1", "vary": ["switch.kmin_bytes=1 switch.kmax_bytes=2"],
                                          "scale": "quick", "seeds": 3, "degenerate": {}}])


class ClaimMetrics(unittest.TestCase):
    """The metrics and figure options the reproduce manifests use for the papers' headline claims: a flow's
    reaction time, a sweep's grid values in an expression (G), fct_vs_load per workload, the figure keys."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_reaction_time_is_to_the_end_of_the_first_qualifying_bin_and_censored_at_the_window(self):
        d = os.path.join(self.tmp, "run")
        make_run(d, "mercury", 1, 0.5)
        # flow 1: 20 Gb/s, cut to 5 during [300, 400) us with one 12 Gb/s bin at 330, back to 20 from 400;
        # 10 us bins.
        with open(os.path.join(d, "rates.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["time_us", "kind", "id", "gbps"])
            for t in range(0, 500, 10):
                g = 20.0 if t < 300 or t >= 400 else (12.0 if t == 330 else 5.0)
                w.writerow([f"{t:.6f}", "flow", 1, g])
        r = reproduce.RunData(d)
        self.assertEqual(r.reaction_us(1, 250, 10), 60.0)  # the bin at 300 is below: known by 310
        self.assertEqual(r.reaction_us(1, 250, 10, hold=3), 60.0)  # 300-320
        self.assertEqual(r.reaction_us(1, 250, 10, hold=4), 100.0)  # 330 breaks 300-330; 340-370 holds
        self.assertEqual(r.reaction_us(1, 300, 10), 10.0)  # never 0: at least one bin
        self.assertEqual(r.reaction_us(1, 350, 18, above=True, hold=5), 60.0)  # 400-440 at 20 Gb/s
        self.assertEqual(r.reaction_us(1, 350, 18, above=False, hold=5), 10.0)
        # never below 1 Gb/s: the window's end (t1, else the last bin's end), a lower bound
        self.assertEqual(r.reaction_us(1, 0, 1, t1=200), 200.0)
        self.assertEqual(r.reaction_us(1, 100, 1), 400.0)
        with self.assertRaises(common.MetricError):
            r.reaction_us(7, 0, 1)

    def test_grid_values_in_expressions_follow_the_sweep_that_ran(self):
        man_dir, paper = tempfile.mkdtemp(dir=self.tmp), tempfile.mkdtemp(dir=self.tmp)
        with open(os.path.join(man_dir, "p.toml"), "w") as f:
            f.write('[paper]\nkey = "p"\norder = 0\ntitle = "P"\nseed = "s.txt"\n'
                    '[[sweep]]\nname = "w"\nscenario = "x.toml"\ngrid = ["scheme=dcqcn,none", "load=0.3,0.6"]\n'
                    'test = true\n'
                    '[[claim]]\nid = "C1"\nsweeps = ["w"]\nclaim = "c"\npaper = "lower"\n'
                    'values = { n = "len(G(\'w\', \'load\'))", top = "max(G(\'w\', \'load\'))", '
                    'cut = "reduction(mean([R(\'w\', scheme=\'dcqcn\', load=l).fct(\'avg\') for l in G(\'w\', '
                    '\'load\')]), mean([R(\'w\', scheme=\'none\', load=l).fct(\'avg\') for l in G(\'w\', \'load\')]))" }\n'
                    'show = "{cut:+.0f} %"\neffect = { none = "cut" }\nunit = "%"\n')
        make_sweep(os.path.join(paper, "w"))
        man = reproduce.load_manifests(man_dir)[0]
        e = reproduce.evaluate(man, paper, {"w": {"ok": True}}, "quick")["C1"]
        self.assertEqual(e["seeds"], [1, 2])
        self.assertEqual(e["per_seed"]["n"], [2.0, 2.0])
        self.assertEqual(e["per_seed"]["top"], [0.6, 0.6])
        for i, seed in enumerate((1, 2)):
            def avg(scheme):
                return mean_of([reproduce.RunData(os.path.join(paper, "w", f"scheme={scheme},load={l},seed={seed}"))
                                .fct("avg") for l in ("0.3", "0.6")])
            self.assertAlmostEqual(e["per_seed"]["cut"][i], 100 * (1 - avg("dcqcn") / avg("none")))
        self.assertGreater(min(e["per_seed"]["cut"]), 10)  # make_run's "none" is the slower

    def test_fct_vs_load_per_workload_leaves_the_facet_out_of_the_series(self):
        d = os.path.join(self.tmp, "sweep")
        grid = [("scheme", ["dcqcn", "none"]), ("traffic[0].workload", ["hadoop", "websearch"]),
                ("load", ["0.3", "0.6"])]
        make_sweep(d, grid=grid)
        sw = rp.Sweep(d)
        pts = rp.fct_vs_load_points(sw, "traffic[0].workload")
        self.assertEqual(list(pts), ["hadoop", "websearch"])
        for wl, per in pts.items():
            self.assertEqual(list(per), ["dcqcn", "none"])
            for series, cols in per.items():
                for load, m, h in cols["fct_avg_us"]:
                    row = [r for r in sw.all_rows if r["scheme"] == series and r["traffic[0].workload"] == wl
                           and to_f(r["load"]) == load]
                    self.assertEqual(len(row), 1)
                    self.assertAlmostEqual(m, to_f(row[0]["fct_avg_us"]))
                    self.assertEqual(h, 0.0)  # one seed
        flat = rp.fct_vs_load_points(sw)
        self.assertEqual(list(flat), [None])
        self.assertEqual(len(flat[None]), 4)  # the workload is part of each series without the facet
        with self.assertRaises(ValueError):
            rp.fct_vs_load_points(sw, "switch.xoff_bytes")
        one = rp.fig_fct_vs_load(sw, self.tmp, "flat")
        two = rp.fig_fct_vs_load(sw, self.tmp, "faceted", facet="traffic[0].workload")
        h1, h2 = rp.plt.imread(one).shape[0], rp.plt.imread(two).shape[0]
        self.assertGreater(h2, 1.8 * h1)  # one row of panels per workload

    def test_a_value_may_not_hide_a_function_of_the_expressions(self):
        p = os.path.join(self.tmp, "p.toml")
        for name, ok in (("all", False), ("max", False), ("G", False), ("every", True)):
            with open(p, "w") as f:
                f.write('[paper]\nkey = "p"\norder = 0\ntitle = "P"\nseed = "s.txt"\n'
                        '[[sweep]]\nname = "w"\nscenario = "x.toml"\ngrid = ["scheme=a,b"]\ntest = true\n'
                        f'[[claim]]\nid = "C1"\nsweeps = ["w"]\nclaim = "c"\npaper = "p"\nvalues = {{ {name} = "1" }}\n'
                        f'show = "x"\nagree = "{name} > 0"\n')
            if ok:
                reproduce.Manifest(p)
            else:
                with self.assertRaisesRegex(reproduce.ManifestError, "hides the function", msg=name):
                    reproduce.Manifest(p)

    def test_figure_keys_are_checked_against_their_kind_and_sweep(self):
        head = ('[paper]\nkey = "p"\norder = 0\ntitle = "P"\nseed = "s.txt"\n'
                '[[sweep]]\nname = "w"\nscenario = "x.toml"\ngrid = ["scheme=a,b"]\ntest = true\n'
                'full = { grid = ["scheme=a,b", "traffic[0].workload=x,y", "load=0.3,0.5"] }\n')
        ok = ('[[figure]]\nsweep = "w"\nkind = "fct_vs_load"\nfacet = "traffic[0].workload"\ncaption = "c"\n'
              '[[figure]]\nsweep = "w"\nkind = "buffer_cdf"\nload = 0.5\ncaption = "c"\n')
        p = os.path.join(self.tmp, "p.toml")
        with open(p, "w") as f:
            f.write(head + ok)
        m = reproduce.Manifest(p)
        self.assertEqual([(f["facet"], f["load"]) for f in m.figures], [("traffic[0].workload", None), (None, 0.5)])
        for bad in ('kind = "fct_bars"\nfacet = "traffic[0].workload"', 'kind = "fct_vs_load"\nfacet = "load2"',
                    'kind = "timeseries"\nload = 0.5', 'kind = "buffer_cdf"\nload = "0.5"'):
            with open(p, "w") as f:
                f.write(head + f'[[figure]]\nsweep = "w"\n{bad}\ncaption = "c"\n')
            with self.assertRaises(reproduce.ManifestError, msg=bad):
                reproduce.Manifest(p)


def mean_of(v):
    return sum(v) / len(v)


def to_f(x):
    return float(x)


class Helpers(unittest.TestCase):
    def test_nearest_rank_matches_summary(self):
        v = list(range(1, 101))
        self.assertEqual(rp.nearest_rank(v, 0.5), 50)
        self.assertEqual(rp.nearest_rank(v, 0.99), 99)
        self.assertEqual(rp.nearest_rank(v, 0.999), 100)
        self.assertEqual(rp.nearest_rank([7], 0.99), 7)
        self.assertTrue(np.isnan(rp.nearest_rank([], 0.5)))

    def test_size_bins_hold_similar_counts_and_never_split_a_size(self):
        sizes = [100] * 500 + list(range(1000, 1500))
        edges = rp.size_bins(sizes, max_bins=10, min_per_bin=50)
        self.assertEqual(edges[-1], 1499)
        self.assertEqual(edges[0], 100)  # the 500 equal sizes form one bin
        self.assertEqual(len(edges), len(set(edges)))
        counts = [c for _, _, c in rp.slowdown_by_size([{"size": np.array(sizes, float),
                                                         "slowdown": np.ones(len(sizes))}], edges)]
        self.assertEqual(sum(counts), len(sizes))

    def test_fmt_bytes(self):
        self.assertEqual(rp.fmt_bytes(512), "512B")
        self.assertEqual(rp.fmt_bytes(10000), "10KB")
        self.assertEqual(rp.fmt_bytes(1500000), "1.5MB")


class Reports(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rocesim_tools_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def titles(self, figs):
        return [f.title for f in figs]

    def test_sweep_with_seeds_pools_them_and_skips_absent_monitors(self):
        d = os.path.join(self.tmp, "sweep")
        make_sweep(d)
        out, figs = report.write_report(d)
        t = self.titles(figs)
        self.assertIn("FCT slowdown vs flow size, load 0.3", t)
        self.assertIn("FCT slowdown vs flow size, load 0.6", t)
        self.assertIn("FCT vs load", t)
        self.assertIn("PFC pauses per scheme", t)
        self.assertFalse(any("Rates" in x or "buffer" in x for x in t), t)  # no monitor files: skipped
        page = read(out)
        self.assertEqual(page.count('<img src="data:image/png;base64,'), len(figs))
        self.assertIn("8 run(s) complete of 8", page)
        sw = rp.Sweep(d)
        self.assertEqual(sw.series, ["dcqcn", "none"])
        self.assertEqual(sw.loads, ["0.3", "0.6"])
        self.assertEqual(len(sw.runs_at("dcqcn", "0.3")), 2)  # both seeds' flows are pooled
        self.assertIn("the flows of 2 seeds pooled", " ".join(f.caption for f in figs))

    def test_sweep_without_flows_csv_falls_back_to_buckets(self):
        d = os.path.join(self.tmp, "sweep")
        make_sweep(d, flows_csv=False)
        figs = rp.figures_for_sweep(d, os.path.join(d, "figures"))
        caps = [f.caption for f in figs if f.title.startswith("FCT slowdown vs flow size")]
        self.assertEqual(len(caps), 2)
        self.assertTrue(all("size bucket" in c for c in caps), caps)

    def test_extra_grid_axis_is_part_of_the_series(self):
        d = os.path.join(self.tmp, "sweep")
        make_sweep(d, buffers=("8MB", "16MB"))
        sw = rp.Sweep(d)
        self.assertEqual(sw.series, ["dcqcn, buffer=8MB", "dcqcn, buffer=16MB", "none, buffer=8MB",
                                     "none, buffer=16MB"])
        _, figs = report.write_report(d)
        self.assertIn("FCT vs load", self.titles(figs))

    def test_missing_runs_are_listed(self):
        d = os.path.join(self.tmp, "sweep")
        make_sweep(d)
        with open(os.path.join(d, "sweep.json")) as f:
            m = json.load(f)
        m["runs"].append("scheme=hpcc,load=0.3,seed=1")
        with open(os.path.join(d, "sweep.json"), "w") as f:
            json.dump(m, f)
        out, _ = report.write_report(d)
        self.assertIn("Missing runs (not complete): scheme=hpcc,load=0.3,seed=1", read(out))

    def test_run_without_monitors(self):
        d = os.path.join(self.tmp, "run")
        make_run(d, "dcqcn", 1, 0.5)
        out, figs = report.write_report(d)
        self.assertEqual(self.titles(figs), ["FCT slowdown vs flow size"])
        page = read(out)
        self.assertIn("Flow completion times by flow size", page)
        self.assertIn('<img src="data:image/png;base64,', page)

    def test_run_with_input_queues_draws_them_in_a_row_of_their_own(self):
        d = os.path.join(self.tmp, "run")
        make_run(d, "none", 1, 0.5)
        for name, rows in (("queues.csv", [("s0", 4, "s1")]), ("input_queues.csv", [("s0", 0, "h0"), ("s0", 1, "h1"),
                                                                                     ("s1", 0, "s0")])):
            with open(os.path.join(d, name), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["time_us", "node", "port", "peer", "queue_bytes"])
                for t in range(100):
                    for k, (node, port, peer) in enumerate(rows):
                        w.writerow([f"{t:.6f}", node, port, peer, 0 if node == "s1" else 1000 * (t % 50) + k])
        self.assertEqual(set(rp.read_queues(rp.Run(d), name="input_queues.csv", arrow="\u2190")),
                         {"s0\u2190h0", "s0\u2190h1", "s1\u2190s0"})
        _, figs = report.write_report(d)
        ts = [f for f in figs if f.title == "Rates and queue over time"]
        self.assertEqual(len(ts), 1, self.titles(figs))
        self.assertIn("Queues: the 1 monitored egress queue(s)", ts[0].caption)
        self.assertIn("Input queues: the 2 monitored input queue(s)", ts[0].caption)  # s1<-s0 stayed empty
        os.remove(os.path.join(d, "queues.csv"))  # input queues alone still make the figure
        _, figs = report.write_report(d)
        ts = [f for f in figs if f.title == "Rates and queue over time"]
        self.assertEqual(len(ts), 1, self.titles(figs))
        self.assertNotIn("egress", ts[0].caption)

    def test_three_key_sweep_figures_stay_readable(self):
        """scheme x buffer x xoff (x load): every figure at most ~1,600 px wide (the timeseries was 4,214 px),
        one figure against each numeric key, per-class figures, and no empty size bucket drawn."""
        d = os.path.join(self.tmp, "sweep")
        grid = [("scheme", ["dcqcn", "dctcp", "none"]), ("switch.buffer_bytes", ["4000000", "16000000", "32000000"]),
                ("switch.xoff_bytes", ["100000", "300000"]), ("load", ["0.3", "0.6"])]
        make_sweep(d, grid=grid, classes=True, monitors=True, min_size=20000)
        out, figs = report.write_report(d)
        t = self.titles(figs)
        self.assertIn("FCT against switch.buffer_bytes", t)
        self.assertIn("FCT against switch.xoff_bytes", t)
        self.assertIn("Slowdown per traffic class", t)
        self.assertTrue(any(x.startswith("Rates and queue over time") for x in t), t)
        for f in figs:
            h, w = rp.plt.imread(f.path).shape[:2]
            self.assertLessEqual(w, 1700, f"{f.title}: {w} px wide")
            self.assertLessEqual(h, 2600, f"{f.title}: {h} px high")
        ts = [f for f in figs if f.title.startswith("Rates")][0]
        self.assertIn("The first 8 runs; 10 more are left out", ts.caption)
        sw = rp.Sweep(d)
        self.assertEqual(sw.classes, list(CLASSES))
        self.assertNotIn("class", [r.get("class") for r in sw.rows if r.get("class") != "all"])
        self.assertEqual(len(sw.all_rows), 36)  # class rows are not runs
        # The smallest bucket holds no flow in any run (sizes from 20 KB): not drawn.
        self.assertEqual(rp.nonempty_buckets(sw), ["10KB-100KB", "100KB+"])
        page = read(out)
        self.assertIn("Per traffic class", page)
        self.assertIn("incast", page)

    def test_run_with_classes_has_a_per_class_table_and_figure(self):
        d = os.path.join(self.tmp, "run")
        make_run(d, "dcqcn", 1, 0.5, classes=True)
        out, figs = report.write_report(d)
        self.assertIn("FCT slowdown vs flow size per class", self.titles(figs))
        page = read(out)
        self.assertIn("Flow completion times by class", page)
        self.assertIn("background", page)


    def test_run_with_a_collective_has_a_job_table_and_a_step_timeline(self):
        d = os.path.join(self.tmp, "run")
        make_run(d, "dcqcn", 1, 0.5)
        add_job(d, "dcqcn")
        out, figs = report.write_report(d)
        self.assertIn("Collective steps of one iteration", self.titles(figs))
        self.assertIn("Collective and trace jobs", read(out))
        # The last finished iteration (1), not the unfinished one (2); times from its start.
        steps = rp.read_steps(rp.Run(d))
        self.assertEqual(steps["ar"][0], 1)
        self.assertEqual(steps["ar"][1][0], (0, 0.0, 8.0))

    def test_sweep_with_collectives_compares_iteration_times_per_scheme(self):
        d = os.path.join(self.tmp, "sweep")
        make_sweep(d)
        for name in os.listdir(d):
            if os.path.isdir(os.path.join(d, name)):
                add_job(os.path.join(d, name), name.split(",")[0].split("=")[1])
        _, figs = report.write_report(d)
        self.assertIn("Collective completion time per scheme", self.titles(figs))
        sw = rp.Sweep(d)
        self.assertEqual(rp.job_iterations(sw.runs_at("none")[0])["ar"], [60.0, 60.0])


LINK_LOG = [{"time_us": 100.0, "event": "down s0-s3"}, {"time_us": 200.0, "event": "routes recomputed"},
            {"time_us": 600.0, "event": "up s0-s3"}, {"time_us": 700.0, "event": "routes recomputed"}]
# Monitored ports: two of s0, and two parallel ones of s1 towards s4 (rates.csv ids "NODE:PEER:PORT").
PORT_IDS = ["s0:s3", "s0:s2", "s1:s4:1", "s1:s4:2"]


def add_link_events(d, link_failure=57, ports=PORT_IDS):
    """A run directory `d` (make_run with monitors) as a run with [[events]] writes it: summary.json's
    link_events and drops.link_failure, and the monitored ports' rows in rates.csv."""
    with open(os.path.join(d, "summary.json")) as f:
        j = json.load(f)
    j["drops"] = {"control_buffer": 0, "data_buffer": 0, "unroutable": 0, "wire": 3, "link_failure": link_failure}
    j["link_events"] = {"log": LINK_LOG, "route_updates": 2}
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(j, f)
    with open(os.path.join(d, "rates.csv"), "a", newline="") as f:
        w = csv.writer(f)
        for k, pid in enumerate(ports):
            for t in range(50):
                w.writerow([f"{t * 10:.6f}", "port", pid, 20 * k + (0 if 10 <= t < 60 else 5)])


def timeseries_axes(test, d):
    """fig_timeseries of run `d`: its caption and what the figure it saved holds (per visible axes: its lines
    as (gid, x data, label, colour, line style), its texts)."""
    saved = {}
    save = rp.save

    def keep(fig, out_dir, name):
        saved["axes"] = [ax for ax in fig.axes if ax.get_visible()]
        saved["lines"] = [[(ln.get_gid(), ln.get_xdata(), ln.get_label(), ln.get_color(), ln.get_linestyle())
                           for ln in ax.get_lines()] for ax in saved["axes"]]
        saved["texts"] = [[t.get_text() for t in ax.texts] for ax in saved["axes"]]
        return save(fig, out_dir, name)

    rp.save = keep
    try:
        path, cap = rp.fig_timeseries([rp.Run(d)], os.path.join(d, "figures"))
    finally:
        rp.save = save
    test.assertTrue(path and os.path.isfile(path))
    return cap, saved


class LinkEventsAndPorts(unittest.TestCase):
    """The report of a run with link events: its drops by kind, its events (a table, and a line at each on
    the time series), and one line of its own for each monitored port (issue 48)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rocesim_tools_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_report_has_drops_by_kind_and_the_events(self):
        d = os.path.join(self.tmp, "run")
        make_run(d, "dcqcn", 1, 0.5, monitors=True)
        add_link_events(d)
        out, figs = report.write_report(d)
        page = read(out)
        self.assertIn('<h2 id="drops">Drops by kind</h2>', page)
        drops = page.split('<h2 id="drops">')[1].split("</table>")[0]
        for kind, n in (("data_buffer", "0"), ("control_buffer", "0"), ("wire", "3"), ("link_failure", "57"),
                        ("unroutable", "0"), ("all", "60")):
            self.assertRegex(drops, f"<td>{kind}</td><td>[^<]*</td><td class=\"num\">{n}</td>")
        self.assertIn("lost on failed links", drops)
        self.assertIn('<h2 id="link-events">Link events</h2>', page)
        events = page.split('<h2 id="link-events">')[1].split("</table>")[0]
        for t, what in (("100", "down s0-s3"), ("200", "routes recomputed"), ("600", "up s0-s3")):
            self.assertIn(f'<td class="num">{t}</td><td>{what}</td>', events)
        self.assertIn("2 route recomputation(s)", page)
        ts = [f for f in figs if f.title == "Rates and queue over time"]
        self.assertEqual(len(ts), 1, [f.title for f in figs])
        self.assertIn("Vertical lines: link events", ts[0].caption)
        self.assertIn("down s0-s3 at 100 \u00b5s, routes recomputed at 200 \u00b5s, up s0-s3 at 600 \u00b5s", ts[0].caption)
        self.assertIn(html_escape(ts[0].caption), page)

    def test_events_are_lines_on_every_panel_and_labelled_on_the_top_one(self):
        d = os.path.join(self.tmp, "run")
        make_run(d, "dcqcn", 1, 0.5, monitors=True)
        add_link_events(d)
        cap, saved = timeseries_axes(self, d)
        self.assertEqual(len(saved["axes"]), 2)  # rates, egress queues
        for lines in saved["lines"]:
            xs = sorted(float(x[0]) for gid, x, *_ in lines if gid == "link-event")
            self.assertEqual(xs, [0.1, 0.2, 0.6, 0.7])  # ms
        self.assertIn(" down s0-s3", saved["texts"][0])
        self.assertIn(" up s0-s3", saved["texts"][0])
        self.assertNotIn(" routes recomputed", saved["texts"][0])  # a line only
        self.assertEqual(saved["texts"][1], [])
        # Without events: no line, no sentence.
        make_run(os.path.join(self.tmp, "plain"), "dcqcn", 1, 0.5, monitors=True)
        cap, saved = timeseries_axes(self, os.path.join(self.tmp, "plain"))
        self.assertFalse(any(gid == "link-event" for lines in saved["lines"] for gid, *_ in lines))
        self.assertNotIn("Vertical lines", cap)

    def test_each_monitored_port_is_a_line_of_its_own(self):
        d = os.path.join(self.tmp, "run")
        make_run(d, "dcqcn", 1, 0.5, monitors=True)
        add_link_events(d)
        _, saved = timeseries_axes(self, d)
        ports = {label: (color, ls) for _, _, label, color, ls in saved["lines"][0] if label.endswith("(wire)")}
        self.assertEqual(sorted(ports), sorted(["s0\u2192s3 (wire)", "s0\u2192s2 (wire)",
                                                "s1 port 1\u2192s4 (wire)", "s1 port 2\u2192s4 (wire)"]))
        self.assertEqual(len(set(ports.values())), 4, ports)  # no two share colour and dashes
        # More ports than colours: the dash pattern tells them apart.
        styles = [rp.port_style(i) for i in range(len(rp.PORT_COLORS) * len(rp.PORT_DASHES))]
        self.assertEqual(len(set((s["color"], s["ls"]) for s in styles)), len(styles))
        # Parallel egress queues are separate series too (queues.csv port column).
        with open(os.path.join(d, "queues.csv"), "a", newline="") as f:
            w = csv.writer(f)
            for t in range(50):
                w.writerow([f"{t * 10:.6f}", "s1", 2, "s4", 500, 0, 0, 500, 0, 0, 0, 0])
                w.writerow([f"{t * 10:.6f}", "s1", 3, "s4", 700, 0, 0, 700, 0, 0, 0, 0])
        self.assertEqual(set(rp.read_queues(rp.Run(d))), {"s0\u2192h1", "s1 port 2\u2192s4", "s1 port 3\u2192s4"})

    def test_sweep_lists_drops_by_kind_per_run_when_there_are_any(self):
        d = os.path.join(self.tmp, "sweep")
        make_sweep(d)
        out, _ = report.write_report(d)
        self.assertNotIn("Drops by kind", read(out))  # no drop, no event: no table
        run = sorted(n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n)) and "=" in n)[0]
        with open(os.path.join(d, run, "summary.json")) as f:
            j = json.load(f)
        j["drops"] = {"data_buffer": 0, "control_buffer": 0, "wire": 0, "unroutable": 0, "link_failure": 12}
        j["link_events"] = {"log": LINK_LOG, "route_updates": 2}
        with open(os.path.join(d, run, "summary.json"), "w") as f:
            json.dump(j, f)
        page = read(report.write_report(d)[0])
        self.assertIn('<h2 id="drops">Drops by kind and link events</h2>', page)
        section = page.split('<h2 id="drops">')[1].split("</table>")[0]
        self.assertIn("<th>link_failure</th>", section)
        self.assertRegex(section, f"<td>{re.escape(html_escape(run))}</td>(<td class=\"num\">0</td>){{3}}"
                                  "<td class=\"num\">12</td><td class=\"num\">0</td><td class=\"num\">2</td>")


try:
    BINARY, NO_BINARY = common.rocesim.find_binary(), ""
except common.rocesim.RocesimError as e:
    BINARY, NO_BINARY = None, f"no rocesim binary ({e})"


@unittest.skipIf(BINARY is None, NO_BINARY)
class LinkFailureReport(unittest.TestCase):
    """The report of a real run of scenarios/multipath/link_failure.toml (spine link s0-s2 down at 100 us, up at
    600 us, five monitored ports; < 1 s): the drops by kind as summary.json has them, the events in a table
    and as lines, each monitored port a line of its own."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rocesim_tools_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_report_of_a_run_with_a_link_failure(self):
        run = common.rocesim.run("multipath/link_failure", out=os.path.join(self.tmp, "lf"), binary=BINARY)
        drops = run.summary["drops"]
        self.assertGreater(drops["link_failure"], 0)
        out, figs = report.write_report(run.path)
        page = read(out)
        table = page.split('<h2 id="drops">Drops by kind</h2>')[1].split("</table>")[0]
        self.assertIn(f'<td>link_failure</td><td>packets and PFC frames lost on failed links ([[events]] action = '
                      f'&quot;down&quot;)</td><td class="num">{report.fnum(drops["link_failure"])}</td>', table)
        self.assertIn(f'<td>all</td><td>every kind above</td><td class="num">{report.fnum(sum(drops.values()))}'
                      "</td>", table)
        events = page.split('<h2 id="link-events">Link events</h2>')[1].split("</table>")[0]
        self.assertIn('<td class="num">100</td><td>down s0-s2</td>', events)
        self.assertIn('<td class="num">600</td><td>up s0-s2</td>', events)
        ts = [f for f in figs if f.title == "Rates and queue over time"]
        self.assertEqual(len(ts), 1, [f.title for f in figs])
        self.assertIn("down s0-s2 at 100 \u00b5s", ts[0].caption)
        self.assertIn("up s0-s2 at 600 \u00b5s", ts[0].caption)
        cap, saved = timeseries_axes(self, run.path)
        xs = sorted(float(x[0]) for gid, x, *_ in saved["lines"][0] if gid == "link-event")
        self.assertEqual(xs, [0.1, 0.2, 0.6, 0.7])  # down, routes recomputed, up, routes recomputed (ms)
        ports = {label: (color, ls) for _, _, label, color, ls in saved["lines"][0] if label.endswith("(wire)")}
        self.assertEqual(sorted(ports), sorted(f"{a}\u2192{b} (wire)" for a, b in
                                               (("s0", "s2"), ("s2", "s0"), ("s0", "s3"), ("s0", "s4"), ("s0", "s5"))))
        self.assertEqual(len(set(ports.values())), 5, ports)


@unittest.skipIf(BINARY is None, NO_BINARY)
class CcStateReport(unittest.TestCase):
    """A real run with [monitors] cc_state (a 4:1 DCQCN incast, < 1 s): load() gives cc_state.csv as a typed
    DataFrame with the scheme's variables, and the report draws one figure per monitored flow set."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rocesim_tools_test_")
        scen = os.path.join(self.tmp, "incast.toml")
        text = 'name = "incast"\nduration_ms = 2\n[topology]\nkind = "star"\nhosts = 5\n[cc]\nscheme = "dcqcn"\n'
        for i in range(4):
            cls = "a" if i < 2 else "b"
            text += f'[[flows]]\nsrc = "h{i}"\ndst = "h4"\nsize_bytes = 300000\nclass = "{cls}"\n'
        with open(scen, "w", encoding="utf-8") as f:
            f.write(text)
        self.scen = scen

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_load_and_report(self):
        run = common.rocesim.run(self.scen, out=os.path.join(self.tmp, "r"), binary=BINARY,
                                 set={"monitors.cc_state.classes": ["a", "b"], "monitors.cc_state.period_us": 0})
        r = common.rocesim.load(run.path)
        df = r.cc_state
        self.assertIsNotNone(df)
        self.assertEqual(list(df.columns), ["time_us", "flow", "rate_gbps", "window_bytes", "alpha",
                                            "target_rate_gbps", "stage", "timer_count", "byte_count", "ecn_marks",
                                            "cnps_received"])
        kinds = {c: df[c].dtype.kind for c in df.columns}
        self.assertEqual((kinds["time_us"], kinds["flow"], kinds["rate_gbps"], kinds["cnps_received"],
                          kinds["alpha"]), ("f", "i", "f", "i", "f"))
        self.assertEqual(sorted(set(df["flow"])), [0, 1, 2, 3])
        self.assertGreater(df["cnps_received"].max(), 0)
        self.assertLess(df["rate_gbps"].min(), 100)
        self.assertEqual(r.summary["monitors"]["cc_state"]["variables"][0]["name"], "alpha")
        out, figs = report.write_report(run.path)
        cc = [f for f in figs if f.title.startswith("Congestion-control state over time")]
        self.assertEqual([f.title for f in cc], ["Congestion-control state over time: class 'a'",
                                                 "Congestion-control state over time: class 'b'"])
        page = read(out)
        for f in cc:
            self.assertTrue(os.path.isfile(f.path))
            self.assertIn(f"<h3>{html_escape(f.title)}</h3>", page)
        self.assertIn("alpha: alpha, the congestion estimate", cc[0].caption)



PTRACE_SCENARIO = """name = "ptrace"
seed = 3
duration_ms = 5
[topology]
kind = "dumbbell"
senders = 2
receivers = 3
[switch]
flow_control = "none"
buffer_bytes = 120000
[cc]
scheme = "none"
[monitors]
packet_trace = { flows = [0, 1, 2, 3] }
""" + "".join(f'[[flows]]\nsrc = "h{i}"\ndst = "h4"\nsize_bytes = 150000\nstart_us = {i}\n' for i in range(4))


class PacketCopies(unittest.TestCase):
    """packet_copies splits a flow's rows into the copies of its packets, a retransmission sent while its
    original is still queued included."""

    def test_rows_go_to_the_oldest_copy_at_that_point_of_its_path(self):
        import pandas as pd
        rows = [(0.0, 0, "h0", "s0", "send", "", None, None),
                (1.0, 0, "s0", "s1", "enqueue", "", 0, None),
                (2.0, 0, "h0", "s0", "retransmit", "", None, None),   # the original still waits at s0
                (3.0, 0, "s0", "s1", "enqueue", "", 1000, None),     # the copy joins the same queue
                (4.0, 0, "s0", "s1", "dequeue", "", 1000, 0.5),      # the original leaves
                (4.0, 0, "s0", "s1", "mark", "", None, None),
                (5.0, 0, "s1", "h4", "drop", "buffer", None, None),  # and is dropped at s1
                (6.0, 0, "s0", "s1", "dequeue", "", 0, 0.0),
                (7.0, 0, "h4", "s1", "receive", "in_order", None, None)]
        df = pd.DataFrame(rows, columns=["time_us", "seq", "node", "peer", "event", "detail", "queue_bytes",
                                         "paused_us"])
        first, second = rp.packet_copies(df)
        self.assertEqual((first["retransmit"], second["retransmit"]), (False, True))
        self.assertEqual([(h["t_enq"], h["t_deq"], h["paused_us"]) for h in first["hops"]], [(1.0, 4.0, 0.5)])
        self.assertEqual(first["marks"], [4.0])
        self.assertEqual(first["drop"], (5.0, "buffer"))
        self.assertIsNone(first["receive"])
        self.assertEqual([(h["t_enq"], h["t_deq"]) for h in second["hops"]], [(3.0, 6.0)])
        self.assertEqual(second["receive"], (7.0, "in_order"))


@unittest.skipIf(BINARY is None, NO_BINARY)
class PacketTraceReport(unittest.TestCase):
    """A lossy 4:1 incast with every flow traced (< 1 s): load() gives packet_trace.csv as a typed DataFrame,
    and the report draws one flow's packets, its drops and their retransmissions."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rocesim_tools_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_load_and_the_timeline(self):
        scenario = os.path.join(self.tmp, "ptrace.toml")
        with open(scenario, "w", encoding="utf-8") as f:
            f.write(PTRACE_SCENARIO)
        run = common.rocesim.run(scenario, out=os.path.join(self.tmp, "run"), binary=BINARY)
        df = common.rocesim.load(run.path).packet_trace
        self.assertEqual(list(df.columns), ["time_us", "flow", "seq", "node", "port", "peer", "prio", "event",
                                            "detail", "queue_bytes", "paused_us"])
        self.assertEqual((df["time_us"].dtype.kind, df["flow"].dtype.kind, df["seq"].dtype.kind,
                          df["port"].dtype.kind, df["event"].dtype.kind), ("f", "i", "i", "i", "O"))
        self.assertEqual(set(df["flow"]), {0, 1, 2, 3})
        self.assertEqual(len(df), run.summary["monitors"]["packet_trace"]["rows"])
        drops = df[df["event"] == "drop"]
        self.assertEqual(len(drops), run.summary["drops"]["data_buffer"])
        flow = rp.pick_traced_flow(df)
        copies = rp.packet_copies(df[df["flow"] == flow])
        dropped = {c["seq"] for c in copies if c["drop"]}
        self.assertTrue(dropped)
        self.assertTrue(dropped <= {c["seq"] for c in copies if c["retransmit"]})
        self.assertTrue(dropped <= {c["seq"] for c in copies if c["receive"] and c["receive"][1] == "in_order"})
        out, figs = report.write_report(run.path)
        tl = [f for f in figs if f.title == "Packet timeline"]
        self.assertEqual(len(tl), 1, [f.title for f in figs])
        self.assertIn(f"flow {flow}", tl[0].caption)
        page = read(out)
        self.assertIn("<h3>Packet timeline</h3>", page)
        self.assertIn(html_escape(tl[0].caption), page)


def html_escape(s):
    import html
    return html.escape(s)


if __name__ == "__main__":
    # Every test of tests/tools/ (the ctest entry runs this file).
    suite = unittest.defaultTestLoader.discover(os.path.dirname(os.path.abspath(__file__)), pattern="*_test.py")
    sys.exit(0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1)
