#!/usr/bin/env python3
"""Reproduce the seed papers: run each paper's scenario set as sweeps, measure every claim, draw the figures,
write an HTML report and regenerate docs/REPRODUCTION.md.

    rocesim reproduce PAPER|all [--scale quick|full] [--seeds N] [--claim ID] [-j N] [-o DIR]  (or: make reproduce)
    rocesim reproduce PAPER|all --sensitivity [--claim ID]
    rocesim reproduce PAPER|all --rejudge  (judge the stored per-seed values again; no runs)
    /usr/bin/python3 tools/reproduce.py --rocesim build/rocesim PAPER|all [options]

Seeds: every sweep runs over seeds 1..N (an added grid axis `seed`; 5 by default at full scale, 1 at quick),
each claim's values are measured once per seed, shown as the mean and the half-width of the 95 % confidence
interval (Student's t), and the verdict is decided over the intervals: every comparison of a condition is
judged by the interval of the per-seed difference of its two sides (agree only when the agree condition
holds over the whole interval; "inconclusive" when an interval straddles it).

Each paper is described by reproduce/<paper>.toml (format below; its sweeps name scenarios under scenarios/). For every sweep of the paper the
script runs `rocesim sweep` (complete runs are skipped, so an interrupted reproduction resumes), evaluates each
claim's metric expressions on the run directories, decides agree / partly / disagree from the claim's own
conditions, and writes:

  OUT/<paper>/<sweep>/...         the sweep directories (results.csv, run directories)
  OUT/<paper>/claims.json         every claim's values, text shown and verdict
  OUT/report.html                 figures grouped by paper in the papers' order, captions naming the paper figure
  DOCS/reproduction/<paper>.<scale>.json   the measured values (kept in the repo, one file per paper and scale):
                                  per claim the per-seed values, means, intervals, verdict and re-run command;
                                  per sweep its grid (with the seeds) and settings
  DOCS/reproduction/<paper>.sensitivity.json   the sensitivity sweeps' results (--sensitivity)
  OUT/<paper>/sensitivity/<scale>-<N>-seeds/<setting>/<sweep>/   their runs
  DOCS/REPRODUCTION.md            regenerated from those files: per paper, each claim, our number at quick and
                                  full scale, verdict and reason. Never edit the numbers by hand.

Manifest (TOML):

  [paper]
  key = "mercury"; order = 0; title = "..."; seed = "000_....txt"
  quick = "what the quick scale reduces"           # said in the report and in REPRODUCTION.md
  [[sweep]]
  name = "victim"; scenario = "mercury/victim.toml"
  grid = ["scheme=dcqcn,mercury"]                  # as `rocesim sweep --grid`
  set = ["duration_ms=4.5"]                        # --set for both scales (optional)
  quick = { set = [...], grid = [...] }            # per-scale additions / grid replacement (optional)
  full = { set = [...], grid = [...], seeds = 3 }  # seeds: at most this many at that scale (a long sweep)
  test = true                                      # the small sweep the test suite reproduces (one per paper)
  [[claim]]
  id = "M1"; sweeps = ["victim"]
  claim = "text of docs/scenarios.md"; paper = "the paper's number"
  values = { dcqcn = "R('victim', scheme='dcqcn').rate(0, 3000, 3500)", ... }   # metric expressions
  show = "DCQCN {dcqcn:.1f} Gb/s"                  # str.format over the values
  effect = { DCQCN = "vs_dcqcn", ... }             # the paper's effect per baseline, improvement positive
  unit = "%"; size = 16; fraction = 1.0            # "%" or "x"; the paper's size (number or per baseline)
  # the one rule decides (REPRODUCTION.md): agree = every baseline's interval >= size x fraction; partly =
  # every one >= 10 % / 1.1x; else disagree. A claim with no baseline gives `agree = "condition"` instead
  # (an observation: agree or disagree). `partly` is no claim key.
  deviation = "what differs from the paper, why, its effect"   # shown in the claim's row (optional)
  why = "one-line reason shown when we do not agree"
  scales = ["full"]                                # optional: the scales whose runs can measure it
  [[sensitivity]]                                  # for a claim we do not agree with: the settings the paper
  claim = "M6"                                     # leaves open, one alternative at a time (each "k=v k2=v2"
  vary = ["switch.xoff_bytes=100000", "switch.kmin_bytes=20000 switch.kmax_bytes=80000"]    # added with --set)
  scale = "quick"; seeds = 3                       # optional (these are the defaults)
  degenerate = { "k=v" = "why" }                   # rows labelled degenerate, never counted as evidence
  [[figure]]
  sweep = "victim"; kind = "timeseries"; caption = "Fig. 9: ..."; runs = { scheme = ["dcqcn", "mercury"] }
  flows = { "0" = "F1 (victim)" }; window_us = [2000, 4500]      # timeseries: flows drawn, time window
  # kinds: timeseries, fct_bars, fct_vs_load, pfc, buffer_cdf, slowdown_vs_size, script (script = "path.py":
  # called as `python3 SCRIPT --out PNG SWEEP_DIR`)
  facet = "traffic[0].workload"                    # fct_vs_load: one row of panels per value of this grid key
  load = 0.5                                       # buffer_cdf, slowdown_vs_size: the load drawn (default: highest)

Metric expressions see R(sweep, **grid values) -> a run (a key that is no grid axis of that sweep is checked against
the run's scenario.resolved.toml) (methods of class RunData below), S(sweep) -> the list of
runs of a sweep, G(sweep, key) -> the values of one of its grid axes (e.g. the loads it ran at this scale), and ratio(a, b), reduction(a, b) (percent by which a is below b), jain(rates), mean, min, max,
abs, all, any, sum, len, range.
"""

import argparse
import ast
import base64
import datetime
import html
import json
import math
import os
import shlex
import subprocess
import sys
import time
import tomllib
from collections import OrderedDict
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocesim_common import (MetricError, jain, mean_ci95, nearest_rank, ratio, reduction, rocesim,  # noqa: E402
                             to_float)

TOOLS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TOOLS)
SCALES = ("quick", "full")
VERDICTS = ("agree", "partly", "disagree", "inconclusive")


class ManifestError(Exception):
    pass


# ----------------------------------------------------------------------------------------------------------
# Manifests


def _need(table, key, kind, where):
    if key not in table:
        raise ManifestError(f"{where}: missing key '{key}'")
    v = table[key]
    if not isinstance(v, kind):
        raise ManifestError(f"{where}: '{key}' must be {kind.__name__ if not isinstance(kind, tuple) else 'a number'}")
    return v


def _unique(table, key, seen, where, what):
    """A string key whose value must not repeat within the manifest (`seen` collects them)."""
    v = _need(table, key, str, where)
    if v in seen:
        raise ManifestError(f"{where}: {what} '{v}' used twice")
    seen.add(v)
    return v


def _strings(table, key, where, default=()):
    v = table.get(key, list(default))
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ManifestError(f"{where}: '{key}' must be a list of strings")
    return v


# ----------------------------------------------------------------------------------------------------------
# The verdict rule (one for every claim; REPRODUCTION.md states it)

# The names metric expressions and conditions see besides a claim's values (evaluate(), effect_intervals()).
EXPRESSION_NAMES = {"R", "S", "G", "ratio", "reduction", "mean", "min", "max", "abs", "all", "any", "len", "sum",
                    "range", "jain", "math"}
MARGIN = {"%": 10.0, "x": 1.1}  # a real margin in the paper's direction: 10 % or 1.1x
RULE_KEYS = ("effect", "unit", "size", "fraction")


def agree_at(unit, size, fraction):
    """The effect a baseline must reach for agree: the paper's size times the stated fraction (of the gain
    above 1 for a ratio), never below the margin that partly needs; the margin itself when the paper states
    no size."""
    m = MARGIN[unit]
    if size is None:
        return m
    return max(m, size * fraction if unit == "%" else 1.0 + (size - 1.0) * fraction)


def parse_rule(c, w):
    """A claim's verdict conditions. A claim with `effect` (label -> expression over its values, improvement
    positive, one per baseline) is judged by the rule: agree when every effect reaches agree_at, partly when
    every effect reaches the margin, else disagree. A claim without one is an observation the paper states
    without a baseline to beat (its `agree` condition): agree or disagree, no partly."""
    if "partly" in c:
        raise ManifestError(f"{w}: 'partly' is not a claim's own: the rule decides it (give 'effect', 'unit', "
                            "'size', 'fraction')")
    if "effect" not in c:
        extra = [k for k in RULE_KEYS if k in c]
        if extra:
            raise ManifestError(f"{w}: '{extra[0]}' needs 'effect'")
        return {"agree": _need(c, "agree", str, w), "partly": "", "rule": None}
    if "agree" in c:
        raise ManifestError(f"{w}: a claim with 'effect' takes its agree condition from the rule, not 'agree'")
    eff = c["effect"]
    if not isinstance(eff, dict) or not eff or not all(isinstance(v, str) for v in eff.values()):
        raise ManifestError(f"{w}: 'effect' must map each baseline to an expression over the values")
    unit = c.get("unit", "%")
    if unit not in MARGIN:
        raise ManifestError(f"{w}: 'unit' must be one of {', '.join(MARGIN)}")
    size = c.get("size")
    sizes = size if isinstance(size, dict) else {b: size for b in eff}
    if set(sizes) != set(eff) or not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                                         for v in sizes.values()):
        raise ManifestError(f"{w}: 'size' must be a number or map every baseline of 'effect' to one")
    frac = c.get("fraction", 1.0)
    if not isinstance(frac, (int, float)) or isinstance(frac, bool) or not 0 < frac <= 1:
        raise ManifestError(f"{w}: 'fraction' must be a number in (0, 1]")
    rule = {"effect": dict(eff), "unit": unit, "size": {b: sizes[b] for b in eff}, "fraction": float(frac),
            "margin": MARGIN[unit], "agree_at": {b: agree_at(unit, sizes[b], frac) for b in eff}}
    agree = " and ".join(f"({e}) >= {rule['agree_at'][b]!r}" for b, e in eff.items())
    partly = " and ".join(f"({e}) >= {rule['margin']!r}" for e in eff.values())
    return {"agree": agree, "partly": partly, "rule": rule}


def effect_intervals(rule, per_seed):
    """Each baseline's effect over seeds: label -> (mean, low, high) of its 95 % interval (Student's t over the
    per-seed effects)."""
    env = {"min": min, "max": max, "abs": abs, "mean": lambda v: sum(v) / len(v), "__builtins__": {}}
    n = min(len(v) for v in per_seed.values())
    out = {}
    for b, e in rule["effect"].items():
        vals = [eval(e, env, {k: v[i] for k, v in per_seed.items()}) for i in range(n)]  # noqa: S307
        m, h = mean_ci95(vals)
        out[b] = (m, m - h, m + h)
    return out


