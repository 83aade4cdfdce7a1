"""Tests of the rocesim Python package (python/rocesim) on real runs of the simulator: load() of a run, a sweep
and every output file with its types, the one percentile rule against the C++ values of summary.json,
run() and sweep() and their errors, the package's pip build, and that the tools and scenario scripts read
results only through the package.

Run by tools_test.py (the ctest entry Tools.PythonUnitTests runs every *_test.py here), or directly:
/usr/bin/python3 -m unittest discover -s tests/tools -p '*_test.py'. The tests that need the simulator use
$ROCESIM_BIN, else build/rocesim, else rocesim on the PATH, and are skipped (saying so) without one."""

import glob
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from fractions import Fraction

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import rocesim  # noqa: E402
from rocesim import cli  # noqa: E402

try:
    BINARY = rocesim.find_binary()
    NO_BINARY = ""
except rocesim.RocesimError as e:
    BINARY, NO_BINARY = None, f"no rocesim binary ({e})"
if NO_BINARY:
    print(f"package_test: skipping the tests that run the simulator: {NO_BINARY}", file=sys.stderr)

needs_binary = unittest.skipIf(BINARY is None, NO_BINARY)

# A small run with every monitor (examples/guide at a higher load, ~170 flows, < 1 s) and fct.txt.
GUIDE_SETS = {"traffic[0].load": 0.5, "traffic[0].stop_us": 3000}


class Percentile(unittest.TestCase):
    def test_nearest_rank_in_exact_arithmetic(self):
        v = list(range(1, 11))
        self.assertEqual(rocesim.nearest_rank(v, 0.3), 3)  # 0.3 * 10 = 3.0000000000000004 in floating point
        self.assertEqual(rocesim.nearest_rank(v, 0.05), 1)
        self.assertEqual(rocesim.nearest_rank(v, 1.0), 10)
        self.assertEqual(rocesim.nearest_rank(list(range(1, 1001)), Fraction(999, 1000)), 999)
        self.assertEqual(rocesim.nearest_rank(list(range(1, 101)), 0.99), 99)
        self.assertEqual(rocesim.nearest_rank(list(range(1, 101)), 0.999), 100)
        # Any sequence: a numpy array, a pandas Series, a generator; NaN left out; unsorted input.
        self.assertEqual(rocesim.nearest_rank(np.array([3.0, 1.0, 2.0]), 0.5), 2.0)
        self.assertEqual(rocesim.nearest_rank(pd.Series([3.0, np.nan, 1.0, 2.0]), 0.5), 2.0)
        self.assertEqual(rocesim.nearest_rank((x for x in [5, 4]), 0.5), 4)
        self.assertTrue(math.isnan(rocesim.nearest_rank([], 0.99)))
        self.assertTrue(math.isnan(rocesim.nearest_rank(np.array([np.nan]), 0.5)))

    def test_cdf_quantile(self):
        b, c = [0, 1000, 5000], [0.5, 0.9, 1.0]
        self.assertEqual(rocesim.cdf_quantile(b, c, 0.5), 0.0)
        self.assertEqual(rocesim.cdf_quantile(b, c, 0.51), 1000.0)
        self.assertEqual(rocesim.cdf_quantile(b, c, 0.99), 5000.0)
        self.assertTrue(math.isnan(rocesim.cdf_quantile([], [], 0.5)))

    def test_every_tool_uses_the_packages_rule(self):
        sys.path.insert(0, os.path.join(REPO, "tools"))
        import reproduce
        import rocesim_common
        import rocesim_plots
        for m in (rocesim_common, rocesim_plots, reproduce):
            self.assertIs(m.nearest_rank, rocesim.nearest_rank, m.__name__)


