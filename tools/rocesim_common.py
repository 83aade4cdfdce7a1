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



# Two-sided 95 % quantiles of Student's t distribution, t(0.975, df), df = 1..30 (standard tables); beyond 30
# the normal quantile's 1.96 is within 2 % of t.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
         2.042)


def mean_ci95(values):
    """(mean, half-width) of the 95 % confidence interval of the mean of `values` (one per seed), with
    Student's t: half = t(0.975, n - 1) x s / sqrt(n), s the sample standard deviation. One value: half 0
    (no interval can be given; callers say how many seeds there were). NaN values are not allowed."""
    v = [float(x) for x in values]
    if not v:
        raise MetricError("no values to average")
    n = len(v)
    m = sum(v) / n
    if n == 1:
        return m, 0.0
    s = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    t = _T975[n - 2] if n - 1 <= len(_T975) else 1.96
    return m, t * s / math.sqrt(n)
