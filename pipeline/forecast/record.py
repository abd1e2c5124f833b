"""The observed record: the largest training run published by each date, and when it first
reached a threshold.

The record M(t) is the running maximum of the frontier runs a fit could see
(`observed.fit_frontier`: every frontier run published up to the window's end, those before the
window's start too). A threshold T ≤ M(data_as_of) has been reached, as a fact: its year is the
date of the first run at or above it, t* = min{t_k : C_k ≥ T}, whatever a trajectory says
(docs/sources.md §5). On moving hardware the threshold T(t) moves too (`moving`: ln T
interpolated linearly between the projected years, T(y_0) before the first): it was reached at
the first t ≤ data_as_of with M(t) ≥ T(t) (`ObservedRecord.moving_year_reached`). No I/O.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def _log_threshold(flop: float | None) -> float:
    """ln T, or +inf where T is no positive finite number (a threshold nothing reaches)."""
    if flop is None or not math.isfinite(flop) or flop <= 0.0:
        return math.inf
    return math.log(flop)


@dataclass(frozen=True, slots=True)
class ObservedRecord:
    """The records of the observed runs: each run larger than every run published before it."""

    years: tuple[float, ...]
    """Fractional publication years of the records, ascending."""
    flop: tuple[float, ...]
    """Their training compute (FLOP), strictly ascending."""
    as_of_year: float
    """The fractional year of `data_as_of`, the newest publication the fit could see."""

    @classmethod
    def of_runs(
        cls, years: Sequence[float], flop: Sequence[float], as_of_year: float
    ) -> ObservedRecord:
        """The records of runs published in `years` with compute `flop` (any order)."""
        kept_years: list[float] = []
        kept_flop: list[float] = []
        for year, c in sorted(zip(years, flop, strict=True)):
            if year <= as_of_year and (not kept_flop or c > kept_flop[-1]):
                kept_years.append(year)
                kept_flop.append(c)
        return cls(tuple(kept_years), tuple(kept_flop), as_of_year)

    def flop_by(self, year: float) -> float:
        """M(t), the largest run published by `year` (FLOP); 0 before the first."""
        i = bisect.bisect_right(self.years, year)
        return self.flop[i - 1] if i else 0.0

    def year_reached(self, flop: float | None) -> float | None:
        """t* = min{t_k : C_k ≥ T}: the fractional year the first run at or above `flop` was
        published; None when no run reached it (or it is no positive finite number)."""
        log_t = _log_threshold(flop)
        if not math.isfinite(log_t) or not self.flop or flop is None or flop > self.flop[-1]:
            return None
        return self.years[bisect.bisect_left(self.flop, flop)]

    def years_given(self, flops: np.ndarray, line_years: np.ndarray) -> np.ndarray:
        """Each line's year of its own threshold (`flops`, one a line; NaN: none) knowing the
        record: the date the first run reached it (`year_reached`) where the runs did, the
        line's year (`line_years`) elsewhere. What the `uncertainty` budget draws a limit's
        years from, as the `forecasts` rows date a reached threshold (docs/sources.md §5)."""
        out = np.array(line_years, dtype=np.float64)
        for i, flop in enumerate(flops.tolist()):
            year = self.year_reached(flop if math.isfinite(flop) else None)
            if year is not None:
                out[i] = year
        return out

    def moving_year_reached(
        self, grid_years: Sequence[float], thresholds_flop: Sequence[float | None]
    ) -> float | None:
        """The first t ≤ `as_of_year` with M(t) ≥ T(t), T(t) the moving threshold on the grid
        (`moving.moving_year`'s interpolation); None when the runs never met it.

        M is a step function and ln T linear between grid years, so the crossing is at a record
        date or grid year, or inside an interval where T falls (found by interpolation). An
        interval next to a grid year without a threshold has none (+inf) inside it."""
        if not self.years or not grid_years:
            return None
        logs = [_log_threshold(t) for t in thresholds_flop]

        def log_t(year: float) -> float:
            if year <= grid_years[0]:
                return logs[0]
            if year >= grid_years[-1]:
                return logs[-1]
            i = bisect.bisect_right(grid_years, year)
            y0, y1, t0, t1 = grid_years[i - 1], grid_years[i], logs[i - 1], logs[i]
            if year == y0:
                return t0
            if math.isinf(t0) or math.isinf(t1):
                return math.inf
            return t0 + (t1 - t0) * (year - y0) / (y1 - y0)

        inside = (y for y in grid_years if self.years[0] < y < self.as_of_year)
        points = sorted({*self.years, *inside, self.as_of_year})
        for start, end in itertools.pairwise([*points, math.nan]):
            m = math.log(self.flop_by(start))
            t_start = log_t(start)
            if m >= t_start:
                return start
            if math.isnan(end):
                return None
            t_end = log_t(end)
            if math.isfinite(t_start) and t_end <= m:  # T falls to M inside (start, end]
                return start + (end - start) * (t_start - m) / (t_start - t_end)
        return None
