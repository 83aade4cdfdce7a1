"""Helpers shared by the tools (reproduce.py, rocesim_plots.py, report.py, paper_figures.py): the rocesim
package of this checkout (python/rocesim: the readers of every result file and the one percentile rule, nearest
rank as summary.json computes it), reading numbers, and the arithmetic of claims (ratio, reduction, Jain's
index, confidence intervals).

Tested by tests/tools/tools_test.py (class Common).
"""

import math
import os
import sys

# The package from this checkout, whether or not it is installed (pip install -e python/).
PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)
import rocesim  # noqa: E402
from rocesim import nearest_rank  # noqa: E402  (the tools' one percentile rule)

__all__ = ["rocesim", "nearest_rank", "MetricError", "to_float", "ratio", "reduction", "jain", "mean_ci95"]


class MetricError(Exception):
    """A value that cannot be measured: a missing file or run, no matching flows, a zero denominator."""


def to_float(v, default=math.nan):
    """float(v), or `default` (NaN) when v is not a number ('', None, 'n/a')."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


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
