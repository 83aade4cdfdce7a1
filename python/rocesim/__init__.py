"""rocesim from Python: read result directories as pandas DataFrames, and run the simulator.

    import rocesim
    r = rocesim.run("examples/guide", set={"cc.scheme": "dctcp"})   # rocesim run ... -> a Run
    r.flows.slowdown.describe(); r.summary["pfc"]["pauses_sent"]; r.queues
    sw = rocesim.sweep("examples/guide", grid={"scheme": ["dcqcn", "none"], "load": [0.2, 0.4]}, jobs=2)
    sw.results; sw.runs["scheme=none,load=0.4"].flows
    rocesim.load("runs/guide")                                          # a Run or a Sweep directory
    rocesim.nearest_rank(r.flows.slowdown, 0.99)                         # == summary.json's p99

docs/user-guide.md, "From Python". Needs pandas and numpy (Debian: python3-pandas, python3-numpy).
"""

from .cli import find_binary, run, sweep
from .readers import (read_buffer, read_cc_state, read_cnps, read_collective_steps, read_collectives, read_fct_hpcc,
                      read_flows, read_input_queues, read_job_timeline, read_packet_trace, read_pfc, read_queues, read_rates,
                      read_results, read_scenario, read_summary, read_sweep_manifest)
from .results import RocesimError, Run, Sweep, load
from .stats import cdf_quantile, nearest_rank

__version__ = "0.1.0"

__all__ = ["load", "run", "sweep", "Run", "Sweep", "RocesimError", "nearest_rank", "cdf_quantile", "find_binary",
           "read_buffer", "read_cc_state", "read_cnps", "read_collective_steps", "read_collectives", "read_fct_hpcc",
           "read_flows", "read_input_queues", "read_job_timeline", "read_packet_trace", "read_pfc", "read_queues", "read_rates",
           "read_results", "read_scenario", "read_summary", "read_sweep_manifest"]
