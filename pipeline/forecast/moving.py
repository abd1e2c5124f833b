"""The moving frontier: the year a growing compute trajectory meets a threshold that moves too.

On frozen hardware a threshold T is a number and the trajectory C(y) = C_0 · g^(y − y_0) meets it
once (`trajectory.year_reaching_flop`). On improving hardware each year y has its own threshold
T(y), known at grid years y_0 < y_1 < ... (the series evaluated on each year's projected
hardware). Between grid years ln T is interpolated linearly, so f(y) = ln C(y) − ln T(y) is
linear on each interval and the crossing is exact for that interpolation. `moving_years` does
the same for many lines at once (numpy). No I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pipeline.forecast.trajectory import year_reaching_flop


def _gap(
    year: float, threshold: float | None, base_flop: float, base_year: float, g: float
) -> float:
    """f(y) = ln C(y) − ln T(y); −inf when the year's threshold is not reached on its grid."""
    if threshold is None or not math.isfinite(threshold) or threshold <= 0.0:
        return -math.inf
    return math.log(base_flop) + (year - base_year) * math.log(g) - math.log(threshold)


def moving_year(
    years: Sequence[float],
    thresholds_flop: Sequence[float | None],
    base_flop: float,
    base_year: float,
    growth_per_year: float,
) -> float | None:
    """The first fractional year with C(y) ≥ T(y), T(y) from the grid (`years` ascending).

    A None threshold (the series never reaches it on its model-size grid) is never met that
    year. If the first grid year already has C ≥ T, the answer is the frozen-hardware year on
    that year's hardware (at or before it). None when no grid year has C ≥ T.
    """
    if len(years) != len(thresholds_flop):
        raise ValueError("years and thresholds must have one length")
    gaps = [
        _gap(y, t, base_flop, base_year, growth_per_year)
        for y, t in zip(years, thresholds_flop, strict=True)
    ]
    for i, gap in enumerate(gaps):
        if gap < 0.0:
            continue
        reached = year_reaching_flop(thresholds_flop[i], base_flop, base_year, growth_per_year)
        if i == 0 or reached is None:
            return reached
        before = gaps[i - 1]
        if before == -math.inf:  # unknown before: no earlier than the previous grid year
            return max(years[i - 1], reached)
        return years[i - 1] + (years[i] - years[i - 1]) * (-before) / (gap - before)
    return None


def moving_years(
    years: Sequence[float],
    thresholds_flop: Sequence[float | None],
    log_base_flop: np.ndarray,
    base_year: float,
    log_growth_per_year: np.ndarray,
) -> np.ndarray:
    """`moving_year` for many lines at once: line i is ln C_i(y) = log_base_flop[i] +
    (y − base_year) · log_growth_per_year[i]; +inf where `moving_year` gives None.

    The same rules, element by element (a test compares the two on random lines)."""
    y = np.asarray(years, dtype=np.float64)
    t = np.array(
        [math.log(v) if v is not None and math.isfinite(v) and v > 0.0 else math.nan
         for v in thresholds_flop]
    )  # fmt: skip
    a, b = log_base_flop[:, None], log_growth_per_year[:, None]
    with np.errstate(invalid="ignore"):
        gaps = np.where(np.isnan(t), -np.inf, a + (y - base_year) * b - t)  # lines x years
        reached = base_year + (t - a) / b  # the frozen-hardware year on each grid year's T
    met = gaps >= 0.0
    first = np.argmax(met, axis=1)
    rows = np.arange(len(a))
    out = np.full(len(a), np.inf)
    hit = met[rows, first]
    k = first[hit]
    r = rows[hit]
    at_k = reached[r, k]
    before = np.where(k > 0, gaps[r, np.maximum(k - 1, 0)], 0.0)
    prev_year = y[np.maximum(k - 1, 0)]
    with np.errstate(invalid="ignore", divide="ignore"):
        between = prev_year + (y[k] - prev_year) * (-before) / (gaps[r, k] - before)
    out[r] = np.where(
        k == 0, at_k, np.where(np.isneginf(before), np.maximum(prev_year, at_k), between)
    )
    return out
