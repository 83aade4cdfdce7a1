"""The one percentile rule of rocesim: nearest rank, as the simulator computes summary.json's percentiles
(src/stats/fct_stats.cc, nearest_rank: v[ceil(num / den x n) - 1] of the n sorted values, the rank in integer
arithmetic). Every tool and scenario script takes its percentiles from here."""

import math
from fractions import Fraction

import numpy as np


def nearest_rank(values, q):
    """The q-quantile (0 < q <= 1) of `values` by nearest rank: the value of rank ceil(q x n) among the n
    sorted values, clamped to [1, n], as summary.json computes it. The rank is computed in exact arithmetic:
    q = 0.3 of 10 values is rank 3, where 0.3 * 10 in floating point is 3.0000000000000004 (q is taken as the
    decimal it prints as, or give a Fraction such as Fraction(999, 1000)). `values`: a list, a numpy array or a
    pandas Series, in any order; NaN values (such as the empty slowdown of a flow without an ideal FCT) are
    left out, as the simulator has no such value. NaN when no value is left."""
    if hasattr(values, "__array__"):  # a numpy array, a pandas Series
        a = np.asarray(values)
        if a.dtype.kind == "f":
            a = a[~np.isnan(a)]
        v = np.sort(a)
    else:  # a list, a tuple, any iterable
        v = sorted(x for x in values if x == x)
    n = len(v)
    if n == 0:
        return math.nan
    exact_q = q if isinstance(q, Fraction) else Fraction(repr(float(q)))
    rank = max(1, min(n, math.ceil(exact_q * n)))
    return float(v[rank - 1])


def cdf_quantile(values, cdf, q):
    """The q-quantile of a distribution given as an empirical CDF, such as a switch's rows of buffer.csv (each
    value with the fraction of samples <= it, increasing): the smallest value whose CDF reaches q, which is the
    nearest-rank value of the samples the CDF was made from (to the CDF's printed precision). The last value
    when none reaches q; NaN for an empty CDF."""
    values, cdf = list(values), list(cdf)
    for v, c in zip(values, cdf):
        if c >= q:
            return float(v)
    return float(values[-1]) if values else math.nan