class ToolsReadThroughThePackage(unittest.TestCase):
    """One reader per file and one percentile rule: no tool or scenario script parses a result file or computes
    a percentile itself."""

    RESULT_FILES = ("summary.json", "results.csv", "sweep.json", "scenario.resolved.toml", "fct.txt") + tuple(
        rocesim.readers.RUN_TABLES)
    FORBIDDEN = [r"\bimport csv\b", r"DictReader", r"\bpercentile\(", r"\.quantile\(", r"def (pct|nearest_rank)\b",
                 r"open\([^)]*(" + "|".join(re.escape(f) for f in RESULT_FILES) + ")"]

    def test_no_reader_of_their_own(self):
        files = glob.glob(os.path.join(REPO, "tools", "*.py")) + glob.glob(
            os.path.join(REPO, "scenarios", "**", "*.py"), recursive=True)
        self.assertGreaterEqual(len(files), 8)
        for path in files:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for pat in self.FORBIDDEN:
                m = re.search(pat, text)
                self.assertIsNone(m, f"{os.path.relpath(path, REPO)}: {m and m.group(0)!r}: read result files with "
                                     "the rocesim package (python/rocesim) and take percentiles from "
                                     "rocesim.nearest_rank")


@needs_binary
class LoadARun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rocesim_package_test_")
        cls.guide = rocesim.run("examples/guide", out=os.path.join(cls.tmp, "guide"), set=GUIDE_SETS, fct_hpcc=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def test_load_gives_a_run_with_every_output(self):
        r = rocesim.load(self.guide.path)
        self.assertIsInstance(r, rocesim.Run)
        s = r.summary
        self.assertEqual(s["scheme"], "dcqcn")
        self.assertEqual(r.scenario["cc"]["scheme"], "dcqcn")
        self.assertEqual(r.scenario["traffic"][0]["load"], 0.5)  # the --set value reached the run
        self.assertFalse(r.partial)
        self.assertEqual(len(r.flows), s["flows"]["finished"])
        self.assertGreater(len(r.flows), 100)
        for name in ("queues", "rates", "pfc", "cnps", "buffer", "fct_hpcc"):
            self.assertIsInstance(getattr(r, name), pd.DataFrame, name)
            self.assertGreater(len(getattr(r, name)), 0, name)
        for name in ("input_queues", "collectives", "collective_steps"):
            self.assertIsNone(getattr(r, name), name)
        self.assertEqual(set(r.files()), {"summary.json", "scenario.resolved.toml", "flows.csv", "queues.csv",
                                          "rates.csv", "pfc.csv", "cnps.csv", "buffer.csv", "fct.txt"})
        self.assertIs(r.flows, r.flows)  # read once

    def test_columns_are_typed(self):
        r = rocesim.load(self.guide.path)

        def kinds(df):
            return {c: df[c].dtype.kind for c in df.columns}

        self.assertEqual(kinds(r.flows), {"id": "i", "src": "i", "dst": "i", "size_bytes": "i", "start_us": "f",
                                          "finish_us": "f", "fct_us": "f", "ideal_fct_us": "f", "slowdown": "f",
                                          "class": "O", "name": "O"})
        self.assertEqual(set(r.flows["class"]), {"background", "incast", "long"})
        self.assertEqual(set(r.flows["name"]), {""})  # no trace: no flow has a name of its own
        q = kinds(r.queues)
        self.assertEqual((q["time_us"], q["node"], q["port"], q["queue_bytes"], q["prio3_bytes"]),
                         ("f", "O", "i", "i", "i"))
        self.assertEqual(kinds(r.rates), {"time_us": "f", "kind": "O", "id": "O", "gbps": "f"})
        self.assertEqual(set(r.rates["kind"]), {"flow", "port"})
        self.assertIn("s1:h15", set(r.rates["id"]))
        p = kinds(r.pfc)
        self.assertEqual((p["time_us"], p["port"], p["prio"], p["event"], p["duration_us"]), ("f", "i", "i", "O", "f"))
        pauses = r.pfc[r.pfc["event"] == "pause"]
        self.assertTrue(pauses["duration_us"].isna().all())  # an empty cell is NaN
        self.assertEqual(len(pauses), r.summary["monitors"]["pfc"]["pause_events"])
        self.assertEqual(set(kinds(r.cnps).values()), {"i"})
        # cnps.csv counts the CNP packets that reached each flow's sender: summary.json's "cnp" counts them too.
        cnp = r.summary["cnp"]
        self.assertGreater(cnp["received"], 0)
        self.assertEqual(int(r.cnps["cnps_received"].sum()),
                         cnp["received_from_receivers"] + cnp["received_from_switches"])
        self.assertEqual(int(r.cnps["cnps_from_switches"].sum()), cnp["received_from_switches"])
        self.assertGreater(r.summary["ecn"]["marked"], 0)
        self.assertEqual(kinds(r.buffer), {"switch": "O", "buffer_bytes": "i", "cdf": "f"})
        self.assertTrue((r.buffer.groupby("switch")["cdf"].max() == 1.0).all())
        # fct.txt: the same flows, with the node ids its addresses stand for.
        h = r.fct_hpcc
        self.assertEqual(len(h), len(r.flows))
        self.assertEqual(h["size_bytes"].dtype.kind, "i")
        both = r.flows.merge(h, left_on=["src", "dst", "size_bytes"], right_on=["src", "dst", "size_bytes"])
        self.assertEqual(len(both), len(r.flows))
        self.assertTrue(((both["start_us"] * 1000).astype("int64") - both["start_ns"]).abs().max() <= 1)

    def test_percentiles_are_the_simulators(self):
        """nearest_rank over flows.csv gives summary.json's percentiles (the C++ values) for every flow, every
        size bucket and every class; a linear-interpolation percentile would not."""
        r = rocesim.load(self.guide.path)
        fct, f = r.summary["fct"], r.flows
        groups = [("all", f, fct)]
        for b in fct["buckets"]:
            m = f["size_bytes"] >= b["min_bytes"]
            if b["max_bytes"] is not None:
                m &= f["size_bytes"] <= b["max_bytes"]
            groups.append((b["label"], f[m], b))
        groups += [(c, f[f["class"] == c], v) for c, v in fct["classes"].items()]
        checked, other_rule_differs = 0, False
        for label, rows, stats in groups:
            self.assertEqual(len(rows), stats["count"], label)
            if not len(rows):
                continue
            for q, key in ((Fraction(1, 2), "p50"), (Fraction(95, 100), "p95"), (Fraction(99, 100), "p99"),
                           (Fraction(999, 1000), "p999")):
                # FCTs are exact in flows.csv (to the picosecond); slowdowns have 6 decimals.
                want = stats["fct_us"][key]
                self.assertAlmostEqual(rocesim.nearest_rank(rows["fct_us"], q), want, delta=1e-9 * want,
                                       msg=f"{label} fct {key}")
                self.assertAlmostEqual(rocesim.nearest_rank(rows["slowdown"], float(q)), stats["slowdown"][key],
                                       delta=1e-6, msg=f"{label} slowdown {key}")
                other = np.percentile(rows["fct_us"].to_numpy(), float(q) * 100)
                other_rule_differs |= abs(other - want) > 1e-6 * want
                checked += 1
        self.assertGreaterEqual(checked, 4 * 8)
        self.assertTrue(other_rule_differs)


@needs_binary
class RunAndSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rocesim_package_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp, True)

    def test_run_with_overrides_threads_and_check(self):
        one = rocesim.run("examples/guide", out=os.path.join(self.tmp, "one"),
                          set={"cc.scheme": "none", "monitors.pfc": False, "traffic[0].load": 0.25})
        self.assertEqual(one.summary["scheme"], "none")
        self.assertIsNone(one.pfc)
        self.assertEqual(one.scenario["traffic"][0]["load"], 0.25)
        two = rocesim.run("examples/guide", out=os.path.join(self.tmp, "two"),
                          set=["cc.scheme=none", "monitors.pfc=false", "traffic[0].load=0.25"], threads=2, check=True)
        self.assertIn("checks", two.summary)
        self.assertEqual(two.summary["performance"]["parallel"]["threads"], 2)
        pd.testing.assert_frame_equal(one.flows, two.flows)  # the same results on any number of threads

    def test_run_into_a_temporary_directory(self):
        r = rocesim.run(os.path.join(REPO, "scenarios", "examples", "guide.toml"), set={"duration_ms": 0.3})
        try:
            self.assertTrue(os.path.isfile(os.path.join(r.path, "summary.json")))
            self.assertTrue(0.25 < r.summary["simulated_time_ms"] <= 0.3, r.summary["simulated_time_ms"])
        finally:
            shutil.rmtree(r.path)

    def test_a_bad_key_raises_with_rocesims_message(self):
        with self.assertRaises(rocesim.RocesimError) as e:
            rocesim.run("examples/guide", out=os.path.join(self.tmp, "bad"), set={"switch.kmin_byte": 1000})
        self.assertEqual(e.exception.returncode, 2)
        self.assertIn("unknown key 'switch.kmin_byte'", str(e.exception))
        self.assertIn("did you mean 'kmin_bytes'?", e.exception.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "bad")))
        with self.assertRaises(rocesim.RocesimError) as e:
            rocesim.run("no/such/scenario", out=os.path.join(self.tmp, "bad"))
        self.assertEqual(e.exception.returncode, 2)

    def test_sweep_loads_results_and_runs(self):
        out = os.path.join(self.tmp, "sweep")
        sw = rocesim.sweep("examples/guide", grid={"scheme": ["dcqcn", "none"], "load": [0.2, 0.4]}, out=out,
                           jobs=2, set={"duration_ms": 2})
        self.assertIsInstance(sw, rocesim.Sweep)
        self.assertEqual(sw.grid, ["scheme", "load"])
        names = ["scheme=dcqcn,load=0.2", "scheme=dcqcn,load=0.4", "scheme=none,load=0.2", "scheme=none,load=0.4"]
        self.assertEqual(list(sw.runs), names)
        self.assertEqual(len(sw.overall), 4)
        res = sw.results
        self.assertEqual(res["load"].tolist()[0], "0.2")  # grid values as written: they name the runs
        for c in ("count", "flows_finished", "complete", "pauses", "cnps", "drops"):
            self.assertEqual(res[c].dtype.kind, "i", c)
        for c in ("fct_p99_us", "slowdown_p99", "simulated_ms", "wall_seconds", "max_bytes"):
            self.assertEqual(res[c].dtype.kind, "f", c)
        self.assertEqual(set(res["class"]), {"all", "background", "incast", "long"})
        r = sw.runs["scheme=none,load=0.4"]
        self.assertEqual(r.point, {"scheme": "none", "load": "0.4"})
        self.assertEqual(r.summary["scheme"], "none")
        row = sw.overall[sw.overall["run"] == r.name].iloc[0]
        self.assertEqual(row["count"], len(r.flows))
        self.assertEqual(row["slowdown_p99"], r.summary["fct"]["slowdown"]["p99"])
        self.assertIsInstance(rocesim.load(out), rocesim.Sweep)
        # The same command again resumes (everything is complete): the same results.
        again = rocesim.sweep("examples/guide", grid=["scheme=dcqcn,none", "load=0.2,0.4"], out=out,
                              set=["duration_ms=2"])
        pd.testing.assert_frame_equal(again.results.drop(columns="wall_seconds"),
                                      sw.results.drop(columns="wall_seconds"))

    def test_a_failing_sweep_raises(self):
        with self.assertRaises(rocesim.RocesimError) as e:
            rocesim.sweep("examples/guide", grid={"switch.kmin_bytes": [400000, 2000000]},
                          out=os.path.join(self.tmp, "x"), set={"duration_ms": 1})
        self.assertEqual(e.exception.returncode, 1)
        self.assertIn("kmax_bytes: must be >= kmin_bytes", e.exception.stdout + e.exception.stderr)
        self.assertIn("1 of 2 runs failed", str(e.exception))
        part = rocesim.load(e.exception.out)  # results.csv holds the complete run
        self.assertEqual(list(part.runs), ["switch.kmin_bytes=400000"])

    def test_collectives_and_input_queues(self):
        ai = rocesim.run("ai/ring_websearch", out=os.path.join(self.tmp, "ai"), set={"duration_ms": 1})
        c, st = ai.collectives, ai.collective_steps
        self.assertEqual(list(c.columns[:5]), ["job", "collective", "ranks", "iteration", "bytes"])
        self.assertEqual((c["ranks"].dtype.kind, c["finish_us"].dtype.kind), ("i", "f"))
        self.assertTrue(c["finish_us"].isna().any())  # the iteration the end of the run cut short
        self.assertEqual((st["step"].dtype.kind, st["flows"].dtype.kind), ("i", "i"))
        iq = rocesim.run("examples/guide", out=os.path.join(self.tmp, "iq"),
                         set={"switch.model": "input_output_queued", "switch.input_queue_bytes": 400000,
                              "monitors.input_queue_ports": ["all"], "duration_ms": 0.5})
        self.assertEqual(list(iq.input_queues.columns), ["time_us", "node", "port", "peer", "queue_bytes"])
        self.assertGreater(iq.input_queues["queue_bytes"].max(), 0)


