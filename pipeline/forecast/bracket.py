"""Moving-frontier years of many lines, each on its own hardware, from few evaluated years.

The run's moving frontier evaluates a series on every grid year y_0 < ... < y_m
(`pipeline.forecast.frontier`); its year is `moving.moving_year`: the first grid index i with
gap f_i = ln C(y_i) − ln T(y_i) ≥ 0, interpolated from (y_{i−1}, y_i). That year depends on
T at y_{i−1} and y_i only. An uncertainty design point has its own hardware and trend rates,
so its thresholds T_p(y) are its own series on each year's projected hardware; evaluating all
m + 1 years for every point would cost (m + 1) series per point.

`bracketed_moving_years` finds i by probing: from a start index (the point's frozen-hardware
year: T grows with better hardware, so the moving year is at or after it), down while the
probed gap is ≥ 0, up while it is < 0, until it holds an index i with f_i ≥ 0 and f_{i−1} < 0
(or i = 0, or no index with f ≥ 0 up to y_m: not reached). With f increasing in i this i is the
first, and the answer equals `moving_year` on the whole grid (tested against it). f increases
when the threshold grows more slowly than the trajectory between grid years: the catalog's
trends move thresholds by well under 2x a year, the trajectories by 4-5x (docs/trends.md §4).
A probe sequence costs 2-3 evaluations per point instead of m + 1. Pure; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from pipeline.forecast.moving import moving_year

Probe = tuple[int, int]
"""(point, grid index)."""
Evaluate = Callable[[Sequence[Probe]], Mapping[Probe, Mapping[str, float | None]]]
"""Evaluates the probes: each point's thresholds (FLOP per limit, None: not reached) on its
hardware projected to the grid year at the index."""


def _gap(
    log_line: tuple[float, float], reference_year: float, year: float, t: float | None
) -> float:
    """f = ln C(year) − ln T on the line; −inf without a positive finite threshold."""
    if t is None or not math.isfinite(t) or t <= 0.0:
        return -math.inf
    a, b = log_line
    return a + (year - reference_year) * b - math.log(t)


def _next_probe(gaps: Mapping[int, float], start: int, n_years: int) -> int | None:
    """The index to evaluate next for one point and limit, None when it is settled."""
    if not gaps:
        return start
    reached = [i for i, g in gaps.items() if g >= 0.0]
    if reached:
        k = min(reached)
        return None if k == 0 or (k - 1) in gaps else k - 1
    top = max(gaps)
    return None if top + 1 >= n_years else top + 1


def bracketed_moving_years(
    years: Sequence[float],
    starts: Mapping[str, Sequence[int]],
    lines: Sequence[tuple[float, float]],
    reference_year: float,
    limits: Sequence[str],
    evaluate: Evaluate,
) -> dict[str, np.ndarray]:
    """Per limit, each point's moving year (NaN: not reached by the last grid year).

    Point p follows the line `lines[p]` = (ln C at `reference_year`, ln growth per year) and is
    probed first, for limit L, at grid index `starts[L][p]`; `evaluate` is called once per
    round with every probe the round needs (each (point, index) at most once in all).
    """
    n = len(years)
    seen: dict[Probe, Mapping[str, float | None]] = {}
    gaps: dict[tuple[int, str], dict[int, float]] = {
        (p, lim): {} for p in range(len(lines)) for lim in limits
    }
    while True:
        wanted = {
            (p, i)
            for (p, lim), g in gaps.items()
            if (i := _next_probe(g, min(max(starts[lim][p], 0), n - 1), n)) is not None
        }
        if not wanted:
            break
        todo = sorted(w for w in wanted if w not in seen)
        if todo:
            seen.update(evaluate(todo))
        for (p, lim), g in gaps.items():
            for (q, i), thresholds in seen.items():
                if q == p and i not in g:
                    g[i] = _gap(lines[p], reference_year, years[i], thresholds[lim])
    out = {}
    for lim in limits:
        found = np.full(len(lines), math.nan)
        for p in range(len(lines)):
            g = gaps[(p, lim)]
            reached = [i for i, v in g.items() if v >= 0.0]
            if not reached:
                continue
            k = min(reached)
            idx = [k] if k == 0 else [k - 1, k]
            a, b = lines[p]
            year = moving_year(
                [years[i] for i in idx],
                [seen[(p, i)][lim] for i in idx],
                math.exp(a),
                reference_year,
                math.exp(b),
            )
            found[p] = math.nan if year is None else year
        out[lim] = found
    return out