def rule_text(rule, intervals=None, cond=""):
    """A claim's rule for the table: per baseline the effect measured (with its interval) and the agree level;
    for an observation its condition."""
    if rule is None:
        return "observation (agree or disagree)" + (f": `{cond}`" if cond else "")
    u = rule["unit"]

    def f(x):
        if math.isnan(x):
            return "n/a"
        return f"{round(x) + 0:+d} %" if u == "%" else f"{x:.2f}x"  # no "-0 %"
    parts = []
    for b in rule["effect"]:
        got = ""
        if intervals and b in intervals:
            m, lo, hi = intervals[b]
            got = f"{f(m)} [{f(lo)}, {f(hi)}] " if hi > lo else f"{f(m)} "
        parts.append(f"{b} {got}(agree \u2265 {f(rule['agree_at'][b])})")
    return "; ".join(parts) + f"; partly \u2265 {f(rule['margin'])} each"


class Manifest:
    def __init__(self, path):
        self.path = path
        try:
            with open(path, "rb") as f:
                doc = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ManifestError(f"{path}: {e}") from None
        p = doc.get("paper")
        if not isinstance(p, dict):
            raise ManifestError(f"{path}: missing [paper] table")
        w = f"{path} [paper]"
        self.key = _need(p, "key", str, w)
        self.order = _need(p, "order", int, w)
        self.title = _need(p, "title", str, w)
        self.seed = _need(p, "seed", str, w)
        self.scale_notes = {s: p.get(s, "") for s in SCALES}
        self.sweeps = []
        names = set()
        for i, s in enumerate(doc.get("sweep", [])):
            w = f"{path} [[sweep]] #{i + 1}"
            name = _unique(s, "name", names, w, "sweep")
            sw = {"name": name, "scenario": _need(s, "scenario", str, w), "grid": _strings(s, "grid", w),
                  "set": _strings(s, "set", w), "test": bool(s.get("test", False))}
            if not sw["grid"]:
                raise ManifestError(f"{w}: 'grid' must not be empty")
            for scale in SCALES:
                t = s.get(scale, {})
                if not isinstance(t, dict):
                    raise ManifestError(f"{w}: '{scale}' must be a table {{ set = [...], grid = [...] }}")
                sw[scale] = {"set": _strings(t, "set", f"{w} {scale}"), "grid": _strings(t, "grid", f"{w} {scale}")}
                if t.get("skip", False):
                    sw[scale]["skip"] = True
                if "seeds" in t:  # at most this many seeds at this scale (a long sweep; the scale note says so)
                    n = t["seeds"]
                    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                        raise ManifestError(f"{w}: '{scale}.seeds' must be an integer >= 1")
                    sw[scale]["seeds"] = n
                if any(g.split("=", 1)[0].strip() == "seed" for g in sw["grid"] + sw[scale]["grid"]):
                    raise ManifestError(f"{w}: 'seed' must not be a grid key: --seeds N runs every sweep over "
                                        "seeds 1..N")
            self.sweeps.append(sw)
        if not self.sweeps:
            raise ManifestError(f"{path}: no [[sweep]]")
        if sum(s["test"] for s in self.sweeps) != 1:
            raise ManifestError(f"{path}: exactly one [[sweep]] must have test = true")
        self.claims = []
        ids = set()
        for i, c in enumerate(doc.get("claim", [])):
            w = f"{path} [[claim]] #{i + 1}"
            cid = _unique(c, "id", ids, w, "claim id")
            vals = _need(c, "values", dict, w)
            if not vals or not all(isinstance(v, str) for v in vals.values()):
                raise ManifestError(f"{w}: 'values' must map names to metric expressions (strings)")
            shadow = sorted(set(vals) & EXPRESSION_NAMES)
            if shadow:  # a value named "all" would hide all() in the claim's conditions
                raise ManifestError(f"{w}: value name '{shadow[0]}' hides the function of that name in the "
                                    "expressions; call it something else")
            sweeps = _strings(c, "sweeps", w)
            for s in sweeps:
                if s not in names:
                    raise ManifestError(f"{w}: unknown sweep '{s}' (have: {', '.join(sorted(names))})")
            if not sweeps:
                raise ManifestError(f"{w}: 'sweeps' must name the sweeps the claim reads")
            claim = {
                "id": cid, "sweeps": sweeps, "claim": _need(c, "claim", str, w), "paper": _need(c, "paper", str, w),
                "values": vals, "show": _need(c, "show", str, w), "why": c.get("why", ""),
                "figure": c.get("figure", ""), "scales": _strings(c, "scales", w, SCALES),
                "deviation": c.get("deviation", ""),
            }
            if not isinstance(claim["deviation"], str):
                raise ManifestError(f"{w}: 'deviation' must be a string")
            claim.update(parse_rule(c, w))
            self.claims.append(claim)
            if not set(self.claims[-1]["scales"]) <= set(SCALES):
                raise ManifestError(f"{w}: 'scales' must name scales among {', '.join(SCALES)}")
        self.sensitivity = []
        claim_ids = {c["id"]: c for c in self.claims}
        for i, t in enumerate(doc.get("sensitivity", [])):
            w = f"{path} [[sensitivity]] #{i + 1}"
            cid = _need(t, "claim", str, w)
            if cid not in claim_ids:
                raise ManifestError(f"{w}: unknown claim '{cid}'")
            if any(e["claim"] == cid for e in self.sensitivity):
                raise ManifestError(f"{w}: claim '{cid}' has a [[sensitivity]] already")
            vary = _strings(t, "vary", w)
            if not vary:
                raise ManifestError(f"{w}: 'vary' must list the alternative settings (\"key=value key2=value2\")")
            grid_keys = {g.split("=", 1)[0].strip() for s in self.sweeps if s["name"] in claim_ids[cid]["sweeps"]
                         for g in s["grid"] + s["quick"]["grid"] + s["full"]["grid"]}
            for alt in vary:
                for kv in alt.split():
                    k, eq, v = kv.partition("=")
                    if not eq or not k or not v:
                        raise ManifestError(f"{w}: '{alt}': expected space-separated key=value settings")
                    if k in grid_keys or k == "seed":
                        raise ManifestError(f"{w}: '{k}' is a grid key of the claim's sweeps (or the seed); vary "
                                            "settings the sweeps do not already vary")
            scale = t.get("scale", "quick")
            if scale not in SCALES:
                raise ManifestError(f"{w}: 'scale' must be one of {', '.join(SCALES)}")
            seeds = t.get("seeds", 3)
            if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
                raise ManifestError(f"{w}: 'seeds' must be an integer >= 1")
            if scale not in claim_ids[cid]["scales"]:
                raise ManifestError(f"{w}: claim '{cid}' is measured at {' and '.join(claim_ids[cid]['scales'])} "
                                    f"scale only, not '{scale}'")
            degen = t.get("degenerate", {})
            if not isinstance(degen, dict) or not all(isinstance(v, str) for v in degen.values()) \
                    or not set(degen) <= set(vary):
                raise ManifestError(f"{w}: 'degenerate' must map settings of 'vary' to the reason they are degenerate")
            self.sensitivity.append({"claim": cid, "vary": vary, "scale": scale, "seeds": seeds, "degenerate": degen})
        self.figures = []
        for i, f in enumerate(doc.get("figure", [])):
            w = f"{path} [[figure]] #{i + 1}"
            if _need(f, "sweep", str, w) not in names:
                raise ManifestError(f"{w}: unknown sweep '{f['sweep']}'")
            kind = _need(f, "kind", str, w)
            if kind not in FIGURE_KINDS:
                raise ManifestError(f"{w}: kind '{kind}' is not one of {', '.join(FIGURE_KINDS)}")
            if kind == "script":
                _need(f, "script", str, w)
            win = f.get("window_us")
            if win is not None and not (isinstance(win, list) and len(win) == 2
                                        and all(isinstance(x, (int, float)) for x in win) and win[0] < win[1]):
                raise ManifestError(f"{w}: 'window_us' must be [t0, t1] with t0 < t1")
            flows = f.get("flows", {})
            if not isinstance(flows, dict) or not all(isinstance(v, str) for v in flows.values()):
                raise ManifestError(f"{w}: 'flows' must map flow ids to labels")
            facet = f.get("facet")
            if facet is not None and (kind != "fct_vs_load" or not isinstance(facet, str)):
                raise ManifestError(f"{w}: 'facet' (a grid key: one row of panels per value) is for fct_vs_load")
            sw_keys = {g.split("=", 1)[0].strip() for s in self.sweeps if s["name"] == f["sweep"]
                       for g in s["grid"] + s["quick"]["grid"] + s["full"]["grid"]}
            if facet is not None and facet not in sw_keys:
                raise ManifestError(f"{w}: facet '{facet}' is no grid key of sweep '{f['sweep']}' at any scale")
            at = f.get("load")
            if at is not None and (kind not in ("buffer_cdf", "slowdown_vs_size") or isinstance(at, bool)
                                   or not isinstance(at, (int, float))):
                raise ManifestError(f"{w}: 'load' (the load drawn; default the highest) is a number, for "
                                    "buffer_cdf and slowdown_vs_size")
            self.figures.append({"sweep": f["sweep"], "kind": kind, "caption": _need(f, "caption", str, w),
                                 "runs": f.get("runs", {}), "script": f.get("script", ""), "window": win,
                                 "flows": flows, "facet": facet, "load": at,
                                 "name": f.get("name", f"{f['sweep']}_{kind}_{i}")})


def load_manifests(man_dir):
    out = []
    for name in sorted(os.listdir(man_dir)):
        p = os.path.join(man_dir, name)
        if name.endswith(".toml") and os.path.isfile(p):
            out.append(Manifest(p))
    out.sort(key=lambda m: (m.order, m.key))
    keys = [m.key for m in out]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ManifestError(f"paper key(s) used twice: {', '.join(sorted(dup))}")
    return out


# ----------------------------------------------------------------------------------------------------------
# Results of one run


def _match_port(row, port):
    """port: 'NODE:PEER' (names as in the scenario, case-insensitive)."""
    node, _, peer = port.partition(":")
    return row["node"].lower() == node.lower() and (not peer or row["peer"].lower() == peer.lower())


