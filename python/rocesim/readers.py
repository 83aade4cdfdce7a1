"""One reader per file that rocesim writes (docs/user-guide.md, "Reading the outputs" and "results.csv").

Every CSV file becomes a pandas DataFrame with its documented columns typed: counts, ids, bytes and ports as
integers, times, rates and ratios as floats, names and labels as text (read as written: a class named "NA"
stays "NA"). An empty cell of a numeric column is NaN, which makes an integer column float (pfc.csv's `prio`
on link rows, results.csv's `max_bytes` of the unbounded bucket, collectives.csv's figures of an iteration
that did not finish). Numbers are parsed exactly as Python's float() parses them, so a value read here is
the value any other reader of the file gets. Columns a newer rocesim adds are kept, their type inferred.
"""

import json
import tomllib

import pandas as pd

I, F, S = "int", "float", "str"

# The columns of each CSV file and their types.
FLOWS = {"id": I, "src": I, "dst": I, "size_bytes": I, "start_us": F, "finish_us": F, "fct_us": F,
         "ideal_fct_us": F, "slowdown": F, "retransmitted_packets": I, "retransmitted_bytes": I,
         "out_of_order_packets": I, "spurious_retransmissions": I, "class": S, "name": S}
QUEUES = dict({"time_us": F, "node": S, "port": I, "peer": S, "queue_bytes": I},
              **{f"prio{p}_bytes": I for p in range(1, 8)}, link_up=I)
INPUT_QUEUES = {"time_us": F, "node": S, "port": I, "peer": S, "queue_bytes": I}
RATES = {"time_us": F, "kind": S, "id": S, "gbps": F}  # id: a flow id, or NODE:PEER(:PORT) for a port
PFC = {"time_us": F, "node": S, "port": I, "peer": S, "prio": I, "event": S, "duration_us": F}
CNPS = {"flow_id": I, "src": I, "dst": I, "cnps_received": I, "cnps_from_switches": I}
BUFFER = {"switch": S, "buffer_bytes": I, "cdf": F}
# cc_state.csv: these columns, and between window_bytes and ecn_marks the scheme's own variables (numbers,
# their type inferred; their names, units and meanings are in summary.json, monitors.cc_state.variables).
CC_STATE = {"time_us": F, "flow": I, "rate_gbps": F, "window_bytes": I, "ecn_marks": I, "cnps_received": I}
# port and peer are empty on an unroutable drop, queue_bytes off enqueue and dequeue, paused_us off dequeue.
PACKET_TRACE = {"time_us": F, "flow": I, "seq": I, "node": S, "port": I, "peer": S, "prio": I, "event": S,
                "detail": S, "queue_bytes": I, "paused_us": F}
COLLECTIVES = {"job": S, "collective": S, "ranks": I, "iteration": I, "bytes": I, "start_us": F, "finish_us": F,
               "duration_us": F, "algbw_gbps": F, "busbw_gbps": F, "ideal_us": F, "slowdown": F,
               "comm_us": F, "compute_us": F, "exposed_comm_us": F, "trace_id": S}
COLLECTIVE_STEPS = {"job": S, "iteration": I, "step": I, "flows": I, "bytes": I, "start_us": F, "finish_us": F}
JOB_TIMELINE = {"job": S, "iteration": I, "host": I, "activity": S, "start_us": F, "finish_us": F}
# results.csv: the statistics; every other column (the grid keys, scheme, load, seed, run, bucket, class) is
# text as written on the command line, which names the run (`load` 0.30 stays "0.30").
RESULTS = dict({"min_bytes": I, "max_bytes": I, "count": I},
               **{f"fct_{s}_us": F for s in ("avg", "p50", "p95", "p99", "p999")},
               **{f"slowdown_{s}": F for s in ("avg", "p50", "p95", "p99", "p999")},
               flows_started=I, flows_finished=I, complete=I, simulated_ms=F, pauses=I, paused_time_us=F,
               max_buffer_bytes=I, wall_seconds=F, cnps=I, drops=I,
               # the job rows (bucket "job"): one per collective or dependency_trace job of a run
               job=S, algorithm=S, ranks=I, bytes_per_rank=I, iterations=I, iteration_mean_us=F,
               iteration_p99_us=F, algbw_gbps=F, busbw_gbps=F, comm_us=F, exposed_comm_us=F)
# fct.txt (the ns-3 HPCC simulator's layout): space-separated, no header.
FCT_HPCC = ["sip", "dip", "sport", "dport", "size_bytes", "start_ns", "fct_ns", "standalone_fct_ns"]


def read_table(path, types, others=None):
    """A CSV file of rocesim as a DataFrame: `types` maps column names to "int", "float" or "str"; a column
    not in it is text when `others` is "str", else its type is inferred."""
    header = pd.read_csv(path, nrows=0).columns.tolist()
    kind = {c: types.get(c, others) for c in header}
    df = pd.read_csv(path, dtype={c: str for c, k in kind.items() if k == S}, keep_default_na=False,
                     na_values={c: [""] for c, k in kind.items() if k != S}, float_precision="round_trip")
    for c, k in kind.items():
        if k not in (I, F):
            continue
        col = df[c]
        if col.dtype == object:  # a cell that is no number (or no row at all): NaN
            col = pd.to_numeric(col, errors="coerce")
        whole = col.dtype.kind in "iub" or (col.dtype.kind == "f" and not col.isna().any() and (col % 1 == 0).all())
        df[c] = col.astype("int64" if k == I and whole else "float64")
    return df


