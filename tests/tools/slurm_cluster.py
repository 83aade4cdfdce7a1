"""The sbatch scripts of docs/cluster.md ("With Slurm": sweep.sbatch, run.sbatch) run under a one-node Slurm.

The test writes a private slurm.conf (one node: this host by its short name, more CPUs declared than it has),
a munge key, starts munged, slurmctld and slurmd on 127.0.0.1 with their state, spool, logs and sockets under
a temporary directory and on free ports (never the system's Slurm or munge), submits each script as the
document has it (its text extracted from docs/cluster.md, so a change there is what runs here), waits for the
job, checks its results, and always stops the daemons and whatever they started.

What it cannot check on one node: several nodes (the documented 4 nodes are overridden on the sbatch command
line: --nodes=1 and the tasks or CPUs per task that fit; options given to sbatch take precedence over the
script's #SBATCH lines), so neither Open MPI starting its daemons on other nodes through srun nor a file
system shared between nodes is tested. The jobs run from a directory whose scenarios/ holds the documented
scenario files shortened (fewer arrivals, a smaller fat-tree), so that the 40 runs of the sweep take seconds.

Run by ctest (Cluster.SbatchScriptsRunUnderSlurm, CMakeLists.txt), or directly:
  /usr/bin/python3 tests/tools/slurm_cluster.py build/rocesim [--no-mpi]
Exits 0 when the scripts worked, 77 (ctest's skip) with the reason printed when Slurm, munge or Open MPI is
not installed or the daemons cannot start here (the daemons' log tails printed), 1 on a failure."""

import csv
import itertools
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = os.path.join(REPO, "docs", "cluster.md")
SKIP = 77
# The commands the test needs: the daemons, the clients it calls, and Open MPI's launcher the scripts call.
COMMANDS = ["munged", "slurmctld", "slurmd", "sbatch", "scontrol", "scancel", "mpirun"]
PACKAGES = "slurm-wlm, munge and openmpi-bin (scripts/setup installs them)"
# The documented allocations (4 nodes of 32 cores) cut to one node of this machine.
OVERRIDES = {"sweep.sbatch": ["--nodes=1", "--ntasks-per-node=3"],  # rank 0 and 2 ranks that run
             "run.sbatch": ["--nodes=1", "--cpus-per-task=2"]}  # one rank of 2 threads
# The documented scenarios shortened: (pattern, replacement) on the scenario file's text, each of which must
# match once (so that a change of the scenario shows here rather than as a slow test).
SHORTEN = {"scenarios/mercury/small_hadoop.toml": [(r"(?m)^stop_us = 20000$", "stop_us = 1000")],
           "scenarios/rcm/fattree.toml": [(r"(?m)^k = 12$", "k = 4"), (r"(?m)^groups = 12$", "groups = 4"),
                                          (r"(?m)^stop_us = 1000$", "stop_us = 100")]}
JOB_SECONDS = 240  # the longest a job may take before the test fails (each takes seconds; ctest allows 600 s)
DONE = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
        "PREEMPTED"}


class Skip(Exception):
    pass


class Failure(Exception):
    pass


def doc_script(name):
    """The fenced block that follows the paragraph naming `name` in docs/cluster.md."""
    text = open(DOC).read()
    at = text.find(f"`{name}`")
    if at < 0:
        raise Failure(f"{DOC} does not name `{name}`")
    m = re.compile(r"^```\n(.*?)^```$", re.S | re.M).search(text, at)
    if not m or not m.group(1).startswith("#!/bin/bash\n"):
        raise Failure(f"{DOC}: no #!/bin/bash block after `{name}`")
    return m.group(1)


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"({e})\n"


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def die_with_parent():
    """In a daemon's child before exec: SIGTERM when the test's process ends, however it ends."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Cluster:
    """munged, slurmctld and slurmd of a private one-node Slurm under `root`."""

    def __init__(self, root):
        self.root = root
        self.node = socket.gethostname().split(".")[0]
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.daemons = []  # (name, Popen, log path)
        for d in ("munge", "state", "spool", "log"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        self.conf = os.path.join(root, "slurm.conf")
        # Every process the test starts, and through its daemons, carries this mark: stop() ends those left.
        self.env = dict(os.environ, SLURM_CONF=self.conf, ROCESIM_SLURM_TEST=root)
        for k in list(self.env):
            if k.startswith("SLURM_") and k != "SLURM_CONF":
                del self.env[k]  # not inside another Slurm job's environment

    def path(self, *p):
        return os.path.join(self.root, *p)

    def write_config(self):
        ctld_port, d_port = free_ports(2)
        key = self.path("munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        os.chmod(self.path("munge"), 0o755)
        conf = f"""# A one-node Slurm of tests/tools/slurm_cluster.py (written by the test, removed after).