class RunData:
    """One run directory. Times are simulated microseconds; rates Gb/s; sizes bytes."""

    def __init__(self, path):
        self.path = path
        self._cache = {}
        if not os.path.isfile(os.path.join(path, "summary.json")):
            raise MetricError(f"{path}: no complete run")
        self.data = rocesim.Run(path)  # reads each file on first use

    def _load(self, name):
        """summary.json (a dict), or a CSV file's rows (dicts of its typed columns)."""
        if name not in self._cache:
            if name == "summary.json":
                self._cache[name] = self.data.summary
            else:
                df = getattr(self.data, rocesim.readers.RUN_TABLES[name][1])
                if df is None:
                    p = os.path.join(self.path, name)
                    raise MetricError(f"{name} missing in {os.path.dirname(p)} (monitor not enabled?)")
                self._cache[name] = df.to_dict("records")
        return self._cache[name]

    def summary(self, dotted):
        """A value of summary.json by dotted path, e.g. 'pfc.pauses_sent'."""
        v = self._load("summary.json")
        for k in dotted.split("."):
            if isinstance(v, list):
                v = v[int(k)]
            elif isinstance(v, dict) and k in v:
                v = v[k]
            else:
                raise MetricError(f"summary.json has no '{dotted}'")
        return to_float(v)

    def flows(self, cls=None, min_bytes=None, max_bytes=None):
        rows = self._load("flows.csv")
        out = []
        for r in rows:
            if cls is not None and r.get("class") != cls and not (isinstance(cls, (list, tuple)) and r.get("class") in cls):
                continue
            s = to_float(r["size_bytes"])
            if min_bytes is not None and s < min_bytes:
                continue
            if max_bytes is not None and s > max_bytes:
                continue
            out.append(r)
        return out

    def ids(self):
        """The ids of the finished flows."""
        if "ids" not in self._cache:
            self._cache["ids"] = {r["id"] for r in self._load("flows.csv")}
        return self._cache["ids"]

    def fct(self, stat="avg", cls=None, min_bytes=None, max_bytes=None, field="fct_us", common=None):
        """FCT (us) or slowdown (field='slowdown') of finished flows: avg, p50, p95, p99, max, count.
        common: another run of the same flows; only flows finished in both count (so one long flow that
        finished in one run only does not move an average)."""
        both = common.ids() if common is not None else None
        v = [to_float(r[field]) for r in self.flows(cls, min_bytes, max_bytes) if both is None or r["id"] in both]
        v = [x for x in v if not math.isnan(x)]
        if stat == "count":
            return float(len(v))
        if not v:
            raise MetricError(f"no finished flows match (class={cls}, {min_bytes}..{max_bytes} B)")
        if stat == "avg":
            return sum(v) / len(v)
        if stat == "max":
            return max(v)
        if stat.startswith("p"):  # p99 = 99/100, p999 = 999/1000
            return nearest_rank(v, Fraction(int(stat[1:]), 10 ** (len(stat) - 1)))
        raise MetricError(f"unknown statistic '{stat}'")

    def throughput(self, cls=None, min_bytes=None, max_bytes=None):
        """Mean per-flow throughput (Gb/s) = size / FCT over the finished flows that match."""
        v = [to_float(r["size_bytes"]) * 8e-3 / to_float(r["fct_us"]) for r in self.flows(cls, min_bytes, max_bytes)
             if to_float(r["fct_us"]) > 0]
        if not v:
            raise MetricError(f"no finished flows match (class={cls})")
        return sum(v) / len(v)

    def flow_fct(self, fid):
        for r in self._load("flows.csv"):
            if int(r["id"]) == fid:
                return to_float(r["fct_us"])
        raise MetricError(f"flow {fid} did not finish")

    def _bins(self, kind, ident):
        key = ("bins", kind, str(ident))
        if key not in self._cache:
            self._cache[key] = [(to_float(r["time_us"]), to_float(r["gbps"])) for r in self._load("rates.csv")
                                if r["kind"] == kind and r["id"] == str(ident)]
        return self._cache[key]

    def rate_series(self, fid, t0=None, t1=None, kind="flow"):
        b = self._bins(kind, fid)
        if not b:
            raise MetricError(f"no {kind} {fid} in rates.csv")
        return [(t, g) for t, g in b if (t0 is None or t >= t0) and (t1 is None or t < t1)]

    def rate(self, fid, t0, t1, kind="flow"):
        """Mean goodput (Gb/s) of flow `fid` over the rate bins starting in [t0, t1) us (a bin the flow did not
        send in counts as 0)."""
        b = self._bins(kind, fid)
        if not b:
            raise MetricError(f"no {kind} {fid} in rates.csv")
        width = b[1][0] - b[0][0] if len(b) > 1 else 10.0
        n = max(1, round((t1 - t0) / width))
        return sum(g for t, g in b if t0 <= t < t1) / n

    def rate_min(self, fid, t0, t1, kind="flow", smooth=1):
        """Lowest goodput (Gb/s) over [t0, t1) us, averaging `smooth` consecutive bins."""
        s = self.rate_series(fid, t0, t1, kind)
        if len(s) < smooth:
            raise MetricError(f"flow {fid}: fewer than {smooth} rate bins in [{t0}, {t1}) us")
        return min(sum(g for _, g in s[i:i + smooth]) / smooth for i in range(len(s) - smooth + 1))

    def recovery_us(self, fid, end_us, pre=None, frac=0.9, hold=5, target=None):
        """Time from `end_us` until flow `fid` is at or above a threshold for `hold` consecutive bins: `target`
        Gb/s when given, else `frac` of its mean rate over `pre` = (t0, t1)."""
        level = target if target is not None else frac * self.rate(fid, pre[0], pre[1])
        post = self.rate_series(fid, end_us)
        for i in range(len(post) - hold + 1):
            if all(g >= level for _, g in post[i:i + hold]):
                return max(0.0, post[i][0] - end_us)
        raise MetricError(f"flow {fid} never recovers to {level:.2f} Gb/s")

    def reaction_us(self, fid, t0, level, above=False, hold=1, t1=None):
        """Time (us) from `t0` to the end of the first of `hold` consecutive rate bins (starting at or after t0)
        in which flow `fid`'s goodput is below `level` Gb/s (above=True: at or above it): by then it has
        reacted, so the time is at least one bin. A flow that never gets there before `t1` (or its last bin)
        counts as reacting at the end of that window (t1 - t0, or the last bin's end - t0): a lower bound on
        its reaction time, never a value in its favour."""
        s = self.rate_series(fid, t0, t1)
        if not s:
            raise MetricError(f"flow {fid}: no rate bins in [{t0}, {t1}) us")
        b = self._bins("flow", fid)
        width = b[1][0] - b[0][0] if len(b) > 1 else 10.0
        for i in range(len(s) - hold + 1):
            if all((g >= level) if above else (g < level) for _, g in s[i:i + hold]):
                return s[i][0] + width - t0
        return (t1 if t1 is not None else s[-1][0] + width) - t0

    def queue_max(self, port, t0=None, t1=None):
        """Peak sampled egress queue (bytes) of port 'NODE:PEER' (queues.csv)."""
        v = [to_float(r["queue_bytes"]) for r in self._load("queues.csv") if _match_port(r, port)
             and (t0 is None or to_float(r["time_us"]) >= t0) and (t1 is None or to_float(r["time_us"]) < t1)]
        if not v:
            raise MetricError(f"no samples of port {port} in queues.csv")
        return max(v)

    def queue_avg(self, port, t0=None, t1=None):
        v = [to_float(r["queue_bytes"]) for r in self._load("queues.csv") if _match_port(r, port)
             and (t0 is None or to_float(r["time_us"]) >= t0) and (t1 is None or to_float(r["time_us"]) < t1)]
        if not v:
            raise MetricError(f"no samples of port {port} in queues.csv")
        return sum(v) / len(v)

    def pauses(self, port=None, t0=None, t1=None):
        """PAUSE frames received (pfc.csv); port 'NODE:PEER' = received by NODE from PEER; None = all."""
        n = 0
        for r in self._load("pfc.csv"):
            if r["event"] != "pause" or (port and not _match_port(r, port)):
                continue
            t = to_float(r["time_us"])
            if (t0 is None or t >= t0) and (t1 is None or t < t1):
                n += 1
        return float(n)

    def paused_us(self, port=None):
        """Total paused time (us) from pfc.csv's resume/end rows, for one port or all."""
        return sum(to_float(r["duration_us"]) for r in self._load("pfc.csv")
                   if r["event"] != "pause" and (not port or _match_port(r, port)))

    def cnps(self, fid, from_switches=False):
        for r in self._load("cnps.csv"):
            if int(r["flow_id"]) == fid:
                return to_float(r["cnps_from_switches" if from_switches else "cnps_received"])
        return 0.0

    def counter(self, port, name):
        """A scheme's named counter of egress port 'NODE:PEER' (summary.json scheme_counters; 0 when the port
        reported nothing)."""
        sc = self._load("summary.json").get("scheme_counters")
        if sc is None:
            raise MetricError("summary.json has no scheme_counters (the scheme reports none)")
        node, _, peer = port.partition(":")
        for e in sc.get("ports", []):
            if e["node_name"].lower() == node.lower() and e["peer_name"].lower() == peer.lower():
                return to_float(e.get(name, 0))
        return 0.0

    def buffer_quantile(self, switch, q):
        """The q-quantile of a switch's sampled buffer occupancy (bytes) from buffer.csv."""
        rows = [(to_float(r["buffer_bytes"]), to_float(r["cdf"])) for r in self._load("buffer.csv")
                if r["switch"].lower() == switch.lower()]
        if not rows:
            raise MetricError(f"no buffer samples of {switch}")
        return rocesim.cdf_quantile([b for b, _ in rows], [c for _, c in rows], q)


# ----------------------------------------------------------------------------------------------------------
# Running


def sweep_seeds(sw, scale, seeds):
    """How many seeds (1..n) a sweep runs: `seeds`, or fewer where the manifest caps a long sweep."""
    return min(seeds, sw[scale].get("seeds", seeds))


def sweep_args(sw, scale, seeds=1):
    grid = list(sw[scale]["grid"] or sw["grid"])
    n = sweep_seeds(sw, scale, seeds)
    if n > 1:  # one seed keeps the sweep's own grid (and run names), as before seeds existed
        grid.append("seed=" + ",".join(str(i) for i in range(1, n + 1)))
    sets = sw["set"] + sw[scale]["set"]
    return grid, sets


