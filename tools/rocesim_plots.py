"""Figures of rocesim results: a run directory (`rocesim run -o DIR`) or a sweep directory (`rocesim sweep`).

Library used by tools/report.py; also a command line:

    /usr/bin/python3 tools/rocesim_plots.py DIR [--out FIGDIR]

writes the PNGs (default DIR/figures/) and prints their paths. Figures whose data is absent are skipped:

  slowdown_vs_size*  FCT slowdown vs flow size (p50 and p99) per scheme, seeds pooled, one per load
                     (flows.csv; results.csv buckets when flows.csv is missing)
  fct_vs_load        average and p99 FCT vs load per scheme, mean over seeds with 95 % confidence-interval bars (sweeps
                     with two or more loads)
  timeseries         per-flow goodput and the busiest queue over time, one column per scheme (rates.csv,
                     queues.csv, and input_queues.csv in a row of its own, from [monitors]); at most
                     MAX_COLS columns, further runs wrap into more rows (at most MAX_RUNS runs)
  vs_KEY             p99 slowdown and average FCT against each numeric grid key other than load and seed
                     (buffer size, Xoff, a scheme parameter), one line per scheme, one panel per value of
                     the other keys (sweeps)
  classes            per traffic class (e.g. incast vs background): slowdown vs size for a run; p99 slowdown
                     per scheme for a sweep (results.csv class rows), one panel per class
  fct_bars           average and p99 FCT (all flows, smallest and largest size bucket) per scheme (sweeps)
  pfc                PFC PAUSE frames and paused time per scheme (summary.json / results.csv)
  buffer_cdf         CDF of switch buffer occupancy per scheme (buffer.csv from [monitors])
  cc_state*          a run's congestion-control state over time (cc_state.csv from [monitors] cc_state): one
                     figure per monitored flow set (per class of cc_state.classes, else one), a panel each for
                     the rate, the window, every variable the scheme declares, and the ECN marks and CNPs
  packet_timeline    one traced flow's packets hop by hop: queueing, pause waits, marks, drops and
                     retransmissions (packet_trace.csv from [monitors] packet_trace; runs)
  busbw_vs_bytes     bus bandwidth against the per-rank message size per job, one line per series (sweeps over
                     a job's bytes; results.csv job rows)
  iteration_time     mean iteration time per job and series (scheme, routing, ...), p99 whisker, exposed
                     communication hatched (sweeps with jobs; results.csv job rows)
  job_timeline       one iteration of each job (timeline_iteration) per host: communication vs compute

Needs matplotlib, numpy and pandas (Debian: python3-matplotlib, python3-pandas; use /usr/bin/python3). The
rocesim package of python/ reads the results (tools/rocesim_common.py puts it on the path).
"""

import argparse
import math
import os
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The rocesim package (python/rocesim) reads every file; to_float and nearest_rank are used here and by
# report.py through this module.
from rocesim_common import mean_ci95, nearest_rank, rocesim, to_float  # noqa: E402

# Small multiples wrap after MAX_COLS panels (figures stay about 1,400 px wide whatever the sweep's shape);
# a figure shows at most MAX_RUNS runs (its caption says when some are left out).
MAX_COLS = 3
MAX_RUNS = 8

# Colours and markers per series, in order of appearance (colour-blind safe: Okabe-Ito).
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]

plt.rcParams.update({
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
})


# ----------------------------------------------------------------------------------------------------------
# Reading results


def is_run_dir(d):
    return os.path.isfile(os.path.join(d, "summary.json"))


def is_sweep_dir(d):
    return os.path.isfile(os.path.join(d, "results.csv"))


class Run:
    """One run directory (`data`: the rocesim package's Run, which reads each file on first use), with the
    label and grid values it has in a figure."""

    def __init__(self, path, label=None, values=None):
        self.path = path
        self.data = rocesim.Run(path)
        self.summary = self.data.summary
        self.label = label or self.summary.get("scheme", os.path.basename(path))
        self.values = values or {}
        self._flows = None

    def file(self, name):
        p = os.path.join(self.path, name)
        return p if os.path.exists(p) else None

    def flows(self):
        """flows.csv as numpy arrays: size, slowdown, fct_us, id, src, dst and the class labels."""
        if self._flows is None:
            df = self.data.flows
            n = 0 if df is None else len(df)

            def col(name, dtype):
                return np.array([], dtype=dtype) if not n else df[name].to_numpy(dtype=dtype, copy=True)

            self._flows = {
                "id": col("id", np.int64), "src": col("src", np.int64), "dst": col("dst", np.int64),
                "size": col("size_bytes", float), "fct_us": col("fct_us", float),
                "slowdown": col("slowdown", float),
                "class": df["class"].tolist() if n and "class" in df else ["default"] * n,
            }
        return self._flows


def scheme_order(names):
    """Series labels in order of first appearance (stable colours between figures)."""
    return list(OrderedDict.fromkeys(names))


class Sweep:
    """A sweep directory: sweep.json (grid), results.csv and one run directory per grid point."""

    def __init__(self, path):
        self.path = path
        data = rocesim.Sweep(path)  # results.csv (numbers as numbers, grid values as written) and sweep.json
        self.rows = data.results.to_dict("records")
        self.manifest = data.manifest
        self.grid = data.grid
        # Per-class rows (results.csv "class" column: a class label; "all" or absent: every flow).
        # Job rows (bucket "job"): per run and job, its iteration time, algorithm and bandwidths.
        self.job_rows = [r for r in self.rows if r.get("bucket") == "job"]
        self.rows = [r for r in self.rows if r.get("bucket") != "job"]
        self.class_rows = [r for r in self.rows if r.get("class", "all") != "all"]
        self.rows = [r for r in self.rows if r.get("class", "all") == "all"]
        self.classes = list(OrderedDict.fromkeys(r["class"] for r in self.class_rows))
        self.all_rows = [r for r in self.rows if r.get("bucket") == "all"]
        # A series is a scheme (plus any grid value other than load and seed).
        self.series_keys = [k for k in self.grid if k not in ("load", "seed")]
        if not any(k in ("scheme", "cc.scheme") for k in self.series_keys):
            self.series_keys = ["scheme"] + self.series_keys
        self.runs = OrderedDict()
        for r in self.all_rows:
            d = os.path.join(path, r["run"])
            if is_run_dir(d):
                self.runs[r["run"]] = Run(d, self.series_of(r), r)
        self.series = scheme_order(self.series_of(r) for r in self.all_rows)
        self.loads = sorted(set(r.get("load", "") for r in self.all_rows), key=load_key)

    def series_of(self, row):
        parts = []
        for k in self.series_keys:
            v = row.get(k, "")
            parts.append(v if k in ("scheme", "cc.scheme") else f"{short_key(k)}={v}")
        return ", ".join(parts)

    def runs_at(self, series=None, load=None):
        return [run for run in self.runs.values()
                if (series is None or run.label == series)
                and (load is None or run.values.get("load") == load)]

    def representative(self, series, load):
        """The run of `series` at `load` with the smallest seed (or the first one)."""
        runs = self.runs_at(series, load)
        runs.sort(key=lambda r: to_float(r.values.get("seed"), 0))
        return runs[0] if runs else None


def short_key(k):
    return k.split(".")[-1]


def load_key(v):
    f = to_float(v)
    return (0, f, "") if not math.isnan(f) else (1, 0.0, v)


def load_label(v):
    f = to_float(v)
    return f"load {f:g}" if not math.isnan(f) else (f"load {v}" if v else "")


# ----------------------------------------------------------------------------------------------------------
# Formatting helpers


def fmt_bytes(b):
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= div:
            v = b / div
            return f"{v:.0f}{unit}" if v >= 10 or v == int(v) else f"{v:.1f}{unit}"
    return f"{b:.0f}B"


def style(i):
    return {"color": COLORS[i % len(COLORS)], "marker": MARKERS[i % len(MARKERS)]}


def save(fig, out_dir, name):
    os.makedirs(out_dir, exist_ok=True)
    p = os.path.join(out_dir, name + ".png")
    fig.savefig(p, bbox_inches="tight")
    plt.close(fig)
    return p


class Figure:
    """A written figure: its PNG path, a title and a caption for the report."""

    def __init__(self, path, title, caption):
        self.path, self.title, self.caption = path, title, caption


# ----------------------------------------------------------------------------------------------------------
# FCT slowdown vs flow size