class Errors(unittest.TestCase):
    def test_load_of_a_directory_without_results(self):
        d = tempfile.mkdtemp(prefix="rocesim_package_test_")
        self.addCleanup(shutil.rmtree, d, True)
        with self.assertRaises(rocesim.RocesimError) as e:
            rocesim.load(d)
        self.assertIn("holds neither a run (summary.json) nor a sweep (results.csv)", str(e.exception))

    def test_an_unusable_binary_is_named(self):
        with self.assertRaises(rocesim.RocesimError) as e:
            rocesim.find_binary("/nonexistent/rocesim")
        self.assertIn("/nonexistent/rocesim", str(e.exception))
        old = os.environ.get("ROCESIM_BIN")
        os.environ["ROCESIM_BIN"] = "/nonexistent/rocesim2"
        try:
            with self.assertRaises(rocesim.RocesimError) as e:
                rocesim.run("examples/guide")
            self.assertIn("ROCESIM_BIN /nonexistent/rocesim2", str(e.exception))
        finally:
            if old is None:
                del os.environ["ROCESIM_BIN"]
            else:
                os.environ["ROCESIM_BIN"] = old

    def test_values_on_the_command_line(self):
        self.assertEqual(cli.overrides({"a": True, "b": 0.3, "c": np.int64(7), "d": "dcqcn", "e": ["all", 2]}),
                         ["a=true", "b=0.3", "c=7", "d=dcqcn", 'e=["all", 2]'])
        self.assertEqual(cli.overrides("a=1"), ["a=1"])
        self.assertEqual(cli.grid_axes({"scheme": ["dcqcn", "none"], "load": (0.3, 0.5), "seed": range(1, 3)}),
                         ["scheme=dcqcn,none", "load=0.3,0.5", "seed=1,2"])
        self.assertEqual(cli.grid_axes({"seed": 4}), ["seed=4"])