def run_sweep(rocesim_bin, scen_dir, out_dir, sw, scale, jobs, force, quiet, mpi=None, seeds=1):
    grid, sets = sweep_args(sw, scale, seeds)
    cmd = [rocesim_bin, "sweep", os.path.join(scen_dir, sw["scenario"]), "-o", out_dir, "-q"]
    # With an MPI launcher ("mpirun -np 64"), each sweep runs over its ranks (docs/cluster.md); else -j.
    cmd = shlex.split(mpi) + cmd + ["--mpi"] if mpi else cmd + ["-j", str(jobs)]
    cmd += ["--grid"] + grid
    for s in sets:
        cmd += ["--set", s]
    if force:
        cmd.append("--force")
    t = time.time()
    if not quiet:
        print(f"  sweep {sw['name']}: {' '.join(grid)}" + (f"  (--set {' '.join(sets)})" if sets else ""), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode == 2 and "or --force to re-run every run" in r.stdout and not force:
        # The directory holds this sweep made from another scenario text or other --set values (the manifest
        # or the scenario changed since): its runs are not comparable, so re-run them all.
        if not quiet:
            print("    the scenario or its settings changed since the last run: re-running every run", flush=True)
        r = subprocess.run(cmd + ["--force"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.time() - t
    if r.returncode == 130:
        raise KeyboardInterrupt
    ok = r.returncode == 0
    if not quiet or not ok:
        tail = "" if ok else "\n" + "\n".join("    " + ln for ln in r.stdout.strip().splitlines()[-12:])
        print(f"    {'done' if ok else 'FAILED'} in {wall:.1f} s{tail}", flush=True)
    out = {"ok": ok, "wall_s": wall, "grid": grid, "sets": sets, "rc": r.returncode}
    if ok:  # each run's own wall time (one core each): what a cluster's ranks would share
        results = os.path.join(out_dir, "results.csv")
        rows = rocesim.read_results(results).to_dict("records") if os.path.exists(results) else []
        walls = [to_float(row.get("wall_seconds")) for row in rows
                 if row.get("bucket", "all") == "all" and row.get("class", "all") == "all"]
        walls = [w for w in walls if not math.isnan(w)]
        out["runs"] = len(walls)
        out["run_wall_s"] = {"sum": sum(walls), "max": max(walls, default=0.0)}
    return out


class SweepIndex:
    """The run directories of one sweep, looked up by grid values."""

    def __init__(self, path):
        self.path = path
        self.runs = []
        m = os.path.join(path, "sweep.json")
        if os.path.exists(m):
            for name in rocesim.read_sweep_manifest(m).get("runs", []):
                vals = dict(kv.split("=", 1) for kv in name.split(",") if "=" in kv)
                self.runs.append((vals, os.path.join(path, safe_dir_name(name))))

    def find(self, want):
        # Run names in sweep.json are file-name safe ("traffic[0].x" -> "traffic_0_.x"): compare in that form.
        axes = {k for vals, _ in self.runs for k in vals}
        # A key that is no grid axis of this sweep (e.g. the workload at quick scale, where the sweep runs one)
        # is checked against the value the run used (its scenario.resolved.toml).
        fixed = {k: v for k, v in want.items() if safe_dir_name(k) not in axes}
        want = {safe_dir_name(k): safe_dir_name(str(v)) for k, v in want.items() if safe_dir_name(k) in axes}
        hits = [d for vals, d in self.runs if all(vals.get(k) == v for k, v in want.items())
                and all(resolved_value(d, k) == str(v) for k, v in fixed.items())]
        if not hits:
            raise MetricError(f"sweep {os.path.basename(self.path)}: no run with {want}")
        if len(hits) > 1:
            raise MetricError(f"sweep {os.path.basename(self.path)}: {len(hits)} runs match {want}; be more specific")
        return hits[0]


def resolved_value(run_dir, key):
    """The value of dotted key `key` ("traffic[0].workload", "scheme" = cc.scheme, "load" = traffic[0].load) in a
    run's scenario.resolved.toml, as a string (None when absent)."""
    key = {"scheme": "cc.scheme", "load": "traffic[0].load"}.get(key, key)
    try:
        v = rocesim.read_scenario(os.path.join(run_dir, "scenario.resolved.toml"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    for part in key.replace("[", ".[").split("."):
        if part.startswith("[") and part.endswith("]") and isinstance(v, list):
            i = int(part[1:-1])
            v = v[i] if i < len(v) else None
        elif isinstance(v, dict):
            v = v.get(part)
        else:
            return None
        if v is None:
            return None
    return str(v)


def safe_dir_name(name):
    return "".join(c if c.isalnum() or c in "._+=,-" else "_" for c in name)


class Estimate:
    """A value measured over seeds: its mean and the half-width of its 95 % confidence interval. Formats as
    "mean ± half" with the format spec of the claim's `show` (as the mean alone when the interval is 0)."""

    def __init__(self, values):
        v = list(values)
        # NaN in (a metric with nothing to measure): NaN out, and a condition on it is false (see _cmp)
        self.mean, self.half = (math.nan, 0.0) if any(math.isnan(x) for x in v) else mean_ci95(v)

    def __format__(self, spec):
        m = format(self.mean, spec)
        h = format(self.half, spec.replace("+", "").replace(" ", ""))
        if self.half == 0 or float(h.rstrip("%")) == 0:
            return m
        return f"{m} \u00b1 {h}"


class Seeds:
    """A value measured once per seed, in a claim's condition: arithmetic is per seed, so a comparison compares
    the two sides seed by seed (paired: both come from the same seed's runs)."""

    def __init__(self, values):
        self.v = [float(x) for x in values]

    @staticmethod
    def of(x, n):
        return x.v if isinstance(x, Seeds) else [float(x)] * n

    def _op(self, other, f):
        o = Seeds.of(other, len(self.v))
        return Seeds(f(a, b) for a, b in zip(self.v, o))

    def __add__(self, o): return self._op(o, lambda a, b: a + b)  # noqa: E704
    def __radd__(self, o): return self._op(o, lambda a, b: b + a)  # noqa: E704
    def __sub__(self, o): return self._op(o, lambda a, b: a - b)  # noqa: E704
    def __rsub__(self, o): return self._op(o, lambda a, b: b - a)  # noqa: E704
    def __mul__(self, o): return self._op(o, lambda a, b: a * b)  # noqa: E704
    def __rmul__(self, o): return self._op(o, lambda a, b: b * a)  # noqa: E704
    def __truediv__(self, o): return self._op(o, lambda a, b: a / b)  # noqa: E704
    def __rtruediv__(self, o): return self._op(o, lambda a, b: b / a)  # noqa: E704
    def __neg__(self): return Seeds(-a for a in self.v)  # noqa: E704
    def __abs__(self): return Seeds(abs(a) for a in self.v)  # noqa: E704

    def __bool__(self):
        raise TypeError("a value over seeds has no single truth value (compare it)")


def _n_seeds(args):
    return max((len(x.v) for x in args if isinstance(x, Seeds)), default=0)


def _extreme(f, args):
    items = list(args[0]) if len(args) == 1 else list(args)
    n = _n_seeds(items)
    if not n:
        return f(items)
    cols = [Seeds.of(x, n) for x in items]
    return Seeds(f(col[i] for col in cols) for i in range(n))


def _cmp(a, op, b):
    """Tri-state comparison over seeds: True when the 95 % interval of the per-seed difference a - b lies
    wholly on the side the operator asks for, False when wholly on the other side, None when it straddles.
    With one seed (or the same difference in every seed) it is the plain comparison."""
    n = _n_seeds([a, b])
    if not n:
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
    d = [x - y for x, y in zip(Seeds.of(a, n), Seeds.of(b, n))]
    if any(math.isnan(x) for x in d):
        return False
    m, h = mean_ci95(d)
    lo, hi = m - h, m + h
    if op == "<":
        return True if hi < 0 else (False if lo >= 0 else None)
    if op == "<=":
        return True if hi <= 0 else (False if lo > 0 else None)
    if op == ">":
        return True if lo > 0 else (False if hi <= 0 else None)
    if op == ">=":
        return True if lo >= 0 else (False if hi < 0 else None)
    eq = True if lo == 0 and hi == 0 else (False if lo > 0 or hi < 0 else None)
    return eq if op == "==" else _not(eq)


def _and(*xs):
    xs = [x if x is None else bool(x) for x in xs]
    return False if False in xs else (True if all(xs) else None)


def _or(*xs):
    xs = [x if x is None else bool(x) for x in xs]
    return True if True in xs else (False if all(x is False for x in xs) else None)


def _not(x):
    return None if x is None else not x


class _TriState(ast.NodeTransformer):
    """Rewrites a condition so that `and`, `or`, `not` and comparisons go through the tri-state functions."""
    OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        f = "_and" if isinstance(node.op, ast.And) else "_or"
        return ast.Call(ast.Name(f, ast.Load()), node.values, [])

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.Call(ast.Name("_not", ast.Load()), [node.operand], [])
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            if type(op) not in self.OPS:
                raise ManifestError(f"condition: operator {type(op).__name__} is not supported over seeds")
            parts.append(ast.Call(ast.Name("_cmp", ast.Load()), [left, ast.Constant(self.OPS[type(op)]), right], []))
            left = right
        return parts[0] if len(parts) == 1 else ast.Call(ast.Name("_and", ast.Load()), parts, [])


def tri_eval(cond, per_seed):
    """A claim condition over per-seed values: True, False or None (the intervals straddle it)."""
    tree = _TriState().visit(ast.parse(cond, mode="eval"))
    code = compile(ast.fix_missing_locations(tree), "<condition>", "eval")
    env = {n: Seeds(v) for n, v in per_seed.items()}
    env.update({"_cmp": _cmp, "_and": _and, "_or": _or, "_not": _not, "abs": abs, "len": len,
                "min": lambda *a: _extreme(min, a), "max": lambda *a: _extreme(max, a),
                "all": lambda it: _and(*it), "any": lambda it: _or(*it),
                "sum": lambda it: sum(it, 0), "mean": lambda v: sum(v, 0) / len(v), "__builtins__": {}})
    return eval(code, env, {})  # noqa: S307 (manifests are the repo's own files)


def interval_verdict(c, per_seed):
    """The verdict over seeds. Each comparison in the claim's conditions is decided by the 95 % confidence
    interval of the per-seed difference of its two sides (see _cmp); `and`/`or`/`not` combine the three
    states. agree only when the agree condition holds over the whole interval; "inconclusive" when an
    interval straddles a condition, with the verdicts it straddles."""
    a = tri_eval(c["agree"], per_seed)
    p = tri_eval(c["partly"], per_seed) if c["partly"] else False
    if a is True:
        return "agree", ""
    if a is False:
        if p is None:
            return "inconclusive", "disagree to partly within the 95 % intervals"
        return ("partly" if p else "disagree"), ""
    return "inconclusive", ("partly" if p is True else "disagree") + " to agree within the 95 % intervals"


def rerun_command(man, scale, cid, seeds):
    return f"rocesim reproduce {man.key} --scale {scale} --seeds {seeds} --claim {cid}"


def evaluate(man, paper_dir, ran, scale, claims=None, seeds=1):
    """Every claim of a manifest (or of the ids in `claims`) -> dict id -> {values (means), ci (half-widths),
    per_seed, seeds, shown, verdict, seed_verdicts, note, command}. `ran`: sweep name -> status. Each claim is
    measured once per seed its sweeps ran (seed 1 alone for a sweep run without a seed axis)."""
    indexes = {}
    cache = {}

    def index(sweep):
        if sweep not in indexes:
            indexes[sweep] = SweepIndex(os.path.join(paper_dir, sweep))
        return indexes[sweep]

    def sweep_seed_list(sweep):
        vals = {v.get("seed") for v, _ in index(sweep).runs}
        return sorted(int(x) for x in vals) if None not in vals else [1]

    current = {"seed": None}

    def with_seed(sweep, want):
        if current["seed"] is not None and any("seed" in v for v, _ in index(sweep).runs):
            want = dict(want, seed=str(current["seed"]))
        return want

    def R(sweep, *specs, **want):
        """The run of `sweep` with the given grid values: keyword (scheme="dcqcn", load=0.5) or "key=value"
        strings for dotted keys ("switch.xoff_bytes=30000"); the seed is the one being measured."""
        for spec in specs:
            for kv in spec.split(","):
                k, eq, v = kv.partition("=")
                if not eq:
                    raise MetricError(f"'{spec}': expected key=value")
                want[k.strip()] = v.strip()
        d = index(sweep).find(with_seed(sweep, want))
        if d not in cache:
            cache[d] = RunData(d)
        return cache[d]

    def S(sweep):
        want = with_seed(sweep, {})
        return [RunData(d) for vals, d in index(sweep).runs if os.path.isfile(os.path.join(d, "summary.json"))
                and all(vals.get(k) == v for k, v in want.items())]

    def G(sweep, key):
        """The values of grid axis `key` of a sweep (numbers where they are numbers, in order): e.g. the loads
        a claim averages over, which differ between the scales."""
        k = safe_dir_name(key)
        vals = {v[k] for v, _ in index(sweep).runs if k in v}
        nums = {x: to_float(x) for x in vals}
        if all(not math.isnan(f) for f in nums.values()):
            return sorted(nums.values())
        return sorted(vals)

    env = {"R": R, "S": S, "G": G, "ratio": ratio, "reduction": reduction, "mean": lambda v: sum(v) / len(v),
           "min": min, "max": max, "abs": abs, "all": all, "any": any, "len": len, "sum": sum, "range": range, "jain": jain,
           "math": math,
           "__builtins__": {}}
    out = {}
    for c in man.claims:
        if claims is not None and c["id"] not in claims:
            continue
        missing = [s for s in c["sweeps"] if s not in ran]
        failed = [s for s in c["sweeps"] if s in ran and not ran[s]["ok"]]
        entry = {"values": {}, "ci": {}, "per_seed": {}, "seeds": [], "shown": "", "verdict": "not run",
                 "seed_verdicts": [], "note": "", "command": rerun_command(man, scale, c["id"], seeds)}
        if scale not in c["scales"]:
            entry["note"] = f"measured at {' and '.join(c['scales'])} scale only"
            out[c["id"]] = entry
            continue
        if missing:
            entry["note"] = f"sweep(s) not run: {', '.join(missing)}"
            out[c["id"]] = entry
            continue
        if failed:  # its directory may hold older runs: do not read them
            entry["verdict"] = "no number"
            entry["note"] = f"sweep(s) failed: {', '.join(failed)}"
            out[c["id"]] = entry
            continue
        seed_sets = [set(sweep_seed_list(sw)) for sw in c["sweeps"]]
        claim_seeds = sorted(set.intersection(*seed_sets)) if seed_sets else [1]
        per_seed = {name: [] for name in c["values"]}
        errors = []
        for sd in claim_seeds:
            current["seed"] = sd  # R and S add it for the sweeps that have a seed axis
            for name, expr in c["values"].items():
                try:
                    v = eval(expr, env, {})  # noqa: S307 (manifests are the repo's own files)
                    per_seed[name].append(float(v))
                except MetricError as e:
                    errors.append(f"{name}" + (f" (seed {sd})" if len(claim_seeds) > 1 else "") + f": {e}")
                except (ArithmeticError, ValueError, KeyError, IndexError, TypeError) as e:
                    errors.append(f"{name}: {type(e).__name__}: {e}")
                except (NameError, SyntaxError, AttributeError) as e:
                    raise ManifestError(f"{man.path} claim {c['id']} value '{name}': {type(e).__name__}: {e}") from None
        current["seed"] = None
        entry["seeds"] = claim_seeds
        entry["per_seed"] = per_seed
        if errors:
            entry["verdict"] = "no number"
            entry["note"] = "; ".join(errors)
            out[c["id"]] = entry
            continue
        judge_entry(man, c, entry)
        out[c["id"]] = entry
    return out


def judge_entry(man, c, entry):
    """Fill a claim's entry from its per-seed values (entry["per_seed"]): the means, intervals, the text shown,
    the verdict under the rule, each seed's verdict and each baseline's effect interval."""
    per_seed = entry["per_seed"]
    n = len(entry.get("seeds") or [1])
    est = {k: Estimate(v) for k, v in per_seed.items()}
    entry["values"] = {k: e.mean for k, e in est.items()}
    entry["ci"] = {k: e.half for k, e in est.items()}
    try:
        entry["shown"] = c["show"].format(**est)
    except (KeyError, ValueError, IndexError) as e:
        raise ManifestError(f"{man.path} claim {c['id']}: 'show' cannot be formatted: {e}") from None
    try:
        entry["seed_verdicts"] = [interval_verdict(c, {k: [per_seed[k][i]] for k in per_seed})[0] for i in range(n)]
        entry["verdict"], entry["note"] = interval_verdict(c, per_seed)
        if c.get("rule"):
            entry["effects"] = {b: list(v) for b, v in effect_intervals(c["rule"], per_seed).items()}
        else:
            entry.pop("effects", None)
    except Exception as e:  # noqa: BLE001
        raise ManifestError(f"{man.path} claim {c['id']}: condition fails: {type(e).__name__}: {e}") from None


def rejudge(docs_dir, manifests):
    """Judge every stored claim again from its stored per-seed values under the manifests' current rules (no
    runs): rewrites DOCS/reproduction/<paper>.<scale>.json and returns (paper, scale, id, before, after, note)
    per claim. The entries keep the commit and date of the runs that measured them."""
    changes = []
    for man in manifests:
        for scale in SCALES:
            path = os.path.join(docs_dir, "reproduction", f"{man.key}.{scale}.json")
            if not os.path.exists(path):
                continue
            doc = json.load(open(path))
            for c in man.claims:
                e = doc["claims"].get(c["id"])
                if not e or e.get("verdict") not in VERDICTS:
                    continue
                if not e.get("per_seed"):  # stored before per-seed values were kept: one seed, its values
                    if any(e.get("ci", {}).values()) or not e.get("values"):
                        continue
                    e["per_seed"] = {k: [v] for k, v in e["values"].items()}
                    e["seeds"] = [1]
                before = e["verdict"]
                judge_entry(man, c, e)
                changes.append((man.key, scale, c["id"], before, e["verdict"], e["note"]))
            write_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return changes


# ----------------------------------------------------------------------------------------------------------
# Figures

FIGURE_KINDS = ("timeseries", "fct_bars", "fct_vs_load", "pfc", "buffer_cdf", "slowdown_vs_size", "script")


def make_figure(fig, sweep_dir, out_dir, python):
    import rocesim_plots as rp

    name = fig["name"]
    if fig["kind"] == "script":
        png = os.path.join(out_dir, name + ".png")
        r = subprocess.run([python, os.path.join(REPO, fig["script"]), "--out", png, sweep_dir],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0 or not os.path.exists(png):
            raise MetricError(f"{fig['script']} failed: {r.stdout.strip()[-400:]}")
        return png
    sw = rp.Sweep(sweep_dir)
    if fig["kind"] == "timeseries":
        runs = [run for run in sw.runs.values()
                if all(str(run.values.get(k, "")) in [str(x) for x in (v if isinstance(v, list) else [v])]
                       for k, v in fig["runs"].items())]
        seeds = sorted({to_float(r.values.get("seed"), 1) for r in runs})
        if len(seeds) > 1:  # a time series is one run: seed 1's (the claims give every seed's interval)
            runs = [r for r in runs if to_float(r.values.get("seed"), 1) == seeds[0]]
        path, _ = rp.fig_timeseries(runs, out_dir, name, flows=fig["flows"] or None,
                                    window=tuple(fig["window"]) if fig["window"] else None)
        return path
    if fig["kind"] == "fct_bars":
        return rp.fig_fct_bars_sweep(sw, out_dir, name)
    if fig["kind"] == "fct_vs_load":
        # a facet the sweep does not vary at this scale (e.g. one workload at quick scale): one row
        facet = fig.get("facet") if fig.get("facet") in sw.grid else None
        return rp.fig_fct_vs_load(sw, out_dir, name, facet=facet)
    if fig["kind"] == "pfc":
        return rp.fig_pfc_sweep(sw, out_dir, name)
    def chosen_load():  # the figure's `load`, else the highest the sweep ran
        if fig.get("load") is None:
            return sw.loads[-1] if sw.loads else None
        hits = [x for x in sw.loads if to_float(x) == float(fig["load"])]
        if not hits:
            raise MetricError(f"figure {name}: the sweep ran no load {fig['load']} (has: {', '.join(sw.loads)})")
        return hits[0]
    if fig["kind"] == "buffer_cdf":
        top = chosen_load()
        groups = OrderedDict((s, sw.representative(s, top)) for s in sw.series)
        return rp.fig_buffer_cdf(groups, out_dir, name)
    if fig["kind"] == "slowdown_vs_size":
        top = chosen_load()
        groups = OrderedDict((s, [r.flows() for r in sw.runs_at(s, top)]) for s in sw.series)
        return rp.fig_slowdown_vs_size(groups, out_dir, name)
    raise MetricError(f"unknown figure kind {fig['kind']}")


# ----------------------------------------------------------------------------------------------------------
# Outputs


def git_commit():
    try:
        r = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=10)
        # Changes to the files this tool writes do not count.
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":!docs/REPRODUCTION.md", ":!docs/reproduction"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=10)
        return r.stdout.strip() + ("+changes" if dirty.stdout.strip() else "") if r.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def write_atomic(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def store_results(docs_dir, man, scale, claims, meta):
    """Merge this evaluation into DOCS/reproduction/<paper>.<scale>.json (claims not evaluated keep theirs)."""
    path = os.path.join(docs_dir, "reproduction", f"{man.key}.{scale}.json")
    old = {}
    if os.path.exists(path):
        try:
            old = json.load(open(path)).get("claims", {})
        except (OSError, ValueError):
            old = {}
    merged = {}
    for c in man.claims:
        new = claims.get(c["id"])
        if new and new["verdict"] != "not run":
            merged[c["id"]] = dict(new, commit=meta["commit"], date=meta["date"])
        elif c["id"] in old:
            merged[c["id"]] = old[c["id"]]
    last_run = meta
    if meta.get("no_run") or meta.get("claims_only"):  # only re-evaluated, or a part re-run: keep the last full run
        try:
            last_run = json.load(open(path)).get("last_run", meta)
        except (OSError, ValueError):
            pass
        if meta.get("claims_only") and not meta.get("no_run") and last_run is not meta:
            last_run = merge_part_run(last_run, meta)
    doc = {"paper": man.key, "scale": scale, "notes": man.scale_notes.get(scale, ""), "claims": merged,
           "last_run": last_run}
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def merge_part_run(last_run, part):
    """The last full run with the sweeps a part run (--claim) ran replaced by their new times and seed counts,
    so that the wall time in REPRODUCTION.md is the one measured for each sweep. Each sweep records its seeds."""
    lr = json.loads(json.dumps(last_run))
    sweeps = lr.setdefault("sweeps", {})
    for sw in sweeps.values():
        sw.setdefault("seeds", lr.get("seeds", 1))
    for name, sw in part.get("sweeps", {}).items():
        lr["wall_s"] = lr.get("wall_s", 0.0) - sweeps.get(name, {}).get("wall_s", 0.0) + sw.get("wall_s", 0.0)
        sweeps[name] = dict(sw, seeds=part.get("seeds", 1), date=part["date"], commit=part["commit"])
    lr["seeds"] = max(seed_counts(lr))
    lr["date"] = max(lr.get("date", ""), part["date"])
    return lr


def seed_counts(lr):
    """The seed counts of a run's sweeps (a sweep without its own count ran with the run's)."""
    return sorted({sw.get("seeds", lr.get("seeds", 1)) for sw in lr.get("sweeps", {}).values()}) or [lr.get("seeds", 1)]


def five_seed_time(lr):
    """A paper's full-scale wall time with every sweep scaled from its own seed count to 5 seeds."""
    sweeps = lr.get("sweeps", {}).values()
    n = lr.get("seeds", 1)
    in_sweeps = sum(sw.get("wall_s", 0.0) for sw in sweeps)
    return (sum(sw.get("wall_s", 0.0) * 5 / sw.get("seeds", n) for sw in sweeps)
            + max(0.0, lr["wall_s"] - in_sweeps) * 5 / n)


def seeds_text(lr):
    n = seed_counts(lr)
    return f"{n[0]}-{n[-1]} seeds by sweep" if len(n) > 1 else f"{n[0]} seed{'s' if n[0] > 1 else ''}"


def md_cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def longest_run(last_runs):
    """The longest single run (s) among the sweeps of `last_runs` that recorded their runs' times."""
    return max((sw["run_wall_s"]["max"] for lr in last_runs for sw in lr.get("sweeps", {}).values()
                if sw.get("run_wall_s")), default=0.0)


def fmt_s(sec):
    return f"{sec / 3600:.1f} h" if sec >= 5400 else (f"{sec / 60:.0f} min" if sec >= 120 else f"{sec:.0f} s")


def write_reproduction_md(docs_dir, manifests):
    res_all, sens_all = {}, {}
    for man in manifests:
        res_all[man.key] = {}
        for scale in SCALES:
            p = os.path.join(docs_dir, "reproduction", f"{man.key}.{scale}.json")
            res_all[man.key][scale] = json.load(open(p)) if os.path.exists(p) else {"claims": {}}
        p = os.path.join(docs_dir, "reproduction", f"{man.key}.sensitivity.json")
        sens_all[man.key] = json.load(open(p)).get("claims", {}) if os.path.exists(p) else {}
    fr = [c["id"] for man in manifests for c in man.claims if c.get("rule") and c["rule"]["fraction"] != 1.0]
    halves = (f"only {', '.join(fr)} use another, for the paper's \"up to\" numbers (0.5: half of the largest "
              "cut it reports)") if fr else "no claim uses another"
    lines = ["# Reproducing the seed papers", "",
             "Generated by `rocesim reproduce` (tools/reproduce.py) from `docs/reproduction/*.json`; do not edit by "
             "hand. Each claim is the one in docs/scenarios.md (its paper's experiment); *quick* and *full* "
             "are our measured numbers at the two scales (`rocesim reproduce PAPER --scale quick|full`).", "",
             "**Seeds and intervals.** A number measured over several seeds (`--seeds N`: every run of the claim's "
             "sweeps with seed 1..N; 5 by default at full scale) is the mean over seeds \u00b1 the half-width of its "
             "95 % confidence interval (Student's t over the per-seed values); a number without \u00b1 is one seed, "
             "or the same in every seed. The seed drives every random stream of a run: the workload's arrivals "
             "and sizes, ECMP hashing, ECN marking and the order of simultaneous events.", "",
             "**Sign convention.** Improvement is positive in both the *Paper* and the *Ours* columns: a "
             "reduction (of FCT, pauses, queue) is given as the percent by which the claimed scheme is below the "
             "baseline, a gain as the percent above it, a ratio as the factor in the claimed scheme's favour "
             "(> 1x is better). A negative number is always worse than the baseline.", "",
             "**The verdict rule (one for every claim).** A claim names the paper's effect against each of its "
             "baselines (`effect` in `reproduce/<paper>.toml`, improvement positive), the paper's size of it "
             "(`size`, per baseline where the paper gives one per baseline) and, where stated, the fraction of "
             "that size that counts (`fraction`; 1 unless the row says otherwise: " + halves + "). Per baseline the effect is measured in every seed and its 95 % interval is Student's t "
             "over the per-seed values (5 seeds at full scale: mean \u00b1 2.776 s / \u221a5). Then: "
             "*agree* when, against every baseline, the whole interval is at or above the paper's size times "
             "the fraction (for a ratio: 1 + fraction \u00d7 (size \u2212 1)), and never below the margin; "
             "*partly* when, against every baseline, the whole interval is at or above a real margin in the "
             "paper's direction: 10 % for a percentage, 1.1x for a ratio; *disagree* otherwise; *inconclusive* "
             "only when an interval straddles one of these boundaries so that its two ends give different "
             "verdicts (the verdicts it lies between are given). One baseline below the level decides: a claim "
             "agrees with none of its baselines left out. Where the paper gives no size (\"lower\", \"better\") "
             "the agree level is the margin itself, so such a claim agrees or disagrees. A claim the paper "
             "states with no baseline to beat (an observation: a flow is cut, a queue exceeds 1 MB, a count is "
             "zero) has one condition (`agree`): agree when it holds over the whole interval, disagree when it "
             "fails, inconclusive when the interval straddles it; it is never *partly*. The *Effect* column "
             "gives, per baseline, the measured effect with its interval [low, high] and the agree level. The "
             "verdict of each seed alone is shown where they differ. The full-scale number decides when there "
             "is one, else the quick one. The verdicts before and after this rule replaced the claims' own "
             "conditions: [reproduction/rule-change.md](reproduction/rule-change.md).", "",
             "**Deviations.** A setting that differs from the paper's is stated in the claim's row (*Deviation*: "
             "what, why, and its effect where measured).", "",
             "**Re-runs.** The *Re-run* command measures that claim alone again (its sweeps "
             "only; complete runs are kept, `--force` re-runs them); every run directory records its seed and "
             "settings in `scenario.resolved.toml`, and `docs/reproduction/<paper>.<scale>.json` each sweep's "
             "grid and settings and each claim's per-seed values. `rocesim reproduce all --rejudge` judges the "
             "stored per-seed values again under the manifests' rules without running anything.", ""]
    commits = sorted({e.get("commit", "unknown") for m in manifests for scale in SCALES
                      for e in res_all[m.key][scale]["claims"].values() if e.get("per_seed")})
    if len(commits) == 1:
        lines += [f"**Commit.** Every claim's numbers below, at both scales and for every paper, were measured at "
                  f"commit {commits[0]}.", ""]
    elif commits:
        lines += [f"**Commits.** The claims' numbers come from {len(commits)} commits; each paper's *Commits* "
                  "line names those of its columns.", ""]
    full_runs = [(m.key, res_all[m.key]["full"].get("last_run")) for m in manifests]
    if all(lr for _, lr in full_runs):
        per = ", ".join(f"{k} {fmt_s(lr['wall_s'])} ({seeds_text(lr)}, {lr['date']})" for k, lr in full_runs)
        five = sum(five_seed_time(lr) for _, lr in full_runs)
        line = (f"**Wall time.** The last full-scale runs of each paper on this machine (2 cores, `-j 2`): {per}. "
                f"With 5 seeds everywhere (`rocesim reproduce all --scale full`) that is about {fmt_s(five)} "
                "(each sweep's time scaled to 5 seeds).")
        known = [lr for _, lr in full_runs if all(sw.get("run_wall_s") for sw in lr.get("sweeps", {}).values())]
        cpu = 2 * five  # both cores busy
        line += (f" Over MPI ranks (`--mpi`, docs/cluster.md) its {fmt_s(cpu)} of single-core time divide among "
                 "the ranks: about " + ", ".join(f"{fmt_s(cpu / r)} on {r}" for r in (16, 64, 256))
                 + " ranks, plus at least the longest run of each sweep"
                 + (f" (the longest timed so far: {fmt_s(longest_run(known))})" if known else "") + ".")
        lines += [line, ""]
    for man in manifests:
        lines.append(f"- [{man.title}](#{anchor(man)}) (seed {man.seed})")
    lines.append("")
    totals = {v: 0 for v in VERDICTS}
    for man in manifests:
        res = res_all[man.key]
        lines += [f"## {man.title}", "", f"Seed `{man.seed}`; scenarios in `scenarios/{man.key}/`; "
                  f"`rocesim reproduce {man.key}`.", ""]
        for scale in SCALES:
            note = man.scale_notes.get(scale)
            lr = res[scale].get("last_run")
            when = (f" Last run: {lr['date']}, commit {lr['commit']}, {seeds_text(lr)}, {lr['wall_s']:.0f} s.") if lr \
                else " Not run yet."
            lines.append(f"- *{scale}*: {note or 'the papers sizes'}.{when}")
        lines += commits_md(res), ""
        lines += ["| # | Claim | Paper | Ours (quick) | Ours (full) | Effect vs each baseline | Verdict "
                  "| Why we differ | Re-run |", "|---|---|---|---|---|---|---|---|---|"]
        counts = {v: 0 for v in VERDICTS}
        for c in man.claims:
            q = res["quick"]["claims"].get(c["id"])
            f = res["full"]["claims"].get(c["id"])
            best, scale = (f, "full") if f and f["verdict"] in VERDICTS else (q, "quick")
            verdict = best["verdict"] if best else "not run"
            if verdict in counts:
                counts[verdict] += 1
            vtext = verdict + (" (quick)" if best and scale == "quick" and verdict in VERDICTS else "")
            if best and verdict == "inconclusive" and best.get("note"):
                vtext += f": {best['note']}"
            sv = best.get("seed_verdicts", []) if best else []
            if len(set(sv)) > 1 or (verdict == "inconclusive" and len(sv) > 1):
                vtext += "; seeds: " + ", ".join(f"{v} {sv.count(v)}" for v in ("agree", "partly", "disagree")
                                                 if v in sv)
            why = c["why"] if verdict in ("partly", "disagree") else ""
            if verdict == "inconclusive":  # the claim's reason holds only where a seed does not agree
                why = "the 95 % intervals straddle the condition" + (f"; {c['why']}" if any(
                    v != "agree" for v in sv) and c["why"] else "")
            if best and best.get("note") and verdict not in VERDICTS:
                why = best["note"]
            rerun = f"`{best['command']}`" if best and best.get("command") else \
                f"`rocesim reproduce {man.key} --scale {scale} --claim {c['id']}`"

            def num(e):
                if not e:
                    return "not run"
                if e["verdict"] not in VERDICTS:
                    return f"n/a ({e['verdict']})"
                n = len(e.get("seeds", [])) or 1
                return e["shown"] + (f" ({n} seeds)" if n > 1 else "")

            claim = c["claim"] + (f" *Deviation:* {c['deviation']}." if c.get("deviation") else "")
            eff = rule_text(c.get("rule"), {b: tuple(v) for b, v in best.get("effects", {}).items()}
                            if best and verdict in VERDICTS else None, c["agree"])
            lines.append(f"| {c['id']} | {md_cell(claim)} | {md_cell(c['paper'])} | {md_cell(num(q))} | "
                         f"{md_cell(num(f))} | {md_cell(eff)} | {md_cell(vtext)} | {md_cell(why)} | {md_cell(rerun)} |")
        for v, n in counts.items():
            totals[v] += n
        lines += ["", "Verdicts: " + ", ".join(f"{v} {n}" for v, n in counts.items()) + ".", ""]
        lines += sensitivity_md(man, res, sens_all[man.key])
    lines += ["## All papers", "", "Verdicts: " + ", ".join(f"{v} {n}" for v, n in totals.items()) + ".", ""]
    write_atomic(os.path.join(docs_dir, "REPRODUCTION.md"), "\n".join(lines))


def commits_md(res):
    """The commits the stored quick and full numbers were measured at, and whether the two columns differ."""
    at, when = {}, {}
    for scale in SCALES:
        es = [e for e in res[scale]["claims"].values() if e.get("per_seed")]
        at[scale] = sorted({e.get("commit", "unknown") for e in es})
        for e in es:
            when.setdefault(e.get("commit", "unknown"), set()).add(e.get("date", "?"))
    said = "; ".join(f"{scale} column measured at commit{'s' if len(cs) > 1 else ''} "
                     + ", ".join(f"{c} ({', '.join(sorted(when[c]))})" for c in cs)
                     for scale, cs in at.items() if cs)
    if not said:
        return "No stored numbers yet."
    same = at["quick"] == at["full"] and len(at["full"]) == 1
    dirty = any(c.endswith("+changes") for cs in at.values() for c in cs)
    return (f"Commits: {said}" + (" (the same)." if same else
                                  ": the two columns were not measured at the same commit, so a difference between "
                                  "them may come from the code as well as from the scale.")
            + (" +changes: the working tree had uncommitted changes when measured." if dirty else ""))


def sensitivity_md(man, res, sens):
    """The sensitivity tables of a paper's claims, and the claims we do not agree with that have none yet."""
    out = []
    pending = []
    for c in man.claims:
        f = res["full"]["claims"].get(c["id"]) or res["quick"]["claims"].get(c["id"])
        s = sens.get(c["id"])
        if not s:
            if f and f["verdict"] not in ("agree", "not run"):
                pending.append(c["id"])
            continue
        degen = next((t["degenerate"] for t in man.sensitivity if t["claim"] == c["id"]), {})
        old_rule = any(not r.get("per_seed") for r in s["rows"])
        out += [f"**{c['id']}: sensitivity** ({s['scale']} scale, {s['seeds']} seeds each; `{s['command']}`; "
                f"{s['date']}, commit {s['commit']})" + (
                    "; verdicts as judged when run, under the claim's former conditions (these rows stored no "
                    "per-seed values to judge again)" if old_rule else ""), "",
                "| Setting | Ours | Verdict |", "|---|---|---|"]
        for r in s["rows"]:
            shown = r["shown"] if r["verdict"] in VERDICTS else f"n/a ({r['verdict']}: {r.get('note', '')})"
            v = r["verdict"] + (f": {r['note']}" if r["verdict"] == "inconclusive" and r.get("note") else "")
            if r["set"] in degen:
                v = f"degenerate, not evidence: {degen[r['set']]}"
            out.append(f"| {md_cell(r['set'] or 'as in the scenario')} | {md_cell(shown)} | {md_cell(v)} |")
        reach = [r["set"] for r in s["rows"] if r["set"] and r["verdict"] == "agree" and r["set"] not in degen]
        out += ["", "Settings that reach *agree*: " + (", ".join(f"`{x}`" for x in reach) if reach else "none") + ".",
                ""]
    if pending:
        out += [f"No sensitivity sweep yet for: {', '.join(pending)}.", ""]
    if out:
        out = [f"### {man.title.split(':')[0]}: sensitivity of the claims we do not fully agree with", ""] + out
    return out


def anchor(man):
    return "".join(ch for ch in man.title.lower().replace(" ", "-") if ch.isalnum() or ch == "-")


CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1200px;
       color: #222; padding: 0 1em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ddd; } table { border-collapse: collapse; font-size: 0.86em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; vertical-align: top; } th { background: #f3f5f8; text-align: left; }
td.agree { background: #e7f5e9; } td.partly { background: #fff6dc; } td.disagree { background: #fbe5e5; }
td.inconclusive { background: #eceff4; }
figure { margin: 1.2em 0 2em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #444; font-size: 0.9em; max-width: 60em; } .meta { color: #555; font-size: 0.92em; }
"""


def write_html(out_dir, sections, scale):
    e = html.escape
    body = [f"<h1>rocesim: reproducing the seed papers ({e(scale)} scale)</h1>",
            f"<p class=\"meta\">Generated {e(datetime.datetime.now().strftime('%Y-%m-%d %H:%M'))} by "
            f"tools/reproduce.py, commit {e(git_commit())}.</p><nav>"]
    body += [f"<a href=\"#{anchor(s['man'])}\">{e(s['man'].title)}</a> " for s in sections]
    body.append("</nav>")
    for s in sections:
        man = s["man"]
        body.append(f"<h2 id=\"{anchor(man)}\">{e(man.title)}</h2>")
        body.append(f"<p class=\"meta\">Seed {e(man.seed)}; scenarios/{e(man.key)}/; {e(scale)} scale: "
                    f"{e(man.scale_notes.get(scale) or 'the papers sizes')}. Runs: {s['wall_s']:.0f} s wall.</p>")
        rows = ["<tr><th>#</th><th>Claim</th><th>Paper</th><th>Ours</th><th>Effect vs each baseline</th>"
                "<th>Verdict</th><th>Why we differ</th></tr>"]
        for c in man.claims:
            r = s["claims"].get(c["id"], {})
            v = r.get("verdict", "not run")
            shown = r.get("shown") if v in VERDICTS else r.get("note", "")
            why = c["why"] if v in ("partly", "disagree") else (r.get("note", "") if v == "inconclusive" else "")
            claim = c["claim"] + (f" Deviation: {c['deviation']}." if c.get("deviation") else "")
            eff = rule_text(c.get("rule"), {b: tuple(x) for b, x in r.get("effects", {}).items()}, c["agree"])
            rows.append(f"<tr><td>{e(c['id'])}</td><td>{e(claim)}</td><td>{e(c['paper'])}</td>"
                        f"<td>{e(shown or '')}</td><td>{e(eff)}</td><td class=\"{e(v)}\">{e(v)}</td>"
                        f"<td>{e(why)}</td></tr>")
        body.append("<table>" + "\n".join(rows) + "</table>")
        for fig_path, caption in s["figures"]:
            with open(fig_path, "rb") as f:
                data = base64.b64encode(f.read()).decode()
            body.append(f"<figure><img src=\"data:image/png;base64,{data}\" alt=\"{e(caption)}\">"
                        f"<figcaption>{e(caption)}</figcaption></figure>")
        for err in s["figure_errors"]:
            body.append(f"<p class=\"meta\">figure skipped: {e(err)}</p>")
    page = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rocesim reproduce</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    out = os.path.join(out_dir, "report.html")
    write_atomic(out, page)
    return out


# ----------------------------------------------------------------------------------------------------------


def run_sensitivity_all(a, chosen, only_claims):
    """`--sensitivity`: for each [[sensitivity]] of the chosen papers (or of the claims in `only_claims`), run the
    claim's sweeps once as the manifest has them ("as in the scenario") and once per alternative of `vary`
    (its settings added with --set), each over the entry's seeds at its scale, and measure the claim each time.
    Results: OUT/<paper>/sensitivity/<scale>-<N>-seeds/<setting>/<sweep>/ (shared by claims that vary the same
    setting), DOCS/reproduction/<paper>.sensitivity.json,
    and the tables in REPRODUCTION.md."""
    out = os.path.abspath(a.out or os.path.join("runs", "reproduce-sensitivity"))
    status = 0
    for man in chosen:
        todo = [t for t in man.sensitivity if not only_claims or t["claim"] in only_claims]
        if not todo:
            continue
        path = os.path.join(a.docs, "reproduction", f"{man.key}.sensitivity.json")
        try:
            stored = json.load(open(path)).get("claims", {}) if os.path.exists(path) else {}
        except (OSError, ValueError):
            stored = {}
        claim = {c["id"]: c for c in man.claims}
        for t in todo:
            c = claim[t["claim"]]
            if not a.quiet:
                print(f"{man.key} {c['id']}: {len(t['vary']) + 1} settings x {t['seeds']} seeds at "
                      f"{t['scale']} scale", flush=True)
            rows = []
            t0 = time.time()
            for alt in [""] + t["vary"]:
                # Shared by the claims that vary the same setting of the same sweeps (their runs are reused).
                d = os.path.join(out, man.key, "sensitivity", f"{t['scale']}-{t['seeds']}-seeds",
                                 safe_dir_name(alt or "as-in-the-scenario"))
                ran = {}
                for sw in man.sweeps:
                    if sw["name"] not in c["sweeps"]:
                        continue
                    swx = dict(sw)
                    swx[t["scale"]] = dict(sw[t["scale"]], set=sw[t["scale"]]["set"] + a.set + alt.split())
                    ran[sw["name"]] = run_sweep(a.rocesim, a.scenarios, os.path.join(d, sw["name"]), swx,
                                                t["scale"], a.jobs, a.force, True, a.mpi, t["seeds"])
                    if not ran[sw["name"]]["ok"]:
                        status = 1
                ev = evaluate(man, d, ran, t["scale"], {c["id"]}, t["seeds"])[c["id"]]
                rows.append({k: ev[k] for k in ("shown", "verdict", "values", "ci", "seeds", "seed_verdicts", "note",
                                                 "per_seed")})
                rows[-1]["set"] = alt
                if not a.quiet:
                    print(f"  {alt or '(as in the scenario)':40} {ev['verdict']:12} {ev['shown'] or ev['note']}",
                          flush=True)
            stored[c["id"]] = {"scale": t["scale"], "seeds": t["seeds"], "rows": rows, "commit": git_commit(),
                               "date": datetime.date.today().isoformat(), "wall_s": time.time() - t0,
                               "command": f"rocesim reproduce {man.key} --sensitivity --claim {c['id']}"}
            write_atomic(path, json.dumps({"paper": man.key, "claims": stored}, indent=1, sort_keys=True) + "\n")
    return status


def main(argv=None):
    ap = argparse.ArgumentParser(description="Reproduce the seed papers' experiments and claims")
    ap.add_argument("papers", nargs="*", help="paper key(s) (see --list) or 'all'")
    ap.add_argument("--scale", choices=SCALES, default="quick")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("-o", "--out", help="output directory (default runs/reproduce-SCALE)")
    ap.add_argument("--docs", default=os.path.join(REPO, "docs"), help="where REPRODUCTION.md and reproduction/ go")
    ap.add_argument("--rocesim", default=os.path.join(REPO, "build", "rocesim"))
    ap.add_argument("--scenarios", default=os.path.join(REPO, "scenarios"), help="where sweep scenarios are looked up")
    ap.add_argument("--manifests", default=os.path.join(REPO, "reproduce"), help="the papers' manifests (*.toml)")
    ap.add_argument("--only", choices=["test"], help="test: only each paper's test sweep")
    ap.add_argument("--mpi", metavar="LAUNCHER", help="run each sweep as LAUNCHER rocesim sweep ... --mpi, e.g. 'mpirun -np 64'")
    ap.add_argument("--set", action="append", default=[], help="extra --set for every sweep (e.g. duration_ms=1)")
    ap.add_argument("--seeds", type=int, help="run every sweep over seeds 1..N (default: 5 at full scale, 1 at quick); "
                    "each claim is the mean over seeds with its 95 %% confidence interval")
    ap.add_argument("--claim", action="append", default=[], metavar="ID",
                    help="only the sweeps this claim reads, and only this claim (repeatable)")
    ap.add_argument("--sensitivity", action="store_true",
                    help="run the [[sensitivity]] sweeps of the papers' claims (only those), at their own scale")
    ap.add_argument("--no-run", action="store_true", help="evaluate and report existing results only")
    ap.add_argument("--rejudge", action="store_true",
                    help="judge the stored per-seed values in DOCS/reproduction again under the manifests' rules "
                    "(no runs, no run directories) and rewrite REPRODUCTION.md")
    ap.add_argument("--force", action="store_true", help="re-run complete runs")
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("--list", action="store_true", help="list the papers and their sweeps and claims")
    a = ap.parse_args(argv)
    if a.jobs < 1:
        ap.error("-j must be >= 1")
    if a.seeds is not None and not 1 <= a.seeds <= 100:
        ap.error("--seeds must be 1 to 100")
    seeds = a.seeds or (5 if a.scale == "full" else 1)
    try:
        manifests = load_manifests(a.manifests)
    except ManifestError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    keys = [m.key for m in manifests]
    if a.list:
        for m in manifests:
            print(f"{m.key:8} {m.title} (seed {m.seed}): {len(m.sweeps)} sweeps, {len(m.claims)} claims")
        return 0
    if not a.papers:
        print("error: name a paper (or all); have: " + ", ".join(keys), file=sys.stderr)
        return 2
    want = keys if "all" in a.papers else a.papers
    bad = [p for p in want if p not in keys]
    if bad:
        print(f"error: unknown paper(s) {', '.join(bad)}; have: {', '.join(keys)} or all", file=sys.stderr)
        return 2
    if a.rejudge:
        try:
            judged = rejudge(a.docs, [m for m in manifests if m.key in want])
            for paper, scale, cid, before, after, note in judged:
                if not a.quiet:
                    print(f"{paper:8} {scale:5} {cid:4} {before:12} -> {after}" + (f" ({note})" if note else ""))
        except ManifestError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        write_reproduction_md(a.docs, manifests)
        return 0
    only_claims = set(a.claim) or None
    if only_claims:
        have = {c["id"] for m in manifests if m.key in want for c in m.claims}
        unknown = sorted(only_claims - have)
        if unknown:
            print(f"error: unknown claim(s) {', '.join(unknown)} in {', '.join(want)}; have: "
                  f"{', '.join(sorted(have))}", file=sys.stderr)
            return 2
        if a.only:
            print("error: --claim and --only cannot be combined", file=sys.stderr)
            return 2
    out = os.path.abspath(a.out or os.path.join("runs", f"reproduce-{a.scale}"))
    os.makedirs(out, exist_ok=True)
    python = sys.executable or "/usr/bin/python3"
    sections = []
    status = 0
    t_all = time.time()
    try:
        if a.sensitivity:
            status = run_sensitivity_all(a, [m for m in manifests if m.key in want], only_claims)
        for man in [m for m in manifests if m.key in want and not a.sensitivity]:
            if not a.quiet:
                print(f"{man.title} (seed {man.seed}), {a.scale} scale", flush=True)
            paper_dir = os.path.join(out, man.key)
            ran = {}
            t0 = time.time()
            needed = None if not only_claims else {s for c in man.claims if c["id"] in only_claims for s in c["sweeps"]}
            if needed is not None and not needed:
                continue
            for sw in man.sweeps:
                if a.only == "test" and not sw["test"]:
                    continue
                if needed is not None and sw["name"] not in needed:
                    continue
                if sw[a.scale].get("skip"):
                    continue
                d = os.path.join(paper_dir, sw["name"])
                if a.no_run:
                    if os.path.exists(os.path.join(d, "sweep.json")):
                        ran[sw["name"]] = {"ok": True, "wall_s": 0.0}
                    continue
                swx = dict(sw)
                swx[a.scale] = dict(sw[a.scale], set=sw[a.scale]["set"] + a.set)
                ran[sw["name"]] = run_sweep(a.rocesim, a.scenarios, d, swx, a.scale, a.jobs, a.force, a.quiet, a.mpi,
                                            seeds)
                if not ran[sw["name"]]["ok"]:
                    status = 1
            wall = time.time() - t0
            claims = evaluate(man, paper_dir, ran, a.scale, only_claims, seeds)
            figs, fig_errors = [], []
            figdir = os.path.join(paper_dir, "figures")
            os.makedirs(figdir, exist_ok=True)
            for fig in man.figures:
                if fig["sweep"] not in ran or not ran[fig["sweep"]]["ok"]:
                    continue
                try:
                    p = make_figure(fig, os.path.join(paper_dir, fig["sweep"]), figdir, python)
                    if p:
                        one = fig["kind"] == "timeseries" and seeds > 1 and sweep_seeds(
                            next(x for x in man.sweeps if x["name"] == fig["sweep"]), a.scale, seeds) > 1
                        figs.append((p, fig["caption"] + (f" Seed 1 of {seeds}; the claims above give their 95 % "
                                                          "intervals over every seed." if one else "")))
                    else:
                        fig_errors.append(f"{fig['name']}: no data")
                except (MetricError, OSError, KeyError, ValueError, IndexError) as e:
                    fig_errors.append(f"{fig['name']}: {e}")
            meta = {"commit": git_commit(), "date": datetime.date.today().isoformat(), "wall_s": wall,
                    "sweeps": {k: {kk: v[kk] for kk in ("ok", "wall_s", "grid", "sets", "runs", "run_wall_s")
                                   if kk in v} for k, v in ran.items()},
                    "only": a.only or "", "extra_sets": a.set, "no_run": a.no_run, "seeds": seeds,
                    "claims_only": sorted(only_claims or [])}
            write_atomic(os.path.join(paper_dir, "claims.json"),
                         json.dumps({"paper": man.key, "scale": a.scale, "claims": claims, "meta": meta}, indent=1)
                         + "\n")
            store_results(a.docs, man, a.scale, claims, meta)
            sections.append({"man": man, "claims": claims, "figures": figs, "figure_errors": fig_errors,
                             "wall_s": wall})
            if not a.quiet:
                for c in man.claims:
                    if c["id"] not in claims:  # not among --claim
                        continue
                    r = claims[c["id"]]
                    shown = r["shown"] if r["verdict"] in VERDICTS else r["note"]
                    print(f"  {c['id']:4} {r['verdict']:9} {shown}", flush=True)
    except KeyboardInterrupt:
        print("interrupted: complete runs are kept; run the same command again to resume", file=sys.stderr)
        return 130
    except ManifestError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    write_reproduction_md(a.docs, manifests)
    if a.sensitivity:
        if not a.quiet:
            print(os.path.join(a.docs, "REPRODUCTION.md"))
        return status
    page = write_html(out, sections, a.scale)
    if not a.quiet:
        print(f"{len(sections)} paper(s) in {time.time() - t_all:.0f} s; report:")
        print(os.path.join(a.docs, "REPRODUCTION.md"))
    print(page)
    return status


if __name__ == "__main__":
    sys.exit(main())
