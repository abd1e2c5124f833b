"""Compute trajectories as sets of lines, and the year each reaches a threshold, with an interval.

A trajectory is ln C(y) = a_i + b_i · (y − y_ref) − D_i for lines i = 1..n: one line for a
hand-set scenario (C_0 in y_0, growth g: a = ln C_0, b = ln g, y_ref = y_0, D = 0), the bootstrap
lines of the fit for the fitted one (`observed.FrontierFit`), each with its scatter D_i (the
envelope's wait for the next record, `envelope`). The year line i reaches T is
y_i = y_ref + (ln T − a_i + D_i) / b_i (`trajectory.year_reaching_flop`); a threshold's year is
the median of the y_i, its interval their 5th and 95th percentiles (a prediction interval: the
parameters and the scatter; equal to the year for one line).
The moving-frontier year is found per line the same way (`moving.moving_years`). Pure numpy.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from pipeline.forecast.moving import moving_years
from pipeline.forecast.observed import FrontierFit
from pipeline.trends.fit import CONFIDENCE

KEPT_INTERVALS = 4096
"""Thresholds whose interval a trajectory keeps (`Trajectory.year_intervals`), all forgotten when
more come: about 200 bytes each."""

FITTED = "fitted"
"""The `trajectory` of forecasts rows on the fitted frontier."""


HAND_SET_PREFIX = "hand_set_"


def hand_set_name(growth_per_year: float) -> str:
    """The `trajectory` of a hand-set scenario's rows: hand_set_4x, hand_set_4.5x."""
    return f"{HAND_SET_PREFIX}{growth_per_year:g}x"


@dataclass(frozen=True, slots=True)
class YearInterval:
    """A threshold's year on a trajectory: the median and the 5th-95th percentile of its lines."""

    median: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Trajectory:
    """One compute trajectory of the forecasts (a `forecasts.trajectory` value)."""

    name: str
    base_flop: float
    """C at `base_year` on the central line (the fit at the run date, or the hand-set C_0)."""
    base_year: float
    growth_per_year: float
    growth_per_year_low: float
    growth_per_year_high: float
    reference_year: float
    sample_log_flop: np.ndarray
    """a_i, ln C of each line at `reference_year`."""
    sample_log_growth: np.ndarray
    """b_i > 0, each line's ln growth per year."""
    data_as_of: dt.date | None = None
    """The newest observation the fit rests on; None for a hand-set scenario."""
    sample_log_gap: np.ndarray | None = None
    """D_i, each line's scatter below it (ln of a factor); None: none (a hand-set line)."""
    _intervals: dict[float, YearInterval] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """The intervals of the thresholds `year_intervals` was asked so far (at most
    `KEPT_INTERVALS`): a sweep's series share most of theirs (the grid's FLOP)."""

    def _log_bases(self) -> np.ndarray:
        """a_i − D_i: each line's ln C at `reference_year`, its scatter applied."""
        if self.sample_log_gap is None:
            return self.sample_log_flop
        return np.asarray(self.sample_log_flop - self.sample_log_gap, dtype=np.float64)

    def log_line(self, line: int) -> tuple[float, float]:
        """(ln C at `reference_year`, its scatter applied; ln growth per year) of line `line`
        (mod the number of lines)."""
        j = line % len(self.sample_log_growth)
        return float(self._log_bases()[j]), float(self.sample_log_growth[j])

    def line_years(self, flops: np.ndarray, lines: np.ndarray) -> np.ndarray:
        """y = y_ref + (ln T_k − a_j + D_j) / b_j: the year line j = `lines[k]` (mod the number
        of lines) reaches `flops[k]`; NaN where T_k is not a positive finite number."""
        j = np.asarray(lines) % len(self.sample_log_growth)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_t = np.where((flops > 0) & np.isfinite(flops), np.log(flops), np.nan)
        years = self.reference_year + (log_t - self._log_bases()[j]) / self.sample_log_growth[j]
        return np.asarray(years, dtype=np.float64)

    def year_intervals(self, flops: Sequence[float | None]) -> list[YearInterval | None]:
        """The median year and interval the lines reach each of `flops`; None for a missing,
        infinite or non-positive threshold. The lines' years of the thresholds not asked before
        are one array and their quantiles are taken row by row in one call (the same values as
        one call a row); the rest are read from those asked before."""
        out: list[YearInterval | None] = [None] * len(flops)
        kept = self._intervals
        asked = list(dict.fromkeys(cast(float, f) for f in flops if is_threshold(f)))
        known = {f: kept[f] for f in asked if f in kept}
        new = [f for f in asked if f not in known]
        if new:
            logs = np.array([math.log(f) for f in new])
            bases, growth = self._log_bases(), self.sample_log_growth
            years = self.reference_year + (logs[:, None] - bases[None, :]) / growth[None, :]
            for flop, (median, low, high) in zip(new, _quantiles(years).T, strict=True):
                known[flop] = YearInterval(float(median), float(low), float(high))
            if len(kept) + len(new) > KEPT_INTERVALS:
                kept.clear()
            kept.update((f, known[f]) for f in new)
        for i, f in enumerate(flops):
            if is_threshold(f):
                out[i] = known[cast(float, f)]
        return out

    def moving_interval(
        self, years: Sequence[float], thresholds_flop: Sequence[float | None]
    ) -> YearInterval | None:
        """The moving-frontier year (`moving.moving_years`) over the lines.

        None when the median line does not reach the threshold by the last grid year; a `high`
        of +inf when more than 5% of the lines do not.
        """
        found = moving_years(
            years,
            thresholds_flop,
            self._log_bases(),
            self.reference_year,
            self.sample_log_growth,
        )
        if np.all(np.isfinite(found)):
            return _interval(found)
        tail = (1.0 - CONFIDENCE) / 2.0
        low, median, high = np.quantile(found, [tail, 0.5, 1.0 - tail], method="inverted_cdf")
        return None if math.isinf(median) else YearInterval(float(median), float(low), float(high))