class Packaging(unittest.TestCase):
    def test_pip_builds_the_package_with_debians_setuptools(self):
        """What `pip install --no-build-isolation --no-deps -e python/` needs (docs/user-guide.md, "From
        Python"), checked by building a wheel from a copy of python/ (nothing is installed, nothing is written
        in the checkout)."""
        probe = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("pip is not installed (Debian: python3-pip)")
        tmp = tempfile.mkdtemp(prefix="rocesim_package_test_")
        self.addCleanup(shutil.rmtree, tmp, True)
        src = os.path.join(tmp, "python")
        shutil.copytree(os.path.join(REPO, "python"), src, ignore=shutil.ignore_patterns("__pycache__", "build",
                                                                                          "*.egg-info"))
        p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
                            "-w", os.path.join(tmp, "dist"), src], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        wheels = glob.glob(os.path.join(tmp, "dist", "rocesim-*.whl"))
        self.assertEqual(len(wheels), 1, wheels)
        names = zipfile.ZipFile(wheels[0]).namelist()
        for m in ("__init__", "readers", "results", "stats", "cli"):
            self.assertIn(f"rocesim/{m}.py", names)
        self.assertIn(f"rocesim-{rocesim.__version__}", os.path.basename(wheels[0]))


if __name__ == "__main__":
    unittest.main(verbosity=1)
