"""Result directories as Python objects: load(DIR) gives a Run (a `rocesim run -o DIR` directory) or a Sweep (a
`rocesim sweep -o DIR` directory). Files are read when first used, by the readers of readers.py."""

import os
from collections.abc import Mapping

from . import readers


class RocesimError(Exception):
    """rocesim failed (a non-zero exit status: the message holds its stderr), or a directory holds no result.
    Attributes: returncode, stdout, stderr, command (the argument list), out (the result directory; with
    exit status 3, a run stopped by a check, it holds the results up to the stop)."""

    def __init__(self, message, returncode=None, stdout="", stderr="", command=None, out=None):
        super().__init__(message)
        self.returncode, self.stdout, self.stderr, self.command, self.out = returncode, stdout, stderr, command, out


def _table(filename):
    reader, attr = readers.RUN_TABLES[filename]

    def get(self):
        if attr not in self._cache:
            p = os.path.join(self.path, filename)
            self._cache[attr] = reader(p) if os.path.isfile(p) else None
        return self._cache[attr]

    return property(get, doc=f"{filename} as a DataFrame (None when the run did not write it).")


class Run:
    """One run directory. Each output is read on first use and kept:

    summary          summary.json (dict)
    scenario         scenario.resolved.toml (dict): every value the run used
    flows            flows.csv (DataFrame)
    queues, input_queues, rates, pfc, cnps, buffer, cc_state, packet_trace
                     the monitor CSVs (DataFrame, None when that monitor was off)
    collectives, collective_steps, job_timeline
                     the jobs' CSVs (DataFrame, None without collective or dependency_trace tables)
    fct_hpcc         fct.txt (DataFrame, None unless written: --fct-format hpcc)

    `point` holds the run's grid values when it comes from a Sweep ({} otherwise)."""

    flows = _table("flows.csv")
    queues = _table("queues.csv")
    input_queues = _table("input_queues.csv")
    rates = _table("rates.csv")
    pfc = _table("pfc.csv")
    cnps = _table("cnps.csv")
    buffer = _table("buffer.csv")
    cc_state = _table("cc_state.csv")
    packet_trace = _table("packet_trace.csv")
    collectives = _table("collectives.csv")
    collective_steps = _table("collective_steps.csv")
    job_timeline = _table("job_timeline.csv")
    fct_hpcc = _table("fct.txt")

    def __init__(self, path, point=None):
        self.path = os.fspath(path)
        if not os.path.isfile(os.path.join(self.path, "summary.json")):
            raise RocesimError(f"{self.path}: not a run directory (no summary.json)")
        self.name = os.path.basename(os.path.normpath(self.path))
        self.point = dict(point or {})
        self.stderr = ""  # rocesim's warnings, when run() made this run
        self._cache = {}

    @property
    def summary(self):
        """summary.json as a dict."""
        if "summary" not in self._cache:
            self._cache["summary"] = readers.read_summary(os.path.join(self.path, "summary.json"))
        return self._cache["summary"]

    @property
    def scenario(self):
        """scenario.resolved.toml as a dict (None when absent)."""
        if "scenario" not in self._cache:
            p = os.path.join(self.path, "scenario.resolved.toml")
            self._cache["scenario"] = readers.read_scenario(p) if os.path.isfile(p) else None
        return self._cache["scenario"]

    @property
    def partial(self):
        """True for an interrupted run (a PARTIAL file; summary.json has "partial": true)."""
        return os.path.isfile(os.path.join(self.path, "PARTIAL"))

    @property
    def complete(self):
        """Every started flow finished (summary.json "complete")."""
        return bool(self.summary.get("complete", False))

    def files(self):
        """The outputs this run holds, by file name."""
        names = ["summary.json", "scenario.resolved.toml", "PARTIAL"] + list(readers.RUN_TABLES)
        return [n for n in names if os.path.isfile(os.path.join(self.path, n))]

    def __repr__(self):
        s = self.summary
        return (f"<rocesim.Run {self.path}: {s.get('scheme', '?')}, seed {s.get('seed', '?')}, "
                f"{s.get('flows', {}).get('finished', '?')} of {s.get('flows', {}).get('started', '?')} flows>")