ClusterName=rocesimtest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser={self.user}
SlurmdUser={self.user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.path("munge", "munge.socket")}
StateSaveLocation={self.path("state")}
SlurmdSpoolDir={self.path("spool")}
SlurmctldPidFile={self.path("slurmctld.pid")}
SlurmdPidFile={self.path("slurmd.pid")}
SlurmctldLogFile={self.path("log", "slurmctld.log")}
SlurmdLogFile={self.path("log", "slurmd.log")}
MailProg=/bin/true
# No cgroups or systemd (a container): processes tracked by their parents, no task binding or accounting.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# The node's CPUs as this file declares them, not as counted on the machine (more than it has).
SlurmdParameters=config_overrides
NodeName={self.node} NodeAddr=127.0.0.1 CPUs=64 State=UNKNOWN
PartitionName=rocesimtest Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
"""
        with open(self.conf, "w") as f:
            f.write(conf)

    def start(self, name, argv):
        log = self.path("log", name + ".out")
        with open(log, "wb") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=self.env, cwd=self.root, preexec_fn=die_with_parent)
        self.daemons.append((name, p, log))
        return p

    def logs(self):
        out = ""
        for f in ("munged.out", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"):
            if os.path.exists(self.path("log", f)):
                out += f"--- {f} (tail)\n" + tail(self.path("log", f))
        return out

    def run(self, argv, timeout=30):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)

    def boot(self):
        """Starts the daemons and waits for the node to be idle; Skip (with the logs) where they cannot."""
        self.write_config()
        sock = self.path("munge", "munge.socket")
        self.start("munged", ["munged", "-F", "-f", "--socket=" + sock,
                              "--key-file=" + self.path("munge", "munge.key"),
                              "--pid-file=" + self.path("munge", "munged.pid"),
                              "--seed-file=" + self.path("munge", "munged.seed"),
                              "--log-file=" + self.path("log", "munged.log")])
        self.wait_for(lambda: os.path.exists(sock), 10, "munged did not create its socket")
        self.start("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
        self.wait_for(lambda: self.run(["scontrol", "ping"]).stdout.find("UP") >= 0, 20,
                      "slurmctld does not answer scontrol ping")
        self.start("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", self.node])

        def idle():
            s = self.run(["scontrol", "-o", "show", "node", self.node]).stdout
            return re.search(r"State=IDLE\b", s) is not None
        self.wait_for(idle, 30, f"node {self.node} did not become idle")

    def wait_for(self, ready, seconds, what):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for name, p, _ in self.daemons:
                if p.poll() is not None:
                    raise Skip(f"{name} exited with status {p.returncode}\n" + self.logs())
            try:
                if ready():
                    return
            except subprocess.TimeoutExpired:
                pass
            time.sleep(0.2)
        raise Skip(f"{what} after {seconds} s\n" + self.logs())

    def submit(self, script, options, cwd, env):
        p = subprocess.run(["sbatch", "--parsable", "--chdir=" + cwd] + options + [script], env=env,
                           capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise Failure(f"sbatch {' '.join(options)} {script}: status {p.returncode}: {p.stderr}")
        return p.stdout.strip().split(";")[0]

    def wait_job(self, job):
        end = time.monotonic() + JOB_SECONDS
        fields = {}
        while time.monotonic() < end:
            s = self.run(["scontrol", "-o", "show", "job", job]).stdout
            fields = dict(re.findall(r"(\w+)=(\S*)", s))
            if fields.get("JobState") in DONE:
                return fields
            time.sleep(0.3)
        raise Failure(f"job {job} not done after {JOB_SECONDS} s: {fields.get('JobState')} "
                      f"({fields.get('Reason')})\n" + self.logs())

    def stop(self):
        """Cancels the jobs, stops the daemons, then ends any process that still carries the test's mark."""
        if self.daemons and os.path.exists(self.conf):
            try:
                self.run(["scancel", "--full", "--user", self.user], timeout=10)
                end = time.monotonic() + 10
                while time.monotonic() < end and self.run(["squeue", "-h"], timeout=10).stdout.strip():
                    time.sleep(0.2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        for _, p, _ in reversed(self.daemons):
            if p.poll() is None:
                p.terminate()
        for _, p, _ in reversed(self.daemons):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        me = os.getpid()
        mark = f"ROCESIM_SLURM_TEST={self.root}".encode()
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if int(pid) != me and mark in f.read().split(b"\0"):
                        os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass


def grid_runs(script):
    """The number of runs of the `--grid KEY=V1,V2 ...` axes of a script's sweep command."""
    words = script.replace("\\\n", " ").split()
    axes = words[words.index("--grid") + 1:]
    axes = list(itertools.takewhile(lambda w: "=" in w and not w.startswith("-"), axes))
    n = 1
    for a in axes:
        n *= len(a.split("=", 1)[1].split(","))
    return n


def check_log(log, job):
    """The job's log; a Failure when Open MPI or rocesim reported an error in it."""
    text = tail(log, 100000)
    if re.search(r"(?im)^(rocesim: )?error|^-{40,}$|^\S*mpirun (noticed|was unable|detected)", text):
        raise Failure(f"job {job}: its log {log} reports an error:\n{tail(log, 40)}")
    return text


def write_jobs(jobs, scripts):
    """The jobs' directory: the scripts, and the scenarios they name (the documented ones shortened)."""
    for name, text in scripts.items():
        os.makedirs(jobs, exist_ok=True)
        with open(os.path.join(jobs, name), "w") as f:
            f.write(text)
        for rel in re.findall(r"\bscenarios/\S+\.toml", text):
            with open(os.path.join(REPO, rel)) as f:
                scenario = f.read()
            for pattern, repl in SHORTEN.get(rel, []):
                scenario, n = re.subn(pattern, repl, scenario)
                if n != 1:
                    raise Failure(f"{rel}: `{pattern}` matched {n} times (the test shortens the scenario)")
            os.makedirs(os.path.dirname(os.path.join(jobs, rel)), exist_ok=True)
            with open(os.path.join(jobs, rel), "w") as f:
                f.write(scenario)


def check_sweep(script, outdir, log, fields):
    """sweep.sbatch's job: every run of the grid complete in results.csv, run by the allocation's ranks."""
    text = check_log(log, fields["JobId"])
    want = grid_runs(script)
    with open(os.path.join(outdir, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    names = {r["run"] for r in rows}
    if len(names) != want or any(r["complete"] != "1" for r in rows):
        raise Failure(f"{outdir}/results.csv: {len(names)} runs (the grid has {want}), or one incomplete\n"
                      f"{text}")
    runs = [d for d in os.listdir(outdir) if os.path.exists(os.path.join(outdir, d, "summary.json"))]
    if len(runs) != want:
        raise Failure(f"{outdir}: {len(runs)} runs with a summary.json, the grid has {want}")
    if f": {want} runs done, 0 skipped, 0 failed" not in text:
        raise Failure(f"{log} does not report {want} runs done and none failed:\n{tail(log, 20)}")
    # mpirun took its ranks from the allocation (no -np): rank 0 hands out the runs, the others run them.
    at_once = int(fields["NumTasks"]) - 1
    if f"), {at_once} at once, in " not in text:
        raise Failure(f"{log} does not say {at_once} runs at once (the allocation's tasks less rank 0):\n"
                      f"{tail(log, 50)}")
    print(f"  {outdir}: results.csv with the {len(names)} runs, all complete, {at_once} at once")


def check_run(outdir, log, fields):
    """run.sbatch's job: every flow finished, on one rank per node of the allocation's CPUs per task."""
    check_log(log, fields["JobId"])
    with open(os.path.join(outdir, "summary.json")) as f:
        summary = json.load(f)
    flows, par = summary["flows"], summary["performance"]["parallel"]
    print(f"  {outdir}/summary.json: flows {flows}, {par['threads']} threads, mpi {par['mpi']}")
    if flows["started"] == 0 or flows["unfinished"] != 0:
        raise Failure(f"{outdir}/summary.json: flows {flows}")
    cpus, nodes = int(fields["NumCPUs"]), int(fields["NumNodes"])  # one task per node: CPUs per task
    if par["threads"] != cpus or not par["mpi"] or par["mpi"]["ranks"] != nodes:
        raise Failure(f"{outdir}/summary.json: {par['threads']} threads (the allocation's CPUs: {cpus}), "
                      f"mpi {par['mpi']} (the allocation's nodes: {nodes})")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    rocesim = os.path.abspath(sys.argv[1])
    if os.environ.get("ROCESIM_SANITIZED"):
        raise Skip("the sbatch scripts run the Release program; the Release pass of make test runs this test")
    if "--no-mpi" in sys.argv[2:]:
        raise Skip("this build has no Open MPI (apt-get install openmpi-bin libopenmpi-dev, or scripts/setup, "
                   "and rebuild)")
    os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"  # the daemons, for a user's PATH
    missing = [c for c in COMMANDS if shutil.which(c) is None]
    if missing:
        raise Skip(f"not installed: {', '.join(missing)} ({PACKAGES})")
    scripts = {name: doc_script(name) for name in OVERRIDES}

    root = tempfile.mkdtemp(prefix="rocesim-slurm-")
    cluster = Cluster(root)
    # SIGTERM (ctest's timeout) and SIGINT still stop the daemons.
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: sys.exit(1))
    keep = True
    try:
        t0 = time.monotonic()
        try:
            cluster.boot()
        except Skip:
            keep = False
            raise
        print(f"slurm: one node ({cluster.node}) up in {time.monotonic() - t0:.1f} s")
        jobs, home = os.path.join(root, "jobs"), os.path.join(root, "home")
        os.makedirs(home)
        write_jobs(jobs, scripts)
        # The submitter's environment, which sbatch passes to the job: rocesim on the PATH, a HOME of its own.
        env = dict(cluster.env, HOME=home, PATH=os.path.dirname(rocesim) + ":" + cluster.env["PATH"])
        if os.getuid() == 0:  # Open MPI refuses root unless told (CI and containers run as root)
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        for name, script in scripts.items():
            t = time.monotonic()
            job = cluster.submit(name, OVERRIDES[name], jobs, env)
            fields = cluster.wait_job(job)
            out = re.search(r"(?m)^#SBATCH --output=(\S+)", script).group(1).replace("%j", job)
            log = os.path.join(jobs, out)
            print(f"{name}: job {job} {fields['JobState']} in {time.monotonic() - t:.1f} s (sbatch "
                  f"{' '.join(OVERRIDES[name])}: {fields['NumNodes']} node, {fields['NumTasks']} tasks, "
                  f"{fields['NumCPUs']} CPUs)")
            if fields["JobState"] != "COMPLETED" or fields.get("ExitCode") != "0:0":
                raise Failure(f"job {job} ({name}): {fields['JobState']}, exit code {fields.get('ExitCode')}"
                              f"\n--- {out}\n{tail(log, 40)}" + cluster.logs())
            outdir = os.path.join(home, re.search(r'-o "\$HOME/([^"]+)"', script).group(1))
            if " sweep " in script:
                check_sweep(script, outdir, log, fields)
            else:
                check_run(outdir, log, fields)
        keep = False
        print(f"the sbatch scripts of docs/cluster.md ran under Slurm in {time.monotonic() - t0:.1f} s")
    finally:
        cluster.stop()
        if keep:
            print(f"(the daemons' and jobs' files are kept in {root})")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Skip as e:
        print(f"SKIPPED: {e}")
        sys.exit(SKIP)
    except Failure as e:
        print(f"FAILED: {e}")
        sys.exit(1)
