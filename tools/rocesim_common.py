"""Helpers shared by the tools (reproduce.py, rocesim_plots.py, report.py): reading numbers and CSV files of
result directories, nearest-rank percentiles as summary.json computes them, and the arithmetic of claims
(ratio, reduction, Jain's index). Standard library only, so that reproduce.py's claims need no numpy.

Tested by tests/tools/tools_test.py (class Common).
"""

import csv
import math
import os
from fractions import Fraction


class MetricError(Exception):
    """A value that cannot be measured: a missing file or run, no matching flows, a zero denominator."""


def to_float(v, default=math.nan):
    """float(v), or `default` (NaN) when v is not a number ('', None, 'n/a')."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def read_csv(path):
    """Rows of a CSV file as dicts (empty list when absent)."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def nearest_rank(values, q):
    """The q-quantile (0 < q <= 1) by nearest rank, as summary.json computes it: the value of rank
    ceil(q x n) among the n sorted values, the rank in exact arithmetic (q = 0.3 of 10 values is rank 3,
    where 0.3 * 10 in floating point is 3.0000000000000004). NaN when there are no values."""
    v = values.copy() if hasattr(values, "dtype") else list(values)  # a numpy array sorts as one
    v.sort()
    if len(v) == 0:
        return math.nan
    exact_q = q if isinstance(q, Fraction) else Fraction(repr(float(q)))
    rank = max(1, min(len(v), math.ceil(exact_q * len(v))))
    return float(v[rank - 1])


def ratio(a, b):
    """a / b; MetricError when b is zero (NaN in gives NaN out)."""
    if b == 0:
        raise MetricError("ratio with a zero denominator")
    return a / b


def reduction(a, b):
    """Percent by which a is below b (positive: a smaller). MetricError when b is zero; NaN in either gives
    NaN (a claim's condition on it is then false)."""
    if b == 0:
        raise MetricError("reduction relative to zero")
    return 100.0 * (1.0 - a / b)


def jain(rates):
    """Jain's fairness index of a list of rates (1 = equal shares)."""
    rates = list(rates)
    sq = sum(r * r for r in rates)
    if not rates or sq == 0:
        raise MetricError("Jain's index of zero rates")
    return sum(rates) ** 2 / (len(rates) * sq)

