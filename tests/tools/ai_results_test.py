"""AI results on real runs of the simulator: a sweep of a ring all-reduce over its message size and the
switches' routing (results.csv's job rows, the sweep's jobs table, `rocesim report`'s bus bandwidth and
iteration time figures), and a dependency trace with compute and a named collective (flows.csv's name column,
collectives.csv's trace_id rows, job_timeline.csv and the report's per-host timeline).

Run by tools_test.py (the ctest entry Tools.PythonUnitTests runs every *_test.py here), or directly:
/usr/bin/python3 -m unittest discover -s tests/tools -p 'ai_results_test.py'. Needs the simulator ($ROCESIM_BIN,
else build/rocesim, else rocesim on the PATH); skipped without one."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "tools"))
import rocesim  # noqa: E402

import rocesim_plots as rp  # noqa: E402

try:
    BINARY = rocesim.find_binary()
    NO_BINARY = ""
except rocesim.RocesimError as e:
    BINARY, NO_BINARY = None, f"no rocesim binary ({e})"

needs_binary = unittest.skipIf(BINARY is None, NO_BINARY)

# 4 hosts on 2 leaves and 2 spines at 100 Gb/s: a ring all-reduce of 3 iterations, 5 us of compute between.
RING = """name = "ai_ring"
duration_ms = 100
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
[cc]
scheme = "dcqcn"
[[traffic]]
pattern = "collective"
collective = "ring_allreduce"
bytes = 40000
iterations = 3
compute_us = 5
job = "ar"
"""

# A trace: grad0 waits for fwd0 plus 7 us of compute on h1; side runs beside them. fwd0 and grad0 belong
# to the trace's collective "step1".
TRACE = """id,src,dst,bytes,start_us,after,delay_us,collective
fwd0,h0,h1,200000,0,,,step1
grad0,h1,h2,100000,,fwd0,7,step1
side,h3,h0,300000,0,,,
"""


def sh(args):
    p = subprocess.run([BINARY] + args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"rocesim {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


@needs_binary
class AiResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rocesim_ai_results_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, name, text):
        p = os.path.join(self.tmp, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def test_sweep_over_bytes_and_routing_has_job_rows_a_jobs_table_and_the_figures(self):
        scenario = self.write("ring.toml", RING)
        out = os.path.join(self.tmp, "sweep")
        table = sh(["sweep", scenario, "--grid", "switch.routing=ecmp,spray", "traffic[0].bytes=40000,400000",
                    "-j", "2", "-o", out])
        sw = rocesim.load(out)
        jobs = sw.jobs
        self.assertEqual(len(jobs), 4)  # one per run: one job each
        for col in ("job", "algorithm", "ranks", "bytes_per_rank", "iterations", "iteration_mean_us",
                    "iteration_p99_us", "algbw_gbps", "busbw_gbps", "comm_us", "exposed_comm_us"):
            self.assertIn(col, sw.results.columns)
        # The other rows leave the job columns empty, and the job rows are not in `overall`.
        self.assertTrue(sw.overall["job"].eq("").all() if sw.overall["job"].dtype == object
                        else sw.overall["job"].isna().all())
        self.assertEqual(len(sw.overall), 4)
        for row in jobs.to_dict("records"):
            j = rocesim.load(os.path.join(out, row["run"])).summary["jobs"][0]
            self.assertEqual(row["job"], "ar")
            self.assertEqual(row["algorithm"], "ring_allreduce")
            self.assertEqual(row["class"], "all")
            self.assertEqual(row["ranks"], 4)
            self.assertEqual(row["bytes_per_rank"], int(row["traffic[0].bytes"]))
            self.assertEqual(row["iterations"], 3)
            self.assertAlmostEqual(row["iteration_mean_us"], j["iteration_us"]["mean"], places=6)
            self.assertAlmostEqual(row["iteration_p99_us"], j["iteration_us"]["p99"], places=6)
            self.assertAlmostEqual(row["busbw_gbps"], row["algbw_gbps"] * 2 * 3 / 4, places=6)
            # A collective has no compute inside its iterations: all its communication is exposed.
            self.assertAlmostEqual(row["exposed_comm_us"], row["comm_us"], places=6)
            # p99 of 3 iterations (nearest rank) is the slowest one, from collectives.csv.
            coll = rocesim.load(os.path.join(out, row["run"])).collectives
            self.assertAlmostEqual(row["iteration_p99_us"], coll["duration_us"].max(), places=5)
        big = jobs[jobs["bytes_per_rank"] == 400000]["busbw_gbps"]
        small = jobs[jobs["bytes_per_rank"] == 40000]["busbw_gbps"]
        self.assertGreater(big.min(), small.max())  # larger messages amortise the per-step latency
        # The table on stdout has a line per run and job.
        self.assertIn("exposed comm (us)", table)
        self.assertEqual(sum(1 for line in table.splitlines() if " ar " in line and "ring_allreduce" in line), 4)

        sh(["report", out])
        figures = os.listdir(os.path.join(out, "figures"))
        self.assertIn("busbw_vs_bytes.png", figures)
        self.assertIn("iteration_time.png", figures)
        with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
            html = f.read()
        self.assertIn("Bus bandwidth vs message size", html)
        self.assertIn("Iteration time per scheme and routing", html)
        self.assertIn('id="jobs"', html)
        # The series of the busbw figure leave the size out: one line per routing.
        s = rp.Sweep(out)
        self.assertEqual(sorted({rp.job_series(s, r, rp.bytes_keys(s)) for r in s.job_rows}),
                         ["dcqcn, routing=ecmp", "dcqcn, routing=spray"])

    def test_trace_keeps_its_ids_and_the_report_draws_its_timeline(self):
        trace = self.write("t.csv", TRACE)
        scenario = self.write("trace.toml", RING.split("[[traffic]]")[0] +
                              f'[[traffic]]\npattern = "dependency_trace"\nfile = "{trace}"\njob = "tr"\n')
        out = os.path.join(self.tmp, "run")
        sh(["run", scenario, "-q", "-o", out])
        r = rocesim.load(out)
        self.assertEqual(sorted(r.flows["name"].tolist()), ["fwd0", "grad0", "side"])
        by_name = r.flows.set_index("name")
        self.assertEqual(by_name.loc["grad0", "size_bytes"], 100000)
        self.assertEqual(set(r.flows["class"]), {"tr"})
        j = r.summary["jobs"][0]
        self.assertAlmostEqual(j["compute_us"], 7.0, places=6)
        # grad0's compute on h1 overlaps side's transfer: less is exposed than communicated.
        self.assertLess(j["exposed_comm_us"], j["comm_us"])
        tl = r.job_timeline
        self.assertEqual(set(tl["activity"]), {"comm", "compute"})
        compute = tl[tl["activity"] == "compute"]
        self.assertEqual(len(compute), 1)
        self.assertAlmostEqual(float(compute["finish_us"].iloc[0] - compute["start_us"].iloc[0]), 7.0, places=6)
        # collectives.csv: the iteration's row, then the trace's collective (its id in trace_id).
        coll = r.collectives
        self.assertEqual(coll["trace_id"].tolist(), ["", "step1"])
        self.assertEqual(coll["bytes"].tolist(), [600000, 300000])
        self.assertEqual(rp.job_iterations(rp.Run(out))["tr"], [coll["duration_us"].iloc[0]])
        sh(["report", out])
        self.assertIn("job_timeline.png", os.listdir(os.path.join(out, "figures")))
        with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
            self.assertIn("Per-host timeline of one iteration", f.read())


if __name__ == "__main__":
    unittest.main()