def size_bins(sizes, max_bins=12, min_per_bin=100):
    """Edges of bins of flow size holding about equal numbers of flows (distinct sizes never split)."""
    sizes = np.sort(np.asarray(sizes))
    n = sizes.size
    if n == 0:
        return []
    k = int(max(1, min(max_bins, n // min_per_bin)))
    edges = []
    for i in range(1, k):
        e = sizes[int(i * n / k)]
        if not edges or e > edges[-1]:
            edges.append(e)
    edges.append(sizes[-1])
    # Bins: (prev edge, edge]; the first from 0.
    return edges


def slowdown_axis(ax):
    """Slowdowns start at 1: a log axis when they span a decade or more, else linear from 1."""
    lines = [l.get_ydata() for l in ax.get_lines()]
    vals = np.concatenate([np.asarray(v, dtype=float) for v in lines]) if lines else np.array([1.0])
    vals = vals[np.isfinite(vals)]
    top = float(vals.max()) if vals.size else 2.0
    if top >= 10:
        ax.set_yscale("log")
        ax.set_ylim(0.9, top * 1.4)
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    else:
        ax.set_ylim(1 - 0.04 * (top - 1) - 0.01, top + 0.08 * (top - 1) + 0.05)
    ax.axhline(1, color="grey", lw=0.8, ls=":")


def slowdown_by_size(flow_sets, edges):
    """Per bin: (p50, p99, count) of the slowdown of the flows with size in (prev, edge]."""
    size = np.concatenate([f["size"] for f in flow_sets]) if flow_sets else np.array([])
    sd = np.concatenate([f["slowdown"] for f in flow_sets]) if flow_sets else np.array([])
    out, lo = [], -1
    for e in edges:
        m = (size > lo) & (size <= e)
        vals = sd[m]
        out.append((nearest_rank(vals, 0.5), nearest_rank(vals, 0.99), int(vals.size)))
        lo = e
    return out


def fig_slowdown_vs_size(groups, out_dir, name, title_suffix=""):
    """groups: OrderedDict label -> list of flow dicts (seeds pooled). Two panels: p50 and p99."""
    groups = OrderedDict((k, v) for k, v in groups.items() if v and sum(f["size"].size for f in v) > 0)
    if not groups:
        return None
    all_sizes = np.concatenate([f["size"] for v in groups.values() for f in v])
    per_series = min(sum(f["size"].size for f in v) for v in groups.values())
    edges = size_bins(all_sizes, min_per_bin=max(10, min(100, per_series // 12)))
    if not edges:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
    x = np.arange(len(edges))
    for i, (label, flows) in enumerate(groups.items()):
        stats = slowdown_by_size(flows, edges)
        n = sum(f["size"].size for f in flows)
        for ax, col in ((axes[0], 0), (axes[1], 1)):
            y = np.array([s[col] if s[2] > 0 else np.nan for s in stats])
            ax.plot(x, y, label=f"{label} ({n} flows)", lw=1.6, ms=4, **style(i))
    labels = [fmt_bytes(e) for e in edges]
    for ax, q in ((axes[0], "median (p50)"), (axes[1], "99th percentile (p99)")):
        slowdown_axis(ax)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=45, ha="right")
        ax.set_xlabel("flow size (upper edge of bin; bins hold equal numbers of flows)")
        ax.set_ylabel("FCT slowdown (FCT / ideal FCT)")
        ax.set_title(f"{q} slowdown{title_suffix}")
    axes[1].legend(loc="upper right", frameon=False)
    fig.tight_layout()
    return save(fig, out_dir, name)


def fig_slowdown_vs_bucket(rows_by_series, out_dir, name, title_suffix=""):
    """Fallback without flows.csv: results.csv bucket rows (mean over seeds of the per-run percentiles)."""
    if not rows_by_series:
        return None
    buckets = scheme_order(r["bucket"] for rows in rows_by_series.values() for r in rows)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
    x = np.arange(len(buckets))
    for i, (label, rows) in enumerate(rows_by_series.items()):
        for ax, col in ((axes[0], "slowdown_p50"), (axes[1], "slowdown_p99")):
            y = [np.nanmean([to_float(r[col]) for r in rows
                             if r["bucket"] == b and to_float(r["count"], 0) > 0] or [np.nan])
                 for b in buckets]
            ax.plot(x, y, label=label, lw=1.6, ms=5, **style(i))
    for ax, q in ((axes[0], "median (p50)"), (axes[1], "99th percentile (p99)")):
        slowdown_axis(ax)
        ax.set_xticks(x)
        ax.set_xticklabels(buckets, rotation=30, ha="right")
        ax.set_xlabel("flow size bucket")
        ax.set_ylabel("FCT slowdown (FCT / ideal FCT)")
        ax.set_title(f"{q} slowdown{title_suffix}")
    axes[1].legend(frameon=False)
    fig.tight_layout()
    return save(fig, out_dir, name)


# ----------------------------------------------------------------------------------------------------------
# FCT vs load


def fct_vs_load_points(sweep, facet=None):
    """The points fig_fct_vs_load draws: OrderedDict facet value (None without a facet) -> OrderedDict series
    -> {"fct_avg_us" | "fct_p99_us": [(load, mean, half-width of the 95 % CI over seeds)]}. With `facet` (a
    grid key, e.g. "traffic[0].workload") the series leave that key out and each of its values gets its own
    panels."""
    loads = [l for l in sweep.loads if not math.isnan(to_float(l))]
    if facet is not None and facet not in sweep.grid:
        raise ValueError(f"facet '{facet}' is no grid key of the sweep (has: {', '.join(sweep.grid)})")
    keep = [k for k in sweep.series_keys if k != facet]

    def label(r):
        return ", ".join(r.get(k, "") if k in ("scheme", "cc.scheme") else f"{short_key(k)}={r.get(k, '')}"
                         for k in keep)
    facets = list(OrderedDict.fromkeys(r.get(facet) for r in sweep.all_rows)) if facet else [None]
    out = OrderedDict()
    for fv in facets:
        rows = [r for r in sweep.all_rows if facet is None or r.get(facet) == fv]
        per = OrderedDict()
        for series in scheme_order(label(r) for r in rows):
            per[series] = {}
            for col in ("fct_avg_us", "fct_p99_us"):
                pts = []
                for l in loads:
                    v = [to_float(r[col]) for r in rows if label(r) == series and r.get("load") == l]
                    v = [a for a in v if not math.isnan(a)]
                    m, h = mean_ci95(v) if v else (np.nan, np.nan)
                    pts.append((to_float(l), m, h))
                per[series][col] = pts
        out[fv] = per
    return out


def fig_fct_vs_load(sweep, out_dir, name="fct_vs_load", facet=None):
    """Average and p99 FCT of all flows vs load per series; with `facet` one row of the two panels per value
    of that grid key (e.g. per workload)."""
    loads = [l for l in sweep.loads if not math.isnan(to_float(l))]
    if len(loads) < 2:
        return None
    points = fct_vs_load_points(sweep, facet)
    fig, grid = plt.subplots(len(points), 2, figsize=(11, 4.2 * len(points)), sharex=True, squeeze=False)
    xs = np.array([to_float(l) for l in loads])
    for axes, (fv, per) in zip(grid, points.items()):
        for i, (series, cols) in enumerate(per.items()):
            for ax, col in ((axes[0], "fct_avg_us"), (axes[1], "fct_p99_us")):
                mean = np.array([m for _, m, _ in cols[col]])
                half = np.array([h for _, _, h in cols[col]])
                ax.errorbar(xs, mean, yerr=half, capsize=3, lw=1.6, ms=5, label=series, **style(i))
        for ax, what in ((axes[0], "average"), (axes[1], "99th-percentile")):
            ax.set_xlabel("offered load (fraction of host link rate)")
            ax.set_ylabel(f"{what} FCT (\u00b5s)")
            ax.set_title(f"{what[0].upper() + what[1:]} FCT of all flows vs load"
                         + (f" ({short_key(facet)} {fv})" if facet else ""))
            ax.set_xticks(xs)
            ax.set_ylim(bottom=0)
        axes[0].legend(frameon=False)
    fig.tight_layout()
    return save(fig, out_dir, name)


# ----------------------------------------------------------------------------------------------------------
# Rate and queue time series


def read_rates(run):
    """rates.csv -> ({flow id: (t_us[], gbps[])}, {port id: (t_us[], gbps[])})."""
    df = run.data.rates
    flows, ports = defaultdict(lambda: ([], [])), defaultdict(lambda: ([], []))
    if df is None:
        return {}, {}
    for kind, ident, t_us, gbps in zip(df["kind"].tolist(), df["id"].tolist(), df["time_us"].tolist(),
                                       df["gbps"].tolist()):
        t, g = (flows if kind == "flow" else ports)[ident]
        t.append(t_us)
        g.append(gbps)
    return dict(flows), dict(ports)


def port_label(node, peer, port=None, arrow="\u2192"):
    """A monitored port as the figures name it: "s0\u2192s3" (s0's port towards s3), with the port index on
    the node when it is given ("s0 port 2\u2192s3", for parallel links)."""
    return f"{node}{'' if port is None else f' port {port}'}{arrow}{peer}"


def rate_port_label(ident):
    """rates.csv's port id ("NODE:PEER", or "NODE:PEER:PORT" for one of several parallel ports) as a label."""
    parts = str(ident).split(":")
    if len(parts) == 3:
        return port_label(parts[0], parts[1], parts[2])
    if len(parts) == 2:
        return port_label(parts[0], parts[1])
    return str(ident)


def read_queues(run, window=None, name="queues.csv", arrow="\u2192"):
    """queues.csv -> {"NODE\u2192PEER": (t_us[], bytes[])}, optionally within (t0, t1) us; a port that shares
    its node and peer with another monitored port (parallel links) is "NODE port K\u2192PEER", so that each
    port is a series of its own. Also reads input_queues.csv (same columns; draw it with arrow="\u2190":
    NODE's input from PEER)."""
    df = run.data.input_queues if name == "input_queues.csv" else run.data.queues
    if df is None:
        return {}
    ports = defaultdict(set)
    for node, port, peer in set(zip(df["node"].tolist(), df["port"].tolist(), df["peer"].tolist())):
        ports[(node, peer)].add(port)
    qs = defaultdict(lambda: ([], []))
    for t, node, port, peer, q in zip(df["time_us"].tolist(), df["node"].tolist(), df["port"].tolist(),
                                      df["peer"].tolist(), df["queue_bytes"].tolist()):
        if window and not (window[0] <= t <= window[1]):
            continue
        parallel = len(ports[(node, peer)]) > 1
        a, b = qs[port_label(node, peer, int(port) if parallel else None, arrow)]
        a.append(t)
        b.append(float(q))
    return dict(qs)


# Link events (summary.json "link_events"): a vertical line at each, in the colour of its kind.
EVENT_STYLES = OrderedDict([
    ("down", {"color": "#C00000", "ls": "-", "what": "a link went down"}),
    ("up", {"color": "#009E73", "ls": "-", "what": "a link came back up"}),
    ("rate", {"color": "#7F3FBF", "ls": "-", "what": "a link's rate changed"}),
    ("loss", {"color": "#7F3FBF", "ls": "-.", "what": "a link's loss rate changed"}),
    ("routes", {"color": "#666666", "ls": ":", "what": "routes recomputed"}),
])


def link_events(run):
    """summary.json's link events: [(time_us, event text, kind)] in time order, kind one of EVENT_STYLES'
    keys ("routes" for "routes recomputed"); [] for a run without [[events]]."""
    log = (run.summary.get("link_events") or {}).get("log") or []
    out = []
    for e in log:
        t, what = to_float(e.get("time_us")), str(e.get("event", ""))
        if math.isnan(t):
            continue
        kind = what.split(" ", 1)[0]
        out.append((t, what, kind if kind in EVENT_STYLES else "routes"))
    return sorted(out, key=lambda e: e[0])


def mark_link_events(ax, events, window, label=False):
    """A vertical line on `ax` (x in ms) at each link event inside `window` (us); with `label`, the event's
    text beside its line (route recomputations only as a line). Returns the events drawn."""
    drawn = []
    for t, what, kind in events:
        if window and not (window[0] <= t <= window[1]):
            continue
        st = EVENT_STYLES[kind]
        ax.axvline(t / 1e3, color=st["color"], ls=st["ls"], lw=1.0, alpha=0.85, zorder=1.5, gid="link-event")
        if label and kind != "routes":
            ax.text(t / 1e3, 0.98, f" {what}", transform=ax.get_xaxis_transform(), rotation=90, va="top",
                    ha="left", fontsize=7, color=st["color"], clip_on=True)
        drawn.append((t, what, kind))
    return drawn


def link_events_caption(drawn):
    """The caption's sentence on the link-event lines drawn ([] -> "")."""
    if not drawn:
        return ""
    kinds = [k for k in EVENT_STYLES if any(d[2] == k for d in drawn)]
    names = {"#C00000": "red", "#009E73": "green", "#7F3FBF": "purple", "#666666": "grey"}
    lines = {"-": "", "-.": "dash-dotted ", ":": "dotted "}
    keys = "; ".join(f"{lines[EVENT_STYLES[k]['ls']]}{names[EVENT_STYLES[k]['color']]}: "
                     f"{EVENT_STYLES[k]['what']}" for k in kinds)
    seen = list(OrderedDict.fromkeys(f"{w} at {fmt_time_us(t)}" for t, w, _ in drawn))
    return f"Vertical lines: link events (summary.json link_events; {keys}): {', '.join(seen)}."


def fmt_time_us(t):
    return f"{t / 1e3:g} ms" if t >= 1e4 else f"{t:g} \u00b5s"


def pick_flows(run, rates, limit=8):
    """Flows worth drawing: those of the smallest non-default class (e.g. an incast), else the largest."""
    fl = run.flows()
    have = set(rates)
    by_class = defaultdict(list)
    for i, c in enumerate(fl["class"]):
        if str(fl["id"][i]) in have:
            by_class[c].append(i)
    cands = [c for c in by_class if c != "default" and 1 < len(by_class[c]) <= 32]
    if cands:
        c = min(cands, key=lambda c: len(by_class[c]))
        idx = by_class[c][:limit]
        what = f"the {len(by_class[c])} flows of class '{c}'"
        if len(by_class[c]) > limit:
            what += f" (first {limit})"
    else:
        idx = sorted((i for v in by_class.values() for i in v), key=lambda i: -fl["size"][i])[:limit]
        what = f"the {len(idx)} largest flows"
    return [(str(fl["id"][i]), int(fl["src"][i]), int(fl["dst"][i])) for i in idx], what


FLOW_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
QUEUE_COLORS = ["#333333", "#D55E00", "#0072B2"]
# Monitored ports' wire throughput, drawn over the flows: dashed lines, one colour each, then other dash
# patterns once the colours are used up, so that no two ports share a line.
PORT_COLORS = ["#000000", "#E69F00", "#56B4E9", "#CC79A7", "#009E73", "#F0E442", "#0072B2", "#D55E00"]
PORT_DASHES = [(0, (5, 2)), (0, (2, 1.5)), (0, (6, 2, 1.5, 2)), (0, (1, 1))]


def port_style(i):
    """The line of the i-th monitored port: a colour of PORT_COLORS and a dash pattern, distinct for every i
    below len(PORT_COLORS) x len(PORT_DASHES)."""
    return {"color": PORT_COLORS[i % len(PORT_COLORS)],
            "ls": PORT_DASHES[(i // len(PORT_COLORS)) % len(PORT_DASHES)]}


def wrap_label(label, width=40):
    """A series label on several lines (at its commas) when it is long, for panel titles."""
    if len(label) <= width:
        return label
    lines, cur = [], ""
    for part in label.split(", "):
        if cur and len(cur) + 2 + len(part) > width:
            lines.append(cur + ",")
            cur = part
        else:
            cur = f"{cur}, {part}" if cur else part
    return "\n".join(lines + [cur])


def interleave_schemes(runs):
    """Runs reordered round robin over their scheme, so that a figure showing the first few shows every
    scheme."""
    by = OrderedDict()
    for r in runs:
        by.setdefault(r.summary.get("scheme", ""), []).append(r)
    out = []
    while any(by.values()):
        for k in by:
            if by[k]:
                out.append(by[k].pop(0))
    return out


def fig_timeseries(runs, out_dir, name="timeseries", title_suffix="", queues_shown=3, flows=None, window=None):
    """runs: list of Run (one column each). Row 1: goodput of selected flows (+ monitored port throughput);
    row 2: the monitored egress queues with the highest peaks (over all runs) in the same window; row 3, when
    input_queues.csv exists: the same for the monitored input queues (input-and-output queued switches).
    flows: optional {flow id: label} to draw instead of the automatic choice (flows need not have finished);
    window: optional (t0, t1) in us. Returns (path, caption) or (None, "")."""
    data = []
    for run in runs:
        if not any(run.file(f) for f in ("rates.csv", "queues.csv", "input_queues.csv")):
            continue
        rates, ports = read_rates(run)
        if flows:
            picked = [(str(fid), label, None) for fid, label in flows.items() if str(fid) in rates]
            what = ", ".join(label for label in flows.values())
        else:
            picked, what = pick_flows(run, rates) if rates and run.file("flows.csv") else ([], "")
        data.append((run, rates, ports, picked, what))
    if not data:
        return None, ""
    left_out = len(data) - MAX_RUNS
    data = data[:MAX_RUNS]
    # A common window: the selected flows' lifetime with a margin, else the whole run.
    t0, t1 = (window[0], window[1]) if window else (math.inf, -math.inf)
    for run, flows, ports, picked, _ in data:
        for fid, _, _ in picked:
            if window:
                break
            t = flows[fid][0]
            t0, t1 = min(t0, t[0]), max(t1, t[-1])
    events = [link_events(run) for run, *_ in data]
    if not window:  # the link events inside the run too
        for ev in events:
            for t, *_ in ev:
                t0, t1 = min(t0, t), max(t1, t)
    if not math.isfinite(t0):
        t0, t1 = 0.0, max(r.summary.get("simulated_time_ms", 1) for r, *_ in data) * 1e3
    if not window:
        pad = 0.1 * (t1 - t0) + 10
        window = (max(0.0, t0 - pad), t1 + pad)
    # Every monitored port keeps its line style in every column.
    port_order = list(OrderedDict.fromkeys(pid for _, _, ports, _, _ in data for pid in ports))
    # Queue rows: egress queues (queues.csv), then input queues (input_queues.csv): (kind, per-run data,
    # the keys shown, their peak, divisor, unit).
    panels = []
    for kind, fname, arrow in (("egress", "queues.csv", "\u2192"), ("input", "input_queues.csv", "\u2190")):
        queues = [read_queues(run, window, fname, arrow) for run, *_ in data]
        peak = defaultdict(float)
        for q in queues:
            for k, (_, b) in q.items():
                peak[k] = max(peak[k], max(b) if b else 0)
        shown = [k for k in sorted(peak, key=lambda k: -peak[k]) if peak[k] > 0][:queues_shown]
        if shown:
            qmax = max(peak[k] for k in shown)
            qdiv, qunit = (1e6, "MB") if qmax >= 2e6 else (1e3, "KB")
            panels.append((kind, queues, shown, qmax, qdiv, qunit))
    has_rates = any(picked or ports for _, _, ports, picked, _ in data)
    nrows = int(has_rates) + len(panels)
    if nrows == 0:
        return None, ""
    # Small multiples: at most MAX_COLS runs side by side, further runs in further blocks of rows.
    ncols = min(len(data), MAX_COLS)
    blocks = -(-len(data) // ncols)
    fig, grid = plt.subplots(nrows * blocks, ncols, figsize=(max(6.5, 3.6 * ncols + 1.6), 3.0 * nrows * blocks + 0.4),
                             sharex=True, squeeze=False)
    for i in range(len(data), blocks * ncols):  # empty places of the last block
        for rr in range(nrows):
            grid[(blocks - 1) * nrows + rr][i % ncols].set_visible(False)
    rmax = 0.0
    rate_axes = []
    drawn = []  # link events drawn
    for i, (run, flows, ports, picked, what) in enumerate(data):
        c = i % ncols
        axes = grid[(i // ncols) * nrows:(i // ncols + 1) * nrows]
        last_col = c == ncols - 1 or i == len(data) - 1
        r = 0
        if has_rates:
            ax = axes[r][c]
            rate_axes.append(ax)
            for j, (fid, src, dst) in enumerate(picked):
                t, g = flows[fid]
                rmax = max(rmax, max(g))
                ax.step(np.array(t) / 1e3, g, where="post", lw=1.1, color=FLOW_COLORS[j % len(FLOW_COLORS)],
                        label=src if dst is None else f"flow {fid} ({src}\u2192{dst})")
            for k, pid in enumerate(port_order):
                if pid not in ports:
                    continue
                t, g = ports[pid]
                t = np.array(t)
                m = (t >= window[0]) & (t <= window[1])
                if m.any():
                    rmax = max(rmax, float(np.max(np.array(g)[m])))
                ax.step(t[m] / 1e3, np.array(g)[m], where="post", lw=1.3, label=f"{rate_port_label(pid)} (wire)",
                        **port_style(k))
            ax.set_title(wrap_label(f"{run.label}{title_suffix}") + ": rates", fontsize=9)
            if c == 0:
                ax.set_ylabel("rate (Gb/s)")
            if last_col:
                ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
            r += 1
        for kind, queues, shown, qmax, qdiv, qunit in panels:
            ax = axes[r][c]
            for j, k in enumerate(shown):
                q = queues[c].get(k)
                if q:
                    ax.plot(np.array(q[0]) / 1e3, np.array(q[1]) / qdiv,
                            color=QUEUE_COLORS[j % len(QUEUE_COLORS)], lw=1.2, label=f"{kind} {k}")
            ax.set_title((f"{wrap_label(run.label + title_suffix)}: " if r == 0 else "") +
                         f"busiest {'input ' if kind == 'input' else ''}queues", fontsize=9)
            if c == 0:
                ax.set_ylabel(f"{kind} queue ({qunit})")
            ax.set_ylim(0, qmax / qdiv * 1.05 if qmax > 0 else 1)
            if last_col:
                ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
            r += 1
        for rr in range(nrows):
            axes[rr][c].set_xlim(window[0] / 1e3, window[1] / 1e3)
            drawn.extend(mark_link_events(axes[rr][c], events[i], window, label=rr == 0))
        axes[nrows - 1][c].set_xlabel("simulated time (ms)")
    for ax in rate_axes:
        ax.set_ylim(0, rmax * 1.05 if rmax > 0 else 1)
    fig.tight_layout()
    desc = data[0][4] or "the selected flows"
    cap = []
    if left_out > 0:
        cap.append(f"The first {len(data)} runs; {left_out} more are left out (see the tables).")
    if has_rates:
        dashed = ("; dashed, one line per port: wire throughput of the monitored ports (NODE\u2192PEER: NODE's "
                  "port towards PEER)") if any(d[2] for d in data) else ""
        cap.append(f"Rates: goodput per rate bin of {desc}{dashed}.")
    for kind, _, shown, *_ in panels:
        if kind == "egress":
            cap.append(f"Queues: the {len(shown)} monitored egress queue(s) with the highest peak in this window "
                       "(NODE\u2192PEER: NODE's port towards PEER).")
        else:
            cap.append(f"Input queues: the {len(shown)} monitored input queue(s) with the highest peak in this "
                       "window (NODE\u2190PEER: NODE's input from PEER; all priorities).")
    ev = link_events_caption(drawn)
    if ev:
        cap.append(ev)
    return save(fig, out_dir, name), " ".join(cap)


# ----------------------------------------------------------------------------------------------------------
# PFC


def fig_pfc_sweep(sweep, out_dir, name="pfc"):
    if not sweep.all_rows or "pauses" not in sweep.all_rows[0]:
        return None
    panels = (("pauses", 1.0, "PFC PAUSE frames sent (mean over seeds, 95 % CI)", "PFC PAUSE frames sent, all ports"),
              ("paused_time_us", 1e3, "paused time summed over ports (ms)", "Time ports spent paused, all ports"))
    fig, axes = bar_grid(sweep, len(panels), ncols=2)
    for ax, (col, div, label, title) in zip(axes, panels):
        means, half = means_by_load_and_series(sweep, sweep.all_rows, col, 0.0, ci=True)
        values = [[v / div for v in vals] for vals in means]
        grouped_bars(ax, sweep.series, sweep.loads, values, label, [[h / div for h in hw] for hw in half])
        ax.set_title(title, fontsize=10)
    if len(sweep.loads) > 1 or sweep.loads[0]:
        axes[0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return save(fig, out_dir, name)


def bar_labels(ax, bars, vals, nbars, fontsize=7):
    """Value labels on bars with data, only when there are few enough bars not to overlap."""
    if nbars > 12:
        return
    ax.bar_label(bars, labels=["" if v != v else (f"{v:,.0f}" if v >= 100 else f"{v:.3g}") for v in vals],
                 fontsize=fontsize, padding=1)


# Up to this many series, bars stand side by side; beyond, they lie (series names on the y axis, readable
# however many there are).
MAX_VERTICAL_SERIES = 6


def bar_grid(sweep, n, ncols=MAX_COLS):
    """A facet grid for n panels of grouped_bars over the sweep's series and loads."""
    nbars = len(sweep.series) * max(1, len(sweep.loads))
    if len(sweep.series) > MAX_VERTICAL_SERIES:
        return facet_grid(n, width=6.0, height=0.16 * nbars + 1.2, ncols=min(ncols, 2))
    return facet_grid(n, width=min(4.6, max(3.4, 0.3 * nbars + 1.5)), height=3.6, ncols=ncols)


def means_by_load_and_series(sweep, rows, col, missing=float("nan"), ci=False):
    """[j][i]: the mean over `rows` (seeds) of column `col` for load j and series i (nan: no row with a
    value; `missing`: the value of an empty cell). ci=True: (means, half-widths of their 95 % confidence
    intervals over seeds; 0 with one seed)."""
    out, half = [], []
    for l in sweep.loads:
        vals, hw = [], []
        for s in sweep.series:
            v = [to_float(r.get(col), missing) for r in rows if sweep.series_of(r) == s and r.get("load") == l]
            v = [a for a in v if not math.isnan(a)]
            m, h = mean_ci95(v) if v else (float("nan"), 0.0)
            vals.append(m)
            hw.append(h)
        out.append(vals)
        half.append(hw)
    return (out, half) if ci else out


def grouped_bars(ax, series, loads, values, label, errors=None):
    """values[j][i]: series i at loads[j] (nan: no data, no bar); errors[j][i]: an error bar's half-width (the
    95 % confidence interval over seeds), drawn when non-zero. Vertical bars for up to MAX_VERTICAL_SERIES
    series, horizontal ones beyond."""
    horizontal = len(series) > MAX_VERTICAL_SERIES
    width = 0.8 / max(1, len(loads))
    x = np.arange(len(series))
    nbars = len(series) * len(loads)
    for j, l in enumerate(loads):
        vals = values[j]
        pos = x + (j - (len(loads) - 1) / 2) * width
        draw = ax.barh if horizontal else ax.bar
        bars = draw(pos, np.nan_to_num(vals), width * 0.92, label=load_label(l) or "all",
                    color=COLORS[j % len(COLORS)])
        for b, v in zip(bars, vals):
            if v != v:
                b.set_visible(False)
        if errors is not None and any(e > 0 for e in errors[j]):
            tips = np.nan_to_num(vals)
            if horizontal:
                ax.errorbar(tips, pos, xerr=errors[j], fmt="none", ecolor="#333", capsize=2, lw=0.9)
            else:
                ax.errorbar(pos, tips, yerr=errors[j], fmt="none", ecolor="#333", capsize=2, lw=0.9)
        bar_labels(ax, bars, vals, nbars)
    if horizontal:
        ax.set_yticks(x)
        ax.set_yticklabels(series, fontsize=8)
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(label)
        ax.margins(x=0.12)
    else:
        ax.set_xticks(x)
        ax.set_xticklabels(series, rotation=30 if len(series) > 3 else 0,
                           ha="right" if len(series) > 3 else "center", fontsize=8)
        ax.grid(axis="x", visible=False)
        ax.set_ylabel(label)
        ax.margins(y=0.12)


def nonempty_buckets(sweep):
    """The size buckets (results.csv labels, in order) that hold a flow in at least one run."""
    return list(OrderedDict.fromkeys(r["bucket"] for r in sweep.rows
                                     if r["bucket"] != "all" and to_float(r.get("count"), 0) > 0))


def fig_fct_bars_sweep(sweep, out_dir, name="fct_bars"):
    """Average and p99 FCT of all flows, and p99 FCT of the smallest and largest size buckets that hold
    flows, per scheme. A scheme and load without data gets no bar (not a zero bar)."""
    if not sweep.all_rows or "fct_avg_us" not in sweep.all_rows[0]:
        return None
    order = nonempty_buckets(sweep)
    panels = [("all flows: average FCT", "all", "fct_avg_us"), ("all flows: p99 FCT", "all", "fct_p99_us")]
    if order:
        panels.append((f"smallest flows ({order[0]}): p99 FCT", order[0], "fct_p99_us"))
    if len(order) > 1:
        panels.append((f"largest flows ({order[-1]}): p99 FCT", order[-1], "fct_p99_us"))
    fig, axes = bar_grid(sweep, len(panels), ncols=4)
    for ax, (title, bucket, col) in zip(axes, panels):
        values, half = means_by_load_and_series(sweep, [r for r in sweep.rows if r["bucket"] == bucket
                                                        and to_float(r.get("count"), 0) > 0], col, ci=True)
        grouped_bars(ax, sweep.series, sweep.loads, values, "FCT (µs, mean over seeds, 95 % CI)", half)
        ax.set_title(title, fontsize=10)
    if len(sweep.loads) > 1 or sweep.loads[0]:
        axes[0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return save(fig, out_dir, name)


def numeric_values(values):
    """The values as floats when every one is a number (else None)."""
    f = [to_float(v) for v in values]
    return None if any(math.isnan(v) for v in f) else f


def facet_grid(n, width=3.8, height=3.2, ncols=MAX_COLS):
    """A figure of n small multiples, `ncols` per row; returns (fig, flat list of the n axes)."""
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols + 0.8, height * nrows + 0.5), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def fig_vs_key(sweep, key, out_dir, name):
    """Metrics against a numeric grid key: p99 slowdown and average FCT of all flows, one line per scheme,
    one panel per combination of the other grid keys (seed pooled: mean over seeds)."""
    values = list(OrderedDict.fromkeys(r.get(key, "") for r in sweep.all_rows))
    xs = numeric_values(values)
    if xs is None or len(values) < 2:
        return None
    order = sorted(range(len(values)), key=lambda i: xs[i])
    values, xs = [values[i] for i in order], [xs[i] for i in order]
    scheme_key = "scheme" if "scheme" in sweep.grid else ("cc.scheme" if "cc.scheme" in sweep.grid else None)
    others = [k for k in sweep.grid if k not in (key, "seed", scheme_key)]
    facets = list(OrderedDict.fromkeys(tuple(r.get(k, "") for k in others) for r in sweep.all_rows))
    facets = facets[: MAX_COLS * 4]
    schemes = scheme_order(r.get(scheme_key or "scheme", "") for r in sweep.all_rows)
    metrics = (("slowdown_p99", "p99 FCT slowdown"), ("fct_avg_us", "average FCT (µs)"))
    panels = [(m, f) for f in facets for m in metrics]
    # The two metrics side by side; two facets per row when there are several.
    fig, axes = facet_grid(len(panels), width=3.2, ncols=2 if len(facets) == 1 else 4)
    for ax, ((col, ylabel), facet) in zip(axes, panels):
        for i, sch in enumerate(schemes):
            y = []
            for v in values:
                vals = [to_float(r.get(col)) for r in sweep.all_rows
                        if r.get(key) == v and r.get(scheme_key or "scheme", "") == sch
                        and tuple(r.get(k, "") for k in others) == facet]
                vals = [a for a in vals if not math.isnan(a)]
                y.append(np.mean(vals) if vals else np.nan)
            ax.plot(xs, y, label=sch, lw=1.6, ms=5, **style(i))
        where = ", ".join(f"{short_key(k)}={v}" for k, v in zip(others, facet))
        ax.set_title(f"{ylabel}{' (' + where + ')' if where else ''}", fontsize=9)
        ax.set_xlabel(short_key(key))
        ax.set_ylabel(ylabel)
        ax.set_xticks(xs)
        ax.set_xticklabels([fmt_bytes(x) if key.endswith("_bytes") else f"{x:g}" for x in xs], fontsize=8,
                           rotation=30 if len(xs) > 5 else 0)
        ax.set_ylim(bottom=0)
    axes[0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return save(fig, out_dir, name)


def fig_classes_sweep(sweep, out_dir, name="classes"):
    """Per traffic class (results.csv class rows): p99 and median slowdown per series, one panel per class
    and metric; bars per load; a class with no finished flow in a run gets no bar."""
    if not sweep.classes:
        return None
    panels = [(c, col, q) for c in sweep.classes for col, q in (("slowdown_p99", "p99"), ("slowdown_p50", "p50"))]
    fig, axes = bar_grid(sweep, len(panels), ncols=2)
    for ax, (cls, col, q) in zip(axes, panels):
        values = means_by_load_and_series(sweep, [r for r in sweep.class_rows if r["class"] == cls], col)
        grouped_bars(ax, sweep.series, sweep.loads, values, f"{q} FCT slowdown (mean over seeds)")
        ax.set_title(f"class {cls}: {q} slowdown", fontsize=10)
    if len(sweep.loads) > 1 or sweep.loads[0]:
        axes[0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return save(fig, out_dir, name)


def fig_pfc_run(run, out_dir, name="pfc", top=12):
    """A single run: the ports with the most PAUSE frames sent or the longest paused egress."""
    ports = run.summary.get("pfc", {}).get("ports", [])
    if not ports:
        return None
    by_sent = sorted(ports, key=lambda p: -p.get("pauses_sent", 0))[:top]
    by_time = sorted(ports, key=lambda p: -p.get("paused_time_us", 0))[:top]

    def label(p):
        return f"{p.get('node_name', p['node'])}\u2192{p.get('peer_name', p['peer'])}"

    n = max(len(by_sent), len(by_time))
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.32 * n + 1.7))
    for ax, rows, key, div, color in ((axes[0], by_sent, "pauses_sent", 1.0, COLORS[0]),
                                      (axes[1], by_time, "paused_time_us", 1e3, COLORS[1])):
        y = np.arange(len(rows))
        ax.barh(y, [p.get(key, 0) / div for p in rows], color=color)
        ax.set_yticks(y)
        ax.set_yticklabels([label(p) for p in rows])
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
    axes[0].set_xlabel("PAUSE frames sent (by the node, to the peer)")
    axes[1].set_xlabel("time the egress port was paused (ms)")
    axes[0].set_title("Most PAUSE frames sent (node \u2192 peer)")
    axes[1].set_title("Longest paused egress ports (node \u2192 peer)")
    fig.tight_layout()
    return save(fig, out_dir, name)


# ----------------------------------------------------------------------------------------------------------
# Buffer occupancy CDF


def read_buffer_cdfs(run):
    """buffer.csv -> {switch: (bytes[], cdf[])}."""
    out = defaultdict(lambda: ([], []))
    df = run.data.buffer
    if df is not None:
        for sw, nbytes, cdf in zip(df["switch"].tolist(), df["buffer_bytes"].tolist(), df["cdf"].tolist()):
            b, c = out[sw]
            b.append(float(nbytes))
            c.append(float(cdf))
    return dict(out)


def pooled_cdf(cdfs, grid):
    """The CDF of all switches' samples together (every switch has the same number of samples)."""
    acc = np.zeros_like(grid)
    for b, c in cdfs.values():
        idx = np.searchsorted(np.array(b), grid, side="right") - 1
        acc += np.where(idx >= 0, np.array(c)[np.clip(idx, 0, None)], 0.0)
    return acc / max(1, len(cdfs))


def fig_buffer_cdf(groups, out_dir, name="buffer_cdf", title_suffix=""):
    """groups: OrderedDict label -> Run. Left: all switches pooled; right: the switch with the highest p99."""
    data = OrderedDict()
    for label, run in groups.items():
        if run is None:
            continue
        c = read_buffer_cdfs(run)
        if c:
            data[label] = c
    if not data:
        return None
    vmax = max(max(b) for c in data.values() for b, _ in c.values())
    div, unit = (1e6, "MB") if vmax >= 2e6 else (1e3, "KB")
    grid = np.linspace(0, vmax * 1.02 if vmax > 0 else 1, 600)

    def p99(b, c):
        return rocesim.cdf_quantile(b, c, 0.99)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for i, (label, cdfs) in enumerate(data.items()):
        st = style(i)
        axes[0].plot(grid / div, pooled_cdf(cdfs, grid), color=st["color"], lw=1.6, label=label)
        sw = max(cdfs, key=lambda s: p99(*cdfs[s]))
        b, c = cdfs[sw]
        axes[1].step(np.r_[0, b, grid[-1]] / div, np.r_[0, c, 1.0], where="post", color=st["color"], lw=1.6,
                     label=f"{label} ({sw})")
    axes[0].set_title(f"All switches pooled{title_suffix}")
    axes[1].set_title(f"Busiest switch (highest p99){title_suffix}")
    for ax in axes:
        ax.set_xlabel(f"shared buffer occupancy ({unit})")
        ax.set_xlim(left=0)
        ax.set_ylim(0, 1.02)
        ax.legend(loc="lower right", frameon=False)
    axes[0].set_ylabel("fraction of samples \u2264 x (CDF)")
    fig.tight_layout()
    return save(fig, out_dir, name)


# ----------------------------------------------------------------------------------------------------------
# Packet timelines (packet_trace.csv, from [monitors] packet_trace)

TIMELINE_MAX_PACKETS = 300  # packets (sequence numbers) a timeline draws at most: the first ones


def packet_copies(df):
    """The rows of one flow (time order) as the copies of its packets, in the order sent: dicts with seq,
    retransmit, t_send, hops [{node, peer, t_enq, t_deq, queue_bytes, paused_us}], marks [t], drop (t, detail)
    or None, receive (t, detail) or None. A row goes to the oldest copy of its seq at that point of its path
    (an enqueue or an arrival to one on a wire, a dequeue to one queued at that node), so that a
    retransmission sent while its original is still on its way is told apart."""
    copies, live = [], defaultdict(list)  # seq -> copies not yet received or dropped
    cols = ["time_us", "seq", "node", "peer", "event", "detail", "queue_bytes", "paused_us"]
    for t, seq, node, peer, ev, detail, q, paused in zip(*(df[c].tolist() for c in cols)):
        if ev in ("send", "retransmit"):
            c = {"seq": seq, "retransmit": ev == "retransmit", "t_send": t, "hops": [], "marks": [], "drop": None,
                 "receive": None, "queued": False}
            copies.append(c)
            live[seq].append(c)
            continue
        cands = live.get(seq, [])
        if ev in ("dequeue", "mark"):
            c = next((c for c in cands if c["hops"] and c["hops"][-1]["node"] == node and
                      (c["queued"] if ev == "dequeue" else not c["queued"])), None)
        else:  # enqueue, drop, receive: a copy on a wire (a buffer drop comes before its enqueue)
            c = next((c for c in cands if not c["queued"]), None)
        if c is None:
            continue
        if ev == "enqueue":
            c["hops"].append({"node": node, "peer": peer, "t_enq": t, "t_deq": None, "queue_bytes": q,
                              "paused_us": 0.0})
            c["queued"] = True
        elif ev == "dequeue":
            c["hops"][-1].update(t_deq=t, paused_us=0.0 if math.isnan(paused) else paused)
            c["queued"] = False
        elif ev == "mark":
            c["marks"].append(t)
        else:
            c["drop" if ev == "drop" else "receive"] = (t, detail)
            cands.remove(c)
    return copies


def pick_traced_flow(df):
    """The traced flow most worth a look: the most drops, retransmissions and marks, then the longest pause
    waits, then the longest queueing; ties to the smallest id."""
    def score(g):
        ev = g["event"]
        deq = g[ev == "dequeue"]
        return (int(ev.isin(["drop", "retransmit", "mark"]).sum()), float(deq["paused_us"].fillna(0).sum()),
                int((g[ev == "enqueue"]["queue_bytes"].fillna(0) > 0).sum()))
    best = None
    for flow, g in df.groupby("flow", sort=True):
        k = score(g)
        if best is None or k > best[0]:
            best = (k, flow)
    return None if best is None else int(best[1])


def fig_packet_timeline(run, out_dir, name="packet_timeline", flow=None):
    """One traced flow's packets over time: one row per packet (by sequence number), a thin line from its
    send to its receipt or drop, a thick segment for each wait in a switch queue (a colour per hop), markers
    for ECN marks, drops and retransmissions; beside it, each packet's wait per hop and the part of it its
    egress was paused. Returns (path, caption) or (None, "")."""
    df = run.data.packet_trace
    if df is None or not len(df):
        return None, ""
    flows = sorted(int(f) for f in df["flow"].unique())
    if flow is None:
        flow = pick_traced_flow(df)
    g = df[df["flow"] == flow]
    if not len(g):
        return None, ""
    copies = packet_copies(g)
    seqs = sorted({c["seq"] for c in copies})
    shown = seqs[:TIMELINE_MAX_PACKETS]
    row_of = {s: i for i, s in enumerate(shown)}
    copies = [c for c in copies if c["seq"] in row_of]
    hop_names = list(OrderedDict.fromkeys(port_label(h["node"], h["peer"]) for c in copies for h in c["hops"]))
    hop_color = {h: COLORS[(i + 1) % len(COLORS)] for i, h in enumerate(hop_names)}
    fig, (ax, aw) = plt.subplots(1, 2, figsize=(12, 0.012 * len(shown) + 4.2), sharey=True,
                                 gridspec_kw={"width_ratios": [3, 1.2]})
    wire = [[], []]
    for c in copies:
        y = row_of[c["seq"]]
        end = c["receive"] or c["drop"]
        t_end = end[0] if end else max([c["t_send"]] + [h["t_deq"] or h["t_enq"] for h in c["hops"]])
        wire[0] += [c["t_send"], t_end, None]
        wire[1] += [y, y, None]
        for h in c["hops"]:
            if h["t_deq"] is not None and h["t_deq"] > h["t_enq"]:
                ax.plot([h["t_enq"], h["t_deq"]], [y, y], color=hop_color[port_label(h["node"], h["peer"])],
                        lw=2.6, solid_capstyle="butt", zorder=2)
    ax.plot(wire[0], wire[1], color="#999999", lw=0.6, zorder=1)
    kinds = [("retransmit", "o", "#7F3FBF", "retransmission sent",
              [(c["t_send"], row_of[c["seq"]]) for c in copies if c["retransmit"]]),
             ("mark", "^", "#E69F00", "ECN mark (at dequeue)",
              [(t, row_of[c["seq"]]) for c in copies for t in c["marks"]]),
             ("drop", "x", "#C00000", "dropped", [(c["drop"][0], row_of[c["seq"]]) for c in copies if c["drop"]]),
             ("ooo", "s", "#555555", "received out of order or again",
              [(c["receive"][0], row_of[c["seq"]]) for c in copies
               if c["receive"] and c["receive"][1] not in ("in_order", "")])]
    for gid, m, color, label, pts in kinds:
        if pts:
            colors = {"facecolors": "none", "edgecolors": color} if m in "os" else {"color": color}
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=m, s=22, linewidths=1.0, zorder=3,
                       label=f"{label} ({len(pts)})", gid=f"timeline-{gid}", **colors)
    for h in hop_names:
        ax.plot([], [], color=hop_color[h], lw=2.6, label=f"in the queue of {h}")
    ax.set_xlabel("time (\u00b5s)")
    ax.set_ylabel("packet (in sequence order)")
    ax.set_title(f"Packets of flow {flow}")
    ax.invert_yaxis()
    ax.legend(loc="best", frameon=True, framealpha=0.85, fontsize=8)
    # Right: per hop, each copy's time in the queue (dot) and the part its egress was paused (+).
    for h in hop_names:
        ys, waits, paused = [], [], []
        for c in copies:
            for x in c["hops"]:
                if port_label(x["node"], x["peer"]) == h and x["t_deq"] is not None:
                    ys.append(row_of[c["seq"]])
                    waits.append(x["t_deq"] - x["t_enq"])
                    paused.append(x["paused_us"])
        aw.scatter(waits, ys, s=7, color=hop_color[h], label=h, gid="timeline-wait")
        if any(p > 0 for p in paused):
            aw.scatter(paused, ys, s=14, marker="+", linewidths=0.8, color=hop_color[h], label=f"{h}: paused",
                       gid="timeline-paused")
    aw.set_xlabel("time in the queue (\u00b5s)")
    aw.set_title("Wait per hop (+: paused part)")
    aw.set_xlim(left=0)
    aw.legend(loc="best", frameon=False, fontsize=8)
    fig.tight_layout()
    path = save(fig, out_dir, name)
    left = len(seqs) - len(shown)
    caption = (f"packet_trace.csv, flow {flow}: one row per packet (sequence numbers in order), a grey line "
               "from its send to its receipt (or drop), a thick segment for each wait in a switch's egress "
               "queue, one colour per hop. Right: each packet's wait at each hop (dots), and (+) how long that "
               "queue's priority was paused by PFC meanwhile.")
    if len(flows) > 1:
        others = ", ".join(str(f) for f in flows if f != flow)
        caption += (f" The traced flow with the most drops, retransmissions and marks (then pause waits) is "
                    f"drawn; also traced: {others} (rocesim_plots.fig_packet_timeline(run, dir, flow=ID)).")
    if left > 0:
        caption += f" Only the first {len(shown)} of its {len(seqs)} packets are drawn."
    if run.summary.get("monitors", {}).get("packet_trace", {}).get("truncated"):
        caption += " The trace was cut at max_rows: later packets are missing."
    return path, caption


# ----------------------------------------------------------------------------------------------------------
# Everything for a directory


# ----------------------------------------------------------------------------------------------------------
# Collective and dependency_trace jobs (collectives.csv, collective_steps.csv, summary.json "jobs")


def read_steps(run, iteration=None):
    """{job: (iteration, [(step, start_us, finish_us)])} from collective_steps.csv: `iteration`, or each
    job's last finished iteration (steady state); times relative to the iteration's start."""
    steps_df, coll_df = run.data.collective_steps, run.data.collectives
    if steps_df is None or coll_df is None:
        return {}
    starts, chosen = {}, {}
    for r in coll_df.to_dict("records"):
        if math.isnan(r["finish_us"]) or r.get("trace_id"):  # cut short by the run's end; a trace's collective
            continue
        it = int(r["iteration"])
        starts[(r["job"], it)] = to_float(r["start_us"])
        if iteration is None or it == iteration:
            if iteration is not None or it >= chosen.get(r["job"], -1):
                chosen[r["job"]] = it
    out = OrderedDict()
    for r in steps_df.to_dict("records"):
        job, it = r["job"], int(r["iteration"])
        if chosen.get(job) != it or math.isnan(r["finish_us"]):
            continue
        t0 = starts[(job, it)]
        out.setdefault(job, (it, []))[1].append(
            (int(r["step"]), to_float(r["start_us"]) - t0, to_float(r["finish_us"]) - t0))
    return out


def fig_step_timeline(run, out_dir, name="collective_steps", max_jobs=4):
    """Per job, one horizontal bar per step of one iteration: from its first flow's start to its last
    flow's finish."""
    jobs = read_steps(run)
    if not jobs:
        return None
    names = list(jobs)[:max_jobs]
    fig, axes = plt.subplots(1, len(names), figsize=(4.6 * len(names), 3.6), squeeze=False)
    for ax, job in zip(axes[0], names):
        it, steps = jobs[job]
        steps.sort()
        y = [s for s, _, _ in steps]
        ax.barh(y, [f - b for _, b, f in steps], left=[b for _, b, _ in steps], height=0.8,
                color=COLORS[0], edgecolor="none")
        ax.set_xlabel("time since the iteration began (\u00b5s)")
        ax.set_ylabel("step")
        ax.set_title(f"{job}, iteration {it}", fontsize=9)
        ax.invert_yaxis()
        ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return save(fig, out_dir, name)


def job_iterations(run):
    """{job: [duration_us of each finished iteration]} from collectives.csv (its iteration rows)."""
    df = run.data.collectives
    out = OrderedDict()
    if df is not None:
        if "trace_id" in df:  # the rows of the collectives a trace names are parts of an iteration
            df = df[df["trace_id"] == ""]
        for job, d in zip(df["job"].tolist(), df["duration_us"].tolist()):
            if not math.isnan(d):
                out.setdefault(job, []).append(d)
    return out


def fig_collectives_sweep(sweep, out_dir, name="collectives"):
    """Mean iteration time of every job per series (bars; whiskers: the fastest and slowest iteration)."""
    per = OrderedDict()  # job -> series -> durations
    for s in sweep.series:
        for run in sweep.runs_at(s):
            for job, d in job_iterations(run).items():
                per.setdefault(job, OrderedDict()).setdefault(s, []).extend(d)
    if not per:
        return None
    fig, axes = plt.subplots(1, len(per), figsize=(max(4.5, 0.7 * len(sweep.series) + 2) * len(per), 3.8),
                             squeeze=False)
    for ax, (job, by) in zip(axes[0], per.items()):
        labels = list(by)
        means = [float(np.mean(by[k])) for k in labels]
        lo = [m - min(by[k]) for m, k in zip(means, labels)]
        hi = [max(by[k]) - m for m, k in zip(means, labels)]
        bars = ax.bar(range(len(labels)), means, yerr=[lo, hi], capsize=3,
                      color=[COLORS[i % len(COLORS)] for i in range(len(labels))])
        bar_labels(ax, bars, means, len(labels))
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels([wrap_label(k, 18) for k in labels], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("iteration time (\u00b5s)")
        ax.set_title(job, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return save(fig, out_dir, name)


def bytes_keys(sweep):
    """The grid keys that set a job's message size (traffic[i].bytes)."""
    return [k for k in sweep.grid if short_key(k) == "bytes"]


def job_series(sweep, row, leave_out=()):
    """The series of a job row without the grid keys in `leave_out`."""
    parts = []
    for k in sweep.series_keys:
        if k in leave_out:
            continue
        v = row.get(k, "")
        parts.append(v if k in ("scheme", "cc.scheme") else f"{short_key(k)}={v}")
    return ", ".join(parts)


def fig_busbw_vs_bytes(sweep, out_dir, name="busbw_vs_bytes"):
    """Bus bandwidth against the per-rank message size, per job, one line per series (the grid keys other
    than the size, load and seed), mean over seeds: the nccl-tests view of a sweep over `bytes`."""
    leave = bytes_keys(sweep)
    per = OrderedDict()  # job -> series -> bytes -> [busbw]
    for r in sweep.job_rows:
        b, bw = to_float(r.get("bytes_per_rank")), to_float(r.get("busbw_gbps"))
        if math.isnan(b) or math.isnan(bw):
            continue
        per.setdefault(r["job"], OrderedDict()).setdefault(job_series(sweep, r, leave), {}) \
            .setdefault(b, []).append(bw)
    per = OrderedDict((j, by) for j, by in per.items() if any(len(v) > 1 for v in by.values()))
    if not per:
        return None
    fig, axes = plt.subplots(1, len(per), figsize=(5.2 * len(per), 3.8), squeeze=False)
    for ax, (job, by) in zip(axes[0], per.items()):
        for i, (series, pts) in enumerate(by.items()):
            xs = sorted(pts)
            ax.plot(xs, [float(np.mean(pts[x])) for x in xs], label=series or job, **style(i))
        ax.set_xscale("log", base=2)
        xs = sorted({x for pts in by.values() for x in pts})
        ax.set_xticks(xs)
        ax.set_xticklabels([fmt_bytes(x) for x in xs], rotation=30, ha="right", fontsize=8)
        ax.set_xlabel("message size per rank (bytes)")
        ax.set_ylabel("bus bandwidth (Gb/s)")
        ax.set_ylim(bottom=0)
        ax.set_title(job, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, out_dir, name)


def fig_iteration_time_sweep(sweep, out_dir, name="iteration_time"):
    """Per job, the mean iteration time per series (scheme, routing and the other grid keys; bars), its p99
    (whisker up) and the exposed communication time (hatched, inside the bar); mean over seeds."""
    per = OrderedDict()  # job -> series -> rows
    for r in sweep.job_rows:
        if not math.isnan(to_float(r.get("iteration_mean_us"))):
            per.setdefault(r["job"], OrderedDict()).setdefault(job_series(sweep, r), []).append(r)
    if not per:
        return None
    n = max(len(by) for by in per.values())
    fig, axes = plt.subplots(1, len(per), figsize=(max(4.5, 0.7 * n + 2) * len(per), 3.8), squeeze=False)
    for ax, (job, by) in zip(axes[0], per.items()):
        labels = list(by)
        mean_of = lambda k, c: float(np.nanmean([to_float(r.get(c)) for r in by[k]]))  # noqa: E731
        means = [mean_of(k, "iteration_mean_us") for k in labels]
        p99 = [mean_of(k, "iteration_p99_us") for k in labels]
        exposed = [mean_of(k, "exposed_comm_us") for k in labels]
        x = np.arange(len(labels))
        bars = ax.bar(x, means, yerr=[np.zeros(len(x)), np.maximum(np.array(p99) - means, 0)], capsize=3,
                      color=[COLORS[i % len(COLORS)] for i in range(len(labels))], label="mean iteration")
        ax.bar(x, exposed, width=0.5, fill=False, hatch="//", edgecolor="black", linewidth=0.5,
               label="exposed communication")
        bar_labels(ax, bars, means, len(labels))
        ax.set_xticks(x)
        ax.set_xticklabels([wrap_label(k, 18) for k in labels], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("iteration time (\u00b5s)")
        ax.set_title(job, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return save(fig, out_dir, name)


def fig_job_timeline(run, out_dir, name="job_timeline", max_jobs=2, max_hosts=64):
    """Per job, the iteration job_timeline.csv keeps (timeline_iteration, the first by default) per host:
    communication and compute intervals, from the iteration's start."""
    df, coll = run.data.job_timeline, run.data.collectives
    if df is None or coll is None or not len(df):
        return None
    kept = {r["job"]: int(r["iteration"]) for r in df.to_dict("records")}
    starts = {r["job"]: to_float(r["start_us"]) for r in coll.to_dict("records")
              if int(r["iteration"]) == kept.get(r["job"], 0) and not r.get("trace_id")}
    jobs = list(OrderedDict.fromkeys(df["job"].tolist()))[:max_jobs]
    fig, axes = plt.subplots(1, len(jobs), figsize=(6.0 * len(jobs), 4.2), squeeze=False)
    colors = {"comm": COLORS[0], "compute": COLORS[1]}
    for ax, job in zip(axes[0], jobs):
        d = df[df["job"] == job]
        hosts = sorted(set(d["host"].tolist()))[:max_hosts]
        row = {h: i for i, h in enumerate(hosts)}
        t0 = starts.get(job, float(d["start_us"].min()))
        for act, height in (("compute", 0.8), ("comm", 0.5)):
            sel = d[(d["activity"] == act) & d["host"].isin(hosts)]
            if not len(sel):
                continue
            ax.barh([row[h] for h in sel["host"]], (sel["finish_us"] - sel["start_us"]).tolist(),
                    left=(sel["start_us"] - t0).tolist(), height=height, color=colors[act],
                    edgecolor="none", label="communication" if act == "comm" else "compute")
        ax.set_yticks(range(len(hosts)))
        ax.set_yticklabels([str(h) for h in hosts], fontsize=7 if len(hosts) <= 32 else 5)
        ax.set_ylabel("host (node id)")
        ax.set_xlabel("time since the iteration began (\u00b5s)")
        ax.set_title(f"{job}, iteration {kept.get(job, 0)}", fontsize=9)
        ax.invert_yaxis()
        ax.grid(True, axis="x", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return save(fig, out_dir, name)


# ----------------------------------------------------------------------------------------------------------
# Congestion-control state over time (cc_state.csv)

CC_FIXED = ("time_us", "flow", "rate_gbps", "window_bytes", "ecn_marks", "cnps_received")


def cc_state_variables(run, df):
    """The scheme's variables of cc_state.csv as (name, unit, description): summary.json's declaration
    (monitors.cc_state.variables), else the columns between window_bytes and ecn_marks."""
    decl = run.summary.get("monitors", {}).get("cc_state", {}).get("variables")
    if decl:
        return [(v["name"], v.get("unit", ""), v.get("description", "")) for v in decl if v["name"] in df]
    return [(c, "", "") for c in df.columns if c not in CC_FIXED]


def cc_axis_label(name, unit):
    """A variable's axis label: its name without the unit suffix, then the unit ("target_rate (Gb/s)")."""
    if not unit:
        return name
    for suffix in ("_gbps", "_mbps", "_us", "_ms", "_ns", "_bytes"):
        if name.endswith(suffix):
            name = name[:-len(suffix)]
            break
    return f"{name} ({unit})"


def cc_state_flow_sets(run, df):
    """The monitored flow sets: [(label, [flow ids])]: one per class of monitors.cc_state.classes (the
    flows' classes from flows.csv; flows that did not finish form a set of their own), else one."""
    flows = sorted(set(int(f) for f in df["flow"].tolist()))
    scen = run.data.scenario or {}
    classes = scen.get("monitors", {}).get("cc_state", {}).get("classes") or []
    if not classes:
        listed = scen.get("monitors", {}).get("cc_state", {}).get("flows")
        what = "every flow" if listed == "all" else ("flow " if len(flows) == 1 else "flows ") + ", ".join(
            str(f) for f in flows[:12]) + (", ..." if len(flows) > 12 else "")
        return [(what, flows)]
    fl = run.flows()
    cls = {int(i): c for i, c in zip(fl["id"].tolist(), fl["class"])}
    sets = []
    for c in classes:
        ids = [f for f in flows if cls.get(f) == c]
        if ids:
            sets.append((f"class '{c}'", ids))
    rest = [f for f in flows if f not in cls]
    if rest:
        sets.append(("flows that did not finish", rest))
    return sets


def fig_cc_state(run, out_dir, name="cc_state", limit=8):
    """One figure per monitored flow set: [(path, title, caption)]; [] without cc_state.csv."""
    df = run.data.cc_state
    if df is None or not len(df):
        return []
    variables = cc_state_variables(run, df)
    info = run.summary.get("monitors", {}).get("cc_state", {})
    period = to_float(info.get("period_us"), float("nan"))
    how = ("a row each time the scheme reacted at the sender" if period == 0 else
           f"a sample every {period:g} µs" if not math.isnan(period) else "cc_state.csv")
    scheme = run.summary.get("scheme", "")
    sets = cc_state_flow_sets(run, df)
    out = []
    for k, (label, ids) in enumerate(sets):
        shown = ids[:limit]
        sub = df[df["flow"].isin(shown)]
        panels = [("rate_gbps", "rate (Gb/s)")]
        if (sub["window_bytes"] > 0).any():
            panels.append(("window_bytes", "window (bytes)"))
        panels += [(v, cc_axis_label(v, u)) for v, u, _ in variables]
        panels += [("ecn_marks", "ECN marks"), ("cnps_received", "CNPs")]
        fig, axes = plt.subplots(len(panels), 1, figsize=(9, 1.55 * len(panels) + 0.6), sharex=True,
                                 squeeze=False)
        axes = axes[:, 0]
        for i, f in enumerate(shown):
            d = sub[sub["flow"] == f]
            t = (d["time_us"] / 1e3).to_numpy()
            color = FLOW_COLORS[i % len(FLOW_COLORS)]
            for ax, (col, _) in zip(axes, panels):
                ax.plot(t, d[col].to_numpy(dtype=float), color=color, drawstyle="steps-post", lw=1.1,
                        label=f"flow {f}")
        for ax, (_, ylabel) in zip(axes, panels):
            ax.set_ylabel(wrap_label(ylabel, 18), fontsize=9)
        axes[-1].set_xlabel("time (ms)")
        axes[0].legend(loc="upper right", fontsize=8, ncol=min(4, len(shown)))
        axes[0].set_title(f"{scheme}: {label}")
        p = save(fig, out_dir, name if len(sets) == 1 else f"{name}_{k + 1}")
        what = f"{label}" + (f" (the first {limit} of {len(ids)})" if len(ids) > limit else "")
        described = "; ".join(f"{v} ({u}): {desc}" if u else f"{v}: {desc}" for v, u, desc in variables if desc)
        caption = (f"The sender state of {what} under {scheme} over time (cc_state.csv, {how}): the rate"
                   + (", the window" if any(c == "window_bytes" for c, _ in panels) else "")
                   + ", then each variable the scheme declares" + (f" ({described})" if described else "")
                   + "; the last two panels count the ACKs with ECN-Echo and the CNPs each sender received so "
                   "far. Each line holds its value until the next row.")
        out.append((p, f"Congestion-control state over time: {label}", caption))
    return out


def figures_for_run(run_dir, out_dir):
    run = Run(run_dir)
    title = f" ({run.label})"
    figs = []
    p = fig_slowdown_vs_size(OrderedDict([(run.label, [run.flows()])]), out_dir, "slowdown_vs_size")
    if p:
        figs.append(Figure(p, "FCT slowdown vs flow size",
                           "Median and 99th-percentile FCT slowdown (FCT divided by the ideal FCT of the "
                           "flow alone on the path) of the flows whose size falls in each bin; bins hold "
                           "equal numbers of flows."))
    flows = run.flows()
    classes = list(OrderedDict.fromkeys(flows["class"]))
    if len(classes) > 1:
        groups = OrderedDict()
        for c in classes:
            m = np.array([k == c for k in flows["class"]])
            groups[f"class {c}"] = [{k: (v[m] if isinstance(v, np.ndarray) else v) for k, v in flows.items()}]
        p = fig_slowdown_vs_size(groups, out_dir, "classes")
        if p:
            figs.append(Figure(p, "FCT slowdown vs flow size per class",
                               "Median and 99th-percentile FCT slowdown of each traffic class (flows.csv "
                               "class column) in bins of flow size."))
    p, cap = fig_timeseries([run], out_dir)
    if p:
        figs.append(Figure(p, "Rates and queue over time", cap))
    p = fig_step_timeline(run, out_dir)
    if p:
        figs.append(Figure(p, "Collective steps of one iteration",
                           "Each job's last finished iteration (collective_steps.csv): one bar per step (a "
                           "trace: per depth), from its first flow's start to its last flow's finish."))
    p = fig_job_timeline(run, out_dir)
    if p:
        figs.append(Figure(p, "Per-host timeline of one iteration",
                           "Each job's kept iteration (job_timeline.csv; timeline_iteration, the first by "
                           "default), one row per host: communication (a flow it sends or receives in "
                           "flight) and compute (a trace's delay_us before a flow it sends; a collective's "
                           "compute_us after the iteration)."))
    p = fig_pfc_run(run, out_dir)
    if p:
        figs.append(Figure(p, "PFC pauses per port",
                           f"PFC per port{title}: the ports that sent the most PAUSE frames (left) and the "
                           "egress ports that were paused longest (right)."))
    p = fig_buffer_cdf(OrderedDict([(run.label, run)]), out_dir)
    if p:
        figs.append(Figure(p, "Switch buffer occupancy CDF",
                           "Distribution of sampled shared-buffer occupancy: all switches pooled (left) and "
                           "the switch with the highest 99th percentile (right)."))
    for p, title, caption in fig_cc_state(run, out_dir):
        figs.append(Figure(p, title, caption))
    p, cap = fig_packet_timeline(run, out_dir)
    if p:
        figs.append(Figure(p, "Packet timeline", cap))
    return figs


def figures_for_sweep(sweep_dir, out_dir):
    sw = Sweep(sweep_dir)
    figs = []
    multi_load = len(sw.loads) > 1
    for li, load in enumerate(sw.loads):
        suffix = f", {load_label(load)}" if multi_load and load else ""
        name = f"slowdown_vs_size_{li}" if multi_load else "slowdown_vs_size"
        groups = OrderedDict()
        for s in sw.series:
            runs = sw.runs_at(s, load)
            if runs and all(r.file("flows.csv") for r in runs):
                groups[s] = [r.flows() for r in runs]
        seeds = len(set(r.get("seed") for r in sw.all_rows))
        pooled = f"; the flows of {seeds} seeds pooled" if seeds > 1 else ""
        p = fig_slowdown_vs_size(groups, out_dir, name, suffix) if groups else None
        if p:
            figs.append(Figure(p, f"FCT slowdown vs flow size{suffix}",
                               "Median and 99th-percentile FCT slowdown (FCT / ideal FCT) per scheme in "
                               f"bins of flow size holding equal numbers of flows{pooled}."))
        else:
            rows = OrderedDict()
            for s in sw.series:
                rr = [r for r in sw.rows
                      if sw.series_of(r) == s and r.get("load") == load and r["bucket"] != "all"]
                if rr:
                    rows[s] = rr
            p = fig_slowdown_vs_bucket(rows, out_dir, name, suffix)
            if p:
                figs.append(Figure(p, f"FCT slowdown vs flow size{suffix}",
                                   "Median and 99th-percentile FCT slowdown per size bucket (results.csv; "
                                   "mean over seeds)."))
    p = fig_fct_vs_load(sw, out_dir)
    if p:
        figs.append(Figure(p, "FCT vs load",
                           "Average and 99th-percentile FCT of all flows at each offered load; points are "
                           "the mean over seeds, bars the 95 % confidence interval."))
    # Against each other numeric grid key, then per class (figures only where they have data).
    extra = [(fig_vs_key(sw, key, out_dir, "vs_" + "".join(ch if ch.isalnum() else "_" for ch in key)),
              f"FCT against {key}",
              f"p99 FCT slowdown and average FCT of all flows against {key}, one line per scheme, one panel "
              "per value of the other grid keys (mean over seeds).")
             for key in sw.grid if key not in ("load", "seed", "scheme", "cc.scheme")]
    extra.append((fig_classes_sweep(sw, out_dir), "Slowdown per traffic class",
                  "p99 and median FCT slowdown of each traffic class (results.csv class rows), per scheme; mean "
                  "over seeds. No bar: no finished flow of that class."))
    figs.extend(Figure(*e) for e in extra if e[0])
    top = sw.loads[-1] if sw.loads else None
    at = f" at {load_label(top)}" if multi_load and top else ""
    reps = [sw.representative(s, top) for s in sw.series]
    reps = interleave_schemes([r for r in reps if r is not None])
    p, cap = fig_timeseries(reps, out_dir)
    if p:
        seed = reps[0].values.get("seed", "")
        figs.append(Figure(p, f"Rates and queue over time{at}",
                           f"One run per scheme{at}" + (f" (seed {seed})" if seed else "") + ". " + cap))
    p = fig_fct_bars_sweep(sw, out_dir)
    if p:
        figs.append(Figure(p, "FCT by scheme",
                           "Average and 99th-percentile FCT of all flows, and the 99th percentile of the "
                           "smallest and largest size buckets, per scheme (results.csv; mean over seeds)."))
    p = fig_collectives_sweep(sw, out_dir)
    if p:
        figs.append(Figure(p, "Collective completion time per scheme",
                           "Mean iteration time of each job (collectives.csv) per scheme; whiskers: the "
                           "fastest and the slowest iteration, over every iteration and seed."))
    p = fig_busbw_vs_bytes(sw, out_dir)
    if p:
        figs.append(Figure(p, "Bus bandwidth vs message size",
                           "Bus bandwidth (algorithm bandwidth x 2(N-1)/N for all-reduce, (N-1)/N for "
                           "all-gather, reduce-scatter and all-to-all, 1 for broadcast, as nccl-tests "
                           "report it) of each job against its per-rank message size (results.csv job "
                           "rows), one line per series; mean over seeds."))
    p = fig_iteration_time_sweep(sw, out_dir)
    if p:
        figs.append(Figure(p, "Iteration time per scheme and routing",
                           "Mean iteration time of each job per series (bars; whisker up to the p99 "
                           "iteration) and its exposed communication time (hatched: communication not "
                           "overlapped by compute); results.csv job rows, mean over seeds."))
    p = fig_pfc_sweep(sw, out_dir)
    if p:
        figs.append(Figure(p, "PFC pauses per scheme",
                           "PFC PAUSE frames sent and time paused, summed over every port of the network; "
                           "mean over seeds."))
    p = fig_buffer_cdf(OrderedDict((s, sw.representative(s, top)) for s in sw.series), out_dir,
                       title_suffix=at.replace(" at ", ", "))
    if p:
        figs.append(Figure(p, f"Switch buffer occupancy CDF{at}",
                           f"Distribution of sampled shared-buffer occupancy, one run per scheme{at}: all "
                           "switches pooled (left) and the switch with the highest 99th percentile (right)."))
    return figs


def make_figures(d, out_dir=None):
    out_dir = out_dir or os.path.join(d, "figures")
    if is_sweep_dir(d):
        return figures_for_sweep(d, out_dir)
    if is_run_dir(d):
        return figures_for_run(d, out_dir)
    raise SystemExit(f"error: {d}: neither a run directory (summary.json) nor a sweep directory "
                     "(results.csv)")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Figures of a rocesim run or sweep directory")
    ap.add_argument("dir")
    ap.add_argument("--out", help="directory for the PNGs (default DIR/figures)")
    a = ap.parse_args(argv)
    for f in make_figures(a.dir, a.out):
        print(f.path)


if __name__ == "__main__":
    sys.exit(main())