def is_threshold(flop: float | None) -> bool:
    """Whether `flop` is a threshold the lines can reach: a positive finite number."""
    return flop is not None and math.isfinite(flop) and flop > 0.0


def _quantiles(years: np.ndarray) -> np.ndarray:
    """(median, low, high) of the years along the last axis: the median and the `CONFIDENCE`
    interval (numpy's default linear quantiles), each of shape `years.shape[:-1]`. Of one line
    (a hand-set trajectory) all three are its year, as the quantiles give them."""
    if years.shape[-1] == 1:
        return np.stack([years[..., 0]] * 3)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, median, high = np.quantile(years, [tail, 0.5, 1.0 - tail], axis=-1)
    return np.stack([median, low, high])


def _interval(years: np.ndarray) -> YearInterval:
    median, low, high = _quantiles(years)
    return YearInterval(float(median), float(low), float(high))


def hand_set(base_flop: float, base_year: float, growth_per_year: float) -> Trajectory:
    """A hand-set scenario: one line through C_0 in y_0 growing g per year."""
    return Trajectory(
        hand_set_name(growth_per_year),
        base_flop,
        base_year,
        growth_per_year,
        growth_per_year,
        growth_per_year,
        base_year,
        np.array([math.log(base_flop)]),
        np.array([math.log(growth_per_year)]),
    )


def fitted(fit: FrontierFit, run_year: float) -> Trajectory:
    """The fitted frontier as a trajectory, its base the central line at the run's date."""
    return Trajectory(
        FITTED,
        fit.flop_at(run_year),
        run_year,
        fit.growth_per_year,
        fit.growth_per_year_low,
        fit.growth_per_year_high,
        fit.reference_year,
        fit.sample_log_flop,
        fit.sample_log_growth,
        fit.data_as_of,
        fit.sample_log_gap,
    )