class _Runs(Mapping):
    """The complete runs of a sweep by name, each read when first looked up."""

    def __init__(self, sweep, names, points):
        self._sweep, self._names, self._points, self._runs = sweep, names, points, {}

    def __getitem__(self, name):
        if name not in self._names:
            raise KeyError(name)
        if name not in self._runs:
            self._runs[name] = Run(os.path.join(self._sweep.path, name), self._points.get(name))
        return self._runs[name]

    def __iter__(self):
        return iter(self._names)

    def __len__(self):
        return len(self._names)

    def __repr__(self):
        return f"<{len(self._names)} runs of {self._sweep.path}: {', '.join(self._names[:4])}" + \
            (", ...>" if len(self._names) > 4 else ">")


class Sweep:
    """One sweep directory:

    results    results.csv (DataFrame): per complete run, a row per size bucket, an "all" row, a row per
               traffic class and a row per job (bucket = job); grid keys, scheme, load, seed, run, bucket,
               class, job and algorithm as text, the rest numbers
    overall    its rows with bucket = all and class = all: one per run
    jobs       its job rows (bucket = job): one per run and job
    manifest   sweep.json (dict: scenario, grid, run names, --set values; {} when absent)
    grid       the grid keys, in order
    runs       {run name: Run} of the complete runs (the `run` column, the directory name), read on first use;
               each Run's `point` holds its grid values"""

    def __init__(self, path):
        self.path = os.fspath(path)
        p = os.path.join(self.path, "results.csv")
        if not os.path.isfile(p):
            raise RocesimError(f"{self.path}: not a sweep directory (no results.csv)")
        self.results = readers.read_results(p)
        m = os.path.join(self.path, "sweep.json")
        self.manifest = readers.read_sweep_manifest(m) if os.path.isfile(m) else {}
        self.grid = [a["key"] for a in self.manifest.get("grid", [])]
        cols = self.results.columns.tolist()
        if not self.grid and "run" in cols:  # no manifest: the columns before "run" are the grid
            self.grid = cols[: cols.index("run")]
        names, points = [], {}
        for row in self.overall.to_dict("records"):
            name = row["run"]
            if name not in points and os.path.isfile(os.path.join(self.path, name, "summary.json")):
                names.append(name)
                points[name] = {k: row.get(k, "") for k in self.grid}
        self.runs = _Runs(self, names, points)
        self.stderr = ""  # rocesim's stderr, when sweep() made this sweep

    @property
    def overall(self):
        """results.csv's rows over every flow of a run (bucket = all, class = all): one per run."""
        r = self.results
        m = r["bucket"] == "all" if "bucket" in r else True
        if "class" in r:
            m = m & (r["class"] == "all")
        return r[m] if m is not True else r

    @property
    def jobs(self):
        """results.csv's job rows (bucket = job): per run and job, its iteration time (mean, p99), algorithm,
        algbw, busbw and exposed communication time."""
        r = self.results
        return r[r["bucket"] == "job"] if "bucket" in r else r.iloc[0:0]

    def __repr__(self):
        return f"<rocesim.Sweep {self.path}: {len(self.runs)} runs, grid {', '.join(self.grid)}>"


def load(path):
    """A result directory: a Sweep when it holds results.csv, a Run when it holds summary.json."""
    path = os.fspath(path)
    if os.path.isfile(os.path.join(path, "results.csv")):
        return Sweep(path)
    if os.path.isfile(os.path.join(path, "summary.json")):
        return Run(path)
    raise RocesimError(f"{path}: holds neither a run (summary.json) nor a sweep (results.csv)")