def read_flows(path):
    """flows.csv: one row per finished flow (id, src, dst, size_bytes, start_us, finish_us, fct_us,
    ideal_fct_us, slowdown, the transport columns when written, class, name: a trace's own flow id)."""
    return read_table(path, FLOWS)


def read_queues(path):
    """queues.csv: egress queue samples (time_us, node, port, peer, queue_bytes, prio1_bytes..prio7_bytes,
    link_up with link events)."""
    return read_table(path, QUEUES)


def read_input_queues(path):
    """input_queues.csv: input queue samples of input-and-output queued switches."""
    return read_table(path, INPUT_QUEUES)


def read_rates(path):
    """rates.csv: goodput of flows (kind "flow", id the flow id as text) and wire throughput of ports (kind
    "port", id "NODE:PEER", or "NODE:PEER:PORT" for one of several monitored ports of NODE towards PEER) per
    bin starting at time_us, in Gb/s."""
    return read_table(path, RATES)


def read_pfc(path):
    """pfc.csv: pause, resume, end, link_down and link_up events per port and priority."""
    return read_table(path, PFC)


def read_cnps(path):
    """cnps.csv: CNPs received per flow."""
    return read_table(path, CNPS)


def read_buffer(path):
    """buffer.csv: per switch, the empirical CDF of its sampled shared-buffer occupancy."""
    return read_table(path, BUFFER)


def read_cc_state(path):
    """cc_state.csv: the scheme's state of the traced flows over time (time_us, flow, rate_gbps, window_bytes,
    the scheme's variables, ecn_marks, cnps_received), sorted by time and flow."""
    return read_table(path, CC_STATE)
def read_packet_trace(path):
    """packet_trace.csv: the events of the traced flows' data packets, hop by hop, in time order (send,
    retransmit, enqueue, dequeue, mark, drop, receive)."""
    return read_table(path, PACKET_TRACE)


def read_collectives(path):
    """collectives.csv: one row per job and iteration begun (NaN figures for an unfinished one), each followed
    by a row per collective its trace names (trace_id: a dependency trace's collective id or a training job's
    node "id:name"; empty on the iteration rows)."""
    return read_table(path, COLLECTIVES)


def read_collective_steps(path):
    """collective_steps.csv: per step of every iteration begun, its first flow's start and last flow's finish."""
    return read_table(path, COLLECTIVE_STEPS)


def read_job_timeline(path):
    """job_timeline.csv: each job's first iteration per host, its communication ("comm") and compute
    intervals."""
    return read_table(path, JOB_TIMELINE)


def read_results(path):
    """A sweep's results.csv: one row per complete run and size bucket, an "all" row per run and one row per
    traffic class, and one row per job (bucket "job": its iteration time, algorithm, bandwidths and exposed
    communication). The statistics are numbers; the grid keys, scheme, load, seed, run, bucket and class are
    text as written."""
    return read_table(path, RESULTS, others=S)


def read_fct_hpcc(path):
    """fct.txt (the ns-3 HPCC simulator's layout): sip and dip as written (hex), the other fields as integers,
    plus src and dst, the node ids those addresses stand for (node n is 11.(n/256).(n%256).1)."""
    try:
        df = pd.read_csv(path, sep=" ", header=None, names=FCT_HPCC, dtype={"sip": str, "dip": str},
                         keep_default_na=False)
    except pd.errors.EmptyDataError:  # no flow finished
        df = pd.DataFrame({c: pd.Series(dtype=object if c in ("sip", "dip") else "int64") for c in FCT_HPCC})
    for c in FCT_HPCC[2:]:
        df[c] = df[c].astype("int64")
    for ip, node in (("sip", "src"), ("dip", "dst")):
        df[node] = df[ip].map(lambda h: (int(h, 16) >> 8) & 0xFFFF).astype("int64")
    return df


def read_summary(path):
    """summary.json as a dict."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_scenario(path):
    """scenario.resolved.toml (or any scenario file) as a dict."""
    with open(path, "rb") as f:
        return tomllib.load(f)


def read_sweep_manifest(path):
    """A sweep's sweep.json (scenario, grid, run names, --set values) as a dict."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# File name -> (reader, attribute of Run), for every table a run directory may hold.
RUN_TABLES = {
    "flows.csv": (read_flows, "flows"),
    "queues.csv": (read_queues, "queues"),
    "input_queues.csv": (read_input_queues, "input_queues"),
    "rates.csv": (read_rates, "rates"),
    "pfc.csv": (read_pfc, "pfc"),
    "cnps.csv": (read_cnps, "cnps"),
    "buffer.csv": (read_buffer, "buffer"),
    "cc_state.csv": (read_cc_state, "cc_state"),
    "packet_trace.csv": (read_packet_trace, "packet_trace"),
    "collectives.csv": (read_collectives, "collectives"),
    "collective_steps.csv": (read_collective_steps, "collective_steps"),
    "job_timeline.csv": (read_job_timeline, "job_timeline"),
    "fct.txt": (read_fct_hpcc, "fct_hpcc"),
}

