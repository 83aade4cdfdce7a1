"""Running the rocesim binary from Python: run() and sweep() call `rocesim run` / `rocesim sweep` and return
the result directory as a Run / Sweep."""

import numbers
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping

from .results import RocesimError, Run, Sweep

# The checkout this package lives in (python/rocesim/cli.py -> the repository root).
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_binary(binary=None):
    """The rocesim program: `binary` when given, else $ROCESIM_BIN, else build/rocesim of the checkout this
    package is in, else `rocesim` on the PATH."""
    for what, cand in (("binary", binary), ("ROCESIM_BIN", os.environ.get("ROCESIM_BIN"))):
        if cand:
            exe = cand if os.path.isfile(cand) else shutil.which(cand)
            if exe and os.access(exe, os.X_OK):
                return os.path.abspath(exe)
            raise RocesimError(f"{what} {cand}: no such executable")
    local = os.path.join(REPO, "build", "rocesim")
    if os.path.isfile(local) and os.access(local, os.X_OK):
        return local
    on_path = shutil.which("rocesim")
    if on_path:
        return on_path
    raise RocesimError(f"no rocesim binary: set ROCESIM_BIN, build {local} (make build-rocesim) or put rocesim "
                       "on the PATH")


def toml_value(v):
    """A Python value as the text of a --set or --grid value: bools as true/false, numbers as Python writes
    them, lists as TOML arrays; a string as it is (TOML syntax, where a bare word is a string)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return repr(float(v))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join('"' + x.replace("\\", "\\\\").replace('"', '\\"') + '"' if isinstance(x, str)
                               else toml_value(x) for x in v) + "]"
    return str(v)


def overrides(values):
    """--set values from {key: value} or a list of "key=value" strings."""
    if values is None:
        return []
    if isinstance(values, str):
        return [values]
    if isinstance(values, Mapping):
        return [f"{k}={toml_value(v)}" for k, v in values.items()]
    return [str(s) for s in values]


def grid_axes(grid):
    """--grid axes from {key: [values]} (or one value) or a list of "key=v1,v2" strings."""
    if isinstance(grid, str):
        return [grid]
    if isinstance(grid, Mapping):
        out = []
        for k, vals in grid.items():
            vals = list(vals) if isinstance(vals, (list, tuple, range)) else [vals]
            out.append(f"{k}=" + ",".join(toml_value(v) for v in vals))
        return out
    return [str(a) for a in grid]


def _call(cmd, out, timeout):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if p.returncode != 0:
        err = p.stderr.strip() or p.stdout.strip()
        raise RocesimError(f"rocesim {cmd[1]} failed (exit status {p.returncode}): {err}", p.returncode, p.stdout,
                           p.stderr, cmd, out)
    return p


def run(scenario, out=None, set=None, threads=None, check=False, binary=None, *, fct_hpcc=False, force=False,
        args=(), timeout=None):
    """Runs `rocesim run SCENARIO -q -o OUT` and returns the result as a Run.

    scenario  a scenario file, or a name under scenarios/ ("examples/guide")
    out       the result directory (default: a new temporary directory, left for you to remove)
    set       overrides: {"cc.scheme": "none", "traffic[0].load": 0.5} or ["cc.scheme=none", ...] (--set)
    threads   --threads (0 = every core); check: --check (invariant checks)
    binary    the rocesim program (default: find_binary())
    fct_hpcc  also write fct.txt (--fct-format hpcc); force: replace OUT if it holds results
    args      more command-line arguments; timeout: seconds before the run is killed

    A non-zero exit status raises RocesimError, whose message holds rocesim's stderr (and whose `out` is the
    directory, which holds the results of a run stopped by a check, exit status 3). The Run's `stderr` holds
    the warnings of a successful run."""
    exe = find_binary(binary)
    out = os.fspath(out) if out is not None else tempfile.mkdtemp(prefix="rocesim-run-")
    cmd = [exe, "run", os.fspath(scenario), "-q", "-o", out]
    for s in overrides(set):
        cmd += ["--set", s]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    if check:
        cmd.append("--check")
    if fct_hpcc:
        cmd += ["--fct-format", "hpcc"]
    if force:
        cmd.append("--force")
    cmd += [str(a) for a in args]
    p = _call(cmd, out, timeout)
    r = Run(out)
    r.stderr = p.stderr
    return r


def sweep(scenario, grid, out=None, jobs=None, set=None, threads=None, binary=None, *, force=False, args=(),
          timeout=None):
    """Runs `rocesim sweep SCENARIO -q -o OUT --grid ...` and returns the result as a Sweep.

    grid      {"scheme": ["dcqcn", "none"], "load": [0.3, 0.6]} or ["scheme=dcqcn,none", "load=0.3,0.6"]
    out       the sweep directory (default: a new temporary directory); a sweep already there is resumed
    jobs      runs at once (-j; default 1); threads: --threads of each run
    set, binary, force, args, timeout: as for run()

    A non-zero exit status (a run failed: its log is in OUT/logs/) raises RocesimError with rocesim's output;
    results.csv then holds the complete runs."""
    exe = find_binary(binary)
    out = os.fspath(out) if out is not None else tempfile.mkdtemp(prefix="rocesim-sweep-")
    cmd = [exe, "sweep", os.fspath(scenario), "-q", "-o", out]
    if jobs is not None:
        cmd += ["-j", str(jobs)]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    for s in overrides(set):
        cmd += ["--set", s]
    if force:
        cmd.append("--force")
    cmd += [str(a) for a in args]
    cmd += ["--grid"] + grid_axes(grid)
    p = _call(cmd, out, timeout)
    sw = Sweep(out)
    sw.stderr = p.stderr
    return sw
