"""One self-contained HTML page for a rocesim run or sweep directory.

    /usr/bin/python3 tools/report.py DIR [--quiet]        (or: rocesim report DIR, make report DIR=...)

Writes DIR/report.html (every figure embedded as a base64 PNG, plus the summary tables) and the PNGs in
DIR/figures/, then prints the page's path (last line of stdout).
"""

import argparse
import base64
import datetime
import html
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rocesim_plots as rp  # noqa: E402

CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
.meta { color: #555; font-size: 0.92em; }
.meta code { background: #f4f4f4; padding: 0 0.25em; }
table { border-collapse: collapse; font-size: 0.86em; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; }
th { background: #f3f5f8; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fafafa; }
figure { margin: 1.2em 0 2em 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #444; font-size: 0.9em; margin-top: 0.3em; max-width: 60em; }
.warn { color: #a33; }
nav a { margin-right: 1em; }
"""


def esc(v):
    return html.escape(str(v))


def fnum(v, digits=3):
    """A number for a table cell: integers as such, others with `digits` significant digits."""
    if v is None or v == "":
        return ""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(f):
        return ""
    if f == int(f) and abs(f) < 1e15:
        return f"{int(f):,}"
    if abs(f) >= 10 ** digits:
        return f"{f:,.0f}"
    return f"{f:.{digits}g}"


def table(headers, rows, numeric=None):
    numeric = numeric if numeric is not None else [False] * len(headers)
    out = ["<table>", "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr>"]
    for r in rows:
        cells = []
        for i, v in enumerate(r):
            if numeric[i]:
                cells.append(f'<td class="num">{esc(fnum(v))}</td>')
            else:
                cells.append(f"<td>{esc(v)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def img_tag(path, alt):
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}">'


def figures_html(figs):
    parts = []
    for f in figs:
        parts.append(f"<figure>\n<h3>{esc(f.title)}</h3>\n{img_tag(f.path, f.title)}\n"
                     f"<figcaption>{esc(f.caption)}</figcaption>\n</figure>")
    return "\n".join(parts) if parts else "<p>No figures: the directory holds no data to plot.</p>"


def count_text(v):
    """A count of results.csv as written there: an integer, or empty when the run did not report it."""
    f = rp.to_float(v)
    return "" if math.isnan(f) else f"{int(f)}" if f == int(f) else f"{f}"


def mean(vals):
    v = [rp.to_float(x) for x in vals]
    v = [x for x in v if not math.isnan(x)]
    return sum(v) / len(v) if v else float("nan")


# Every drop kind of summary.json's "drops" (docs/user-guide.md), in this order; a kind this list does not
# know is shown by its name.
DROP_KINDS = [
    ("data_buffer", "data packets dropped by a switch buffer"),
    ("control_buffer", "ACKs, NACKs and CNPs in a data class dropped by a switch buffer"),
    ("wire", "packets lost on the wire (a link's loss rate: link_loss, [[events]] action = \"loss\")"),
    ("link_failure", "packets and PFC frames lost on failed links ([[events]] action = \"down\")"),
    ("unroutable", "packets with no route to their destination"),
]


def drop_rows(drops):
    """[kind, what it counts, packets] for every kind of summary.json's "drops", then the total."""
    known = dict(DROP_KINDS)
    kinds = [k for k, _ in DROP_KINDS if k in drops] + [k for k in drops if k not in known]
    rows = [[k, known.get(k, ""), drops[k]] for k in kinds]
    total = sum(rp.to_float(drops[k], 0) for k in kinds)
    return rows + [["all", "every kind above", total]]


def drops_table(drops):
    return table(["kind", "what", "packets"], drop_rows(drops), [False, False, True])


def link_events_section(j):
    """The run's link events (summary.json "link_events"): one row per event, "" without [[events]]."""
    ev = j.get("link_events")
    if not ev:
        return ""
    rows = [[e.get("time_us"), e.get("event", "")] for e in ev.get("log", [])]
    note = (f'<p class="meta">{fnum(ev.get("route_updates"))} route recomputation(s); the time-series figures '
            "mark each event with a vertical line.</p>")
    return table(["time (\u00b5s)", "event"], rows, [True, False]) + "\n" + note


# ----------------------------------------------------------------------------------------------------------


def sweep_drops_section(sw):
    """Per run, each drop kind and the number of link events (each run's summary.json), when some run dropped
    packets or had link events; "" otherwise."""
    runs = list(sw.runs.values())
    kinds = []
    for run in runs:
        for k in run.summary.get("drops", {}):
            if k not in kinds:
                kinds.append(k)
    order = [k for k, _ in DROP_KINDS if k in kinds] + [k for k in kinds if k not in dict(DROP_KINDS)]
    any_event = any(run.summary.get("link_events") for run in runs)
    if not any_event and not any(rp.to_float(run.summary.get("drops", {}).get(k), 0) > 0
                                 for run in runs for k in order):
        return ""
    rows = []
    for run in runs:
        drops = run.summary.get("drops", {})
        ev = run.summary.get("link_events") or {}
        n_ev = sum(1 for e in ev.get("log", []) if e.get("event") != "routes recomputed")
        rows.append([os.path.basename(run.path)] + [drops.get(k, "") for k in order] + [n_ev if ev else ""])
    return table(["run"] + order + ["link events"], rows, [False] + [True] * (len(order) + 1))


def sweep_sections(d):
    sw = rp.Sweep(d)
    m = sw.manifest
    expected = m.get("runs", [])
    have = set(r["run"] for r in sw.all_rows)
    missing = [r for r in expected if r not in have]
    meta = [f"Sweep directory <code>{esc(os.path.abspath(d))}</code>"]
    if m.get("scenario"):
        meta.append(f"scenario <code>{esc(m['scenario'])}</code>")
    for a in m.get("grid", []):
        meta.append(f"grid <code>{esc(a['key'])} = {esc(', '.join(a['values']))}</code>")
    if m.get("sets"):
        meta.append("common overrides <code>" + esc(" ".join("--set " + s for s in m["sets"])) + "</code>")
    meta.append(f"{len(have)} run(s) complete" + (f" of {len(expected)}" if expected else ""))

    # Summary by series and load, mean over seeds.
    groups = {}
    for r in sw.all_rows:
        groups.setdefault((sw.series_of(r), r.get("load", "")), []).append(r)
    order = sorted(groups, key=lambda k: (sw.series.index(k[0]), rp.load_key(k[1])))
    cols = [("runs", None), ("flows finished", "flows_finished"), ("FCT avg (\u00b5s)", "fct_avg_us"),
            ("FCT p50 (\u00b5s)", "fct_p50_us"), ("FCT p99 (\u00b5s)", "fct_p99_us"),
            ("slowdown avg", "slowdown_avg"), ("slowdown p50", "slowdown_p50"),
            ("slowdown p99", "slowdown_p99"), ("slowdown p99.9", "slowdown_p999"), ("PFC pauses", "pauses"),
            ("paused time (\u00b5s)", "paused_time_us"),
            ("CNPs", "cnps"), ("drops", "drops")]
    rows = []
    for k in order:
        g = groups[k]
        rows.append([k[0], k[1], len(g)] + [mean(r[c] for r in g) for _, c in cols[1:]])
    summary = table(["scheme", "load"] + [c for c, _ in cols], rows, [False, False] + [True] * len(cols))

    # Every run.
    grid = sw.grid
    run_cols = [("flows", None), ("complete", "complete"), ("FCT avg (\u00b5s)", "fct_avg_us"),
                ("FCT p99 (\u00b5s)", "fct_p99_us"), ("slowdown p50", "slowdown_p50"),
                ("slowdown p99", "slowdown_p99"), ("PFC pauses", "pauses"), ("CNPs", "cnps"),
                ("drops", "drops"),
                ("simulated (ms)", "simulated_ms"), ("wall (s)", "wall_seconds")]
    run_rows = []
    for r in sw.all_rows:
        flows = f"{count_text(r.get('flows_finished'))} / {count_text(r.get('flows_started'))}"
        complete = "yes" if rp.to_float(r.get("complete"), 0) == 1 else "no (time limit)"
        run_rows.append([r.get(k, "") for k in grid] + [flows, complete] +
                        [r.get(c, "") for _, c in run_cols[2:]])
    runs = table(grid + [c for c, _ in run_cols], run_rows,
                 [False] * len(grid) + [False, False] + [True] * (len(run_cols) - 2))

    # Per traffic class (results.csv class rows), by series and load, mean over seeds.
    class_table = ""
    if sw.class_rows:
        cgroups = {}
        for r in sw.class_rows:
            cgroups.setdefault((r["class"], sw.series_of(r), r.get("load", "")), []).append(r)
        corder = sorted(cgroups, key=lambda k: (sw.classes.index(k[0]), sw.series.index(k[1]) if k[1] in sw.series
                                                else 0, rp.load_key(k[2])))
        ccols = [("flows", "count"), ("FCT avg (µs)", "fct_avg_us"), ("FCT p99 (µs)", "fct_p99_us"),
                 ("slowdown p50", "slowdown_p50"), ("slowdown p99", "slowdown_p99"),
                 ("slowdown p99.9", "slowdown_p999")]
        crows = [[k[0], k[1], k[2]] + [mean(r[c] for r in cgroups[k]) for _, c in ccols] for k in corder]
        class_table = table(["class", "scheme", "load"] + [c for c, _ in ccols], crows,
                            [False] * 3 + [True] * len(ccols))

    # Per job (results.csv job rows), by series and load, mean over seeds.
    job_table = ""
    if sw.job_rows:
        jgroups = {}
        for r in sw.job_rows:
            jgroups.setdefault((r["job"], sw.series_of(r), r.get("load", "")), []).append(r)
        jcols = [("algorithm", None), ("ranks", "ranks"), ("bytes per rank", "bytes_per_rank"),
                 ("iteration avg (µs)", "iteration_mean_us"), ("iteration p99 (µs)", "iteration_p99_us"),
                 ("algbw (Gb/s)", "algbw_gbps"), ("busbw (Gb/s)", "busbw_gbps"),
                 ("exposed communication (µs)", "exposed_comm_us")]
        jrows = [[k[0], k[1], k[2], jgroups[k][0].get("algorithm", "")] +
                 [mean(r[c] for r in jgroups[k]) for _, c in jcols[1:]] for k in jgroups]
        job_table = table(["job", "scheme", "load"] + [c for c, _ in jcols], jrows,
                          [False] * 4 + [True] * (len(jcols) - 1))

    figs = rp.figures_for_sweep(d, os.path.join(d, "figures"))
    body = [f'<p class="meta">{" &middot; ".join(meta)}</p>']
    if missing:
        body.append(f'<p class="warn">Missing runs (not complete): {esc(", ".join(missing))}. '
                    "Re-run the same <code>rocesim sweep</code> command to finish them.</p>")
    body.append('<nav><a href="#summary">Summary</a><a href="#figures">Figures</a>'
                '<a href="#runs">Runs</a></nav>')
    body.append('<h2 id="summary">Summary by scheme and load (mean over seeds)</h2>\n' + summary)
    if class_table:
        body.append('<h2 id="classes">Per traffic class (mean over seeds)</h2>\n' + class_table)
    if job_table:
        body.append('<h2 id="jobs">Jobs (mean over seeds)</h2>\n<p class="meta">Per job: iteration time, '
                    "bus bandwidth (nccl-tests' definition) and the communication not overlapped by compute "
                    "(results.csv job rows).</p>\n" + job_table)
    drops = sweep_drops_section(sw)
    if drops:
        body.append('<h2 id="drops">Drops by kind and link events</h2>\n<p class="meta">Packets dropped per '
                    "run and kind (summary.json drops; results.csv's drops column is their sum) "
                    "and the link events applied ([[events]]).</p>\n" + drops)
    body.append('<h2 id="figures">Figures</h2>\n' + figures_html(figs))
    body.append('<h2 id="runs">Runs</h2>\n<p class="meta">One row per run directory (results.csv, bucket '
                '"all"); FCT and slowdown over every finished flow.</p>\n' + runs)
    return f"sweep {os.path.basename(os.path.abspath(d))}", "\n".join(body), figs


def run_sections(d):
    run = rp.Run(d)
    j = run.summary
    meta = [f"Run directory <code>{esc(os.path.abspath(d))}</code>",
            f"scenario <code>{esc(j.get('scenario', ''))}</code>",
            f"scheme <code>{esc(j.get('scheme', ''))}</code>",
            f"seed {esc(j.get('seed', ''))}",
            f"{fnum(j.get('simulated_time_ms'))} ms simulated",
            f"{fnum(j.get('flows', {}).get('finished'))} of {fnum(j.get('flows', {}).get('started'))} "
            "flows finished"]
    fct = j.get("fct", {})
    rows = []
    for b in fct.get("buckets", []) + [dict(fct, label="all")]:
        if not b.get("count"):
            continue
        f, s = b.get("fct_us", {}), b.get("slowdown", {})
        rows.append([b.get("label", ""), b.get("count"), f.get("avg"), f.get("p50"), f.get("p99"),
                     f.get("p999"), s.get("avg"), s.get("p50"), s.get("p99"), s.get("p999")])
    buckets = table(["flow size", "flows", "FCT avg (\u00b5s)", "FCT p50 (\u00b5s)", "FCT p99 (\u00b5s)",
                     "FCT p99.9 (\u00b5s)", "slowdown avg", "slowdown p50", "slowdown p99", "slowdown p99.9"],
                    rows, [False] + [True] * 9)
    classes = fct.get("classes", {})
    class_rows = []
    for label, c in classes.items():
        if not c.get("count"):
            continue
        f, s = c.get("fct_us", {}), c.get("slowdown", {})
        class_rows.append([label, c.get("count"), f.get("avg"), f.get("p50"), f.get("p99"), s.get("avg"),
                           s.get("p50"), s.get("p99"), s.get("p999")])
    by_class = table(["class", "flows", "FCT avg (µs)", "FCT p50 (µs)", "FCT p99 (µs)", "slowdown avg",
                      "slowdown p50", "slowdown p99", "slowdown p99.9"], class_rows,
                     [False] + [True] * 8) if len(classes) > 1 else ""
    job_rows = []
    for jb in j.get("jobs", []):
        it = jb.get("iteration_us", {})
        job_rows.append([jb.get("job"), jb.get("collective"), jb.get("ranks"), jb.get("bytes"),
                         f"{jb.get('iterations_finished')} of {jb.get('iterations')}", it.get("mean"),
                         it.get("p99"), it.get("min"), it.get("max"), jb.get("algbw_gbps"),
                         jb.get("busbw_gbps"), jb.get("comm_us"), jb.get("exposed_comm_us"), jb.get("ideal_us"),
                         jb.get("slowdown")])
    jobs = table(["job", "collective", "ranks", "bytes", "iterations", "iteration avg (µs)", "p99 (µs)",
                  "min (µs)", "max (µs)", "algbw (Gb/s)", "busbw (Gb/s)", "communication (µs)",
                  "exposed communication (µs)", "closed form (µs)", "slowdown"], job_rows,
                 [False, False] + [True] * 13) if job_rows else ""
    pfc, cnp, drops, tr, perf = (j.get(k, {}) for k in ("pfc", "cnp", "drops", "transport", "performance"))
    counters = [
        ["PFC PAUSE frames sent", pfc.get("pauses_sent")],
        ["PFC paused time, all ports (\u00b5s)", pfc.get("paused_time_us")],
        ["ECN marks by switches", j.get("ecn", {}).get("marked")],
        ["CNPs sent by receivers", cnp.get("sent_by_receivers")],
        ["CNPs sent by switches", cnp.get("sent_by_switches")],
        ["CNPs sent on ACKs (receivers' flags, DCQCN cnp_on_ack)", cnp.get("sent_on_acks")],
        ["CNPs received by senders (all kinds)", cnp.get("received")],
        ["retransmitted packets", tr.get("retransmitted_packets")],
        ["timeouts", tr.get("timeouts")],
        ["peak switch buffer (bytes)", j.get("switch", {}).get("max_buffer_bytes")],
        ["events", perf.get("events")],
        ["wall time (s)", perf.get("wall_seconds")],
        ["events per second", perf.get("events_per_second")],
    ]
    figs = rp.figures_for_run(d, os.path.join(d, "figures"))
    body = [f'<p class="meta">{" &middot; ".join(meta)}</p>']
    if not j.get("complete", True):
        body.append('<p class="warn">The run reached its time limit before every flow finished; '
                    "unfinished flows are not in the statistics.</p>")
    body.append('<h2 id="summary">Flow completion times by flow size</h2>\n' + buckets)
    if by_class:
        body.append('<h2 id="classes">Flow completion times by class</h2>\n' + by_class)
    if jobs:
        body.append('<h2 id="jobs">Collective and trace jobs</h2>\n' + jobs)
    body.append("<h2>Counters</h2>\n" + table(["counter", "value"], counters, [False, True]))
    body.append('<h2 id="drops">Drops by kind</h2>\n' + drops_table(drops))
    events = link_events_section(j)
    if events:
        body.append('<h2 id="link-events">Link events</h2>\n' + events)
    body.append('<h2 id="figures">Figures</h2>\n' + figures_html(figs))
    return f"run {os.path.basename(os.path.abspath(d))}", "\n".join(body), figs


def write_report(d):
    if rp.is_sweep_dir(d):
        title, body, figs = sweep_sections(d)
    elif rp.is_run_dir(d):
        title, body, figs = run_sections(d)
    else:
        raise SystemExit(f"error: {d}: neither a run directory (summary.json) nor a sweep directory "
                         "(results.csv)")
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    page = (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>rocesim report: {esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"<h1>rocesim report: {esc(title)}</h1>\n"
            f"<p class=\"meta\">Generated {esc(now)} by tools/report.py</p>\n"
            f"{body}\n</body>\n</html>\n")
    out = os.path.join(d, "report.html")
    tmp = out + f".tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(tmp, out)
    return out, figs


def main(argv=None):
    ap = argparse.ArgumentParser(description="Write DIR/report.html for a rocesim run or sweep directory")
    ap.add_argument("dir")
    ap.add_argument("--quiet", "-q", action="store_true", help="print only the report's path")
    a = ap.parse_args(argv)
    out, figs = write_report(a.dir)
    if not a.quiet:
        figdir = os.path.join(a.dir, "figures")
        print(f"report with {len(figs)} figures (PNGs also in {figdir}), open in a browser:")
    print(os.path.abspath(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
