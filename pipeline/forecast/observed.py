"""The frontier of observed training runs, and the log-linear trajectory fitted to it.

Which runs define the frontier is a rule (`FrontierRule`), applied to every run of the source
(so "top 10 at release" counts runs from before the window too), then limited to the window:

- `epoch_flag`: Epoch's own `Frontier model` flag (a model in the top 10 by training compute
  when released, by Epoch's definition);
- `top_n`: the run is among the `top_n` largest by training compute of all runs published up to
  its date;
- `running_max`: the run is at least as large as every run published before it.

The least-squares line ln C = a + b · (y − ȳ) over the window's frontier runs
(`pipeline.trends.fit`, the method the hardware trends use) gives the growth e^b per year, with
a seeded case-resampling bootstrap (2,000 resamples, 5th-95th percentile). Epoch AI publishes
4-5x per year for frontier runs of 2010-2024 (docs/sources.md compares). Which line the
trajectory follows is `FrontierLine`:

- `envelope` (the default): the largest run. Each bootstrap line is raised until no run of the
  window lies above it (`envelope.envelope_intercepts`), and carries a wait for the next record
  drawn from the running maximum's gaps below the envelope (`envelope.running_max_gaps`);
- `typical`: a typical frontier model, the least-squares line itself, each bootstrap line
  carrying a residual of a frontier run about it (the scatter of the runs).

Pure numpy; no I/O.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from pipeline.catalog.load import fractional_year
from pipeline.forecast.envelope import envelope_intercepts, paired_gaps, running_max_gaps
from pipeline.forecast.record import ObservedRecord
from pipeline.identity import config_hash
from pipeline.sources.acquire import SourceError
from pipeline.sources.epoch import FRONTIER_FLAG, ObservedRun
from pipeline.sources.hardware import MergedCatalog
from pipeline.sources.observe import FRONTIER_RUNS, Observations
from pipeline.trends.catalog_fits import CatalogTrends
from pipeline.trends.fit import (
    CONFIDENCE,
    N_BOOTSTRAP,
    SEED,
    TrendFit,
    bootstrap_lines,
    fit_trend,
)


class FrontierLine(StrEnum):
    """Which line of the frontier runs the fitted trajectory follows (`forecast.fitted.line`)."""

    ENVELOPE = "envelope"
    TYPICAL = "typical"


class FrontierRule(StrEnum):
    """Which observed runs define the frontier."""

    EPOCH_FLAG = "epoch_flag"
    TOP_N = "top_n"
    RUNNING_MAX = "running_max"


@dataclass(frozen=True, slots=True)
class FrontierSettings:
    """The `forecast.fitted` node: the rule and the window of the fit."""

    rule: FrontierRule = FrontierRule.EPOCH_FLAG
    top_n: int = 10
    """N of the top_n rule."""
    window_start: dt.date = dt.date(2018, 1, 1)
    window_end: dt.date | None = None
    """The last publication date used (None: every run); runs after it are as if unpublished."""
    line: FrontierLine = FrontierLine.ENVELOPE
    """The envelope of the largest runs, or the least-squares line of a typical frontier run."""

    def flag_settings(self) -> dict[str, object]:
        """The settings that decide which runs are at the frontier (`fit_frontier`'s flags):
        the rule (with `top_n` under the top_n rule alone) and the window. Not `line`, which
        draws another line through the same runs."""
        settings: dict[str, object] = {
            "rule": self.rule.value,
            "window_start": self.window_start.isoformat(),
            "window_end": None if self.window_end is None else self.window_end.isoformat(),
        }
        if self.rule is FrontierRule.TOP_N:
            settings["top_n"] = self.top_n
        return settings


def fit_hash(content_hash: str, settings: FrontierSettings | None) -> str:
    """The fit a run flagged the frontier runs under (`observed_runs.fit_hash`,
    `forecasts.fit_hash`): `config_hash` of the frontier-runs copy and the settings that decide
    the flags (`FrontierSettings.flag_settings`; null without a fit, every flag false): two
    runs of one `fit_hash` flag the same runs."""
    fitted = None if settings is None else settings.flag_settings()
    return config_hash({"content_hash": content_hash, "fitted": fitted})


@dataclass(frozen=True, slots=True)
class FrontierFit:
    """The fitted frontier trajectory, its bootstrap lines, and the data it rests on."""

    n_points: int
    reference_year: float
    """ȳ, the mean fractional year of the fitted runs."""
    log_flop_at_reference: float
    log_growth_per_year: float
    growth_per_year_low: float
    growth_per_year_high: float
    sample_log_flop: np.ndarray
    """a_i: each bootstrap line's ln C at `reference_year`."""
    sample_log_growth: np.ndarray
    """b_i: each bootstrap line's slope (ln growth per year)."""
    sample_log_gap: np.ndarray
    """D_i: each bootstrap line's scatter, ln of the factor a run lies below its line (the
    envelope: a gap of the running maximum, ≥ 0; typical: a frontier run's residual)."""
    data_as_of: dt.date
    """The newest publication date among the runs the fit could see (any run, frontier or not,
    up to `window_end`): the forecasts' `data_as_of`."""
    rule: FrontierRule
    window_start: dt.date
    window_end: dt.date | None
    record: ObservedRecord
    """The records of the frontier runs the fit could see (up to `data_as_of`, before
    `window_start` too): a threshold at or below the largest has been reached (`record`)."""
    line: FrontierLine = FrontierLine.ENVELOPE
    top_n: int = 10
    """N of the top_n rule (`FrontierSettings.top_n`)."""

    @property
    def settings(self) -> FrontierSettings:
        """The `forecast.fitted` settings the fit was made with."""
        return FrontierSettings(
            self.rule, self.top_n, self.window_start, self.window_end, self.line
        )

    @property
    def growth_per_year(self) -> float:
        """e^b, the fitted growth factor per year."""
        return math.exp(self.log_growth_per_year)

    def flop_at(self, year: float) -> float:
        """e^(a + b · (y − ȳ)): the fitted frontier compute in a fractional year (FLOP)."""
        return math.exp(
            self.log_flop_at_reference + self.log_growth_per_year * (year - self.reference_year)
        )

    def flop_prediction_at(self, year: float) -> tuple[float, float, float]:
        """The median, 5th and 95th percentile compute in `year` (FLOP) of the largest run
        (envelope) or a frontier run (typical): e^(a_i + b_i · (y − ȳ) − D_i) over the lines,
        the parameters' uncertainty and the runs' scatter together. The largest run is a
        running maximum: no line of it goes below the record the fit saw by `year` (by
        `data_as_of` after it, `record.flop_by`); a line above the record before `data_as_of`
        is kept, as a year of a threshold above the record is (docs/sources.md §5)."""
        logs = (
            self.sample_log_flop
            + self.sample_log_growth * (year - self.reference_year)
            - self.sample_log_gap
        )
        tail = (1.0 - CONFIDENCE) / 2.0
        values = np.exp(np.quantile(logs, [tail, 0.5, 1.0 - tail]))
        if self.line is FrontierLine.ENVELOPE:  # a quantile of the lines held up to the record
            values = np.maximum(values, self.record.flop_by(min(year, self.record.as_of_year)))
        low, median, high = values
        return float(median), float(low), float(high)


@dataclass(frozen=True, slots=True)
class ObservedFrontier:
    """What a run observed: the sources read, the fit (None when not fitted), and for each
    observed run whether it defines the fitted frontier."""

    observations: Observations
    fit: FrontierFit | None
    frontier: tuple[bool, ...]
    run_year: float
    """The run date as a fractional year: the fitted trajectory's base year."""
    hardware: MergedCatalog | None = None
    """The catalog merged with the accelerator source (None when it was not read)."""
    trends: CatalogTrends | None = None
    """The trends fitted on `hardware` (the moving frontier's)."""

    @property
    def data_as_of(self) -> dt.date | None:
        """The newest publication date the forecasts rest on: the fit's (`FrontierFit.data_as_of`,
        up to its `window_end`), else the frontier-runs source's, if it was read."""
        if self.fit is not None:
            return self.fit.data_as_of
        read = self.observations.read("frontier_runs")
        return None if read is None else read.newest_date

    @property
    def fit_hash(self) -> str | None:
        """The fit the `frontier` flags were drawn under (`fit_hash`: the frontier-runs copy
        and the fit's flag settings, or no fit): the `observed_runs` part's key; None when the
        run read no frontier runs."""
        read = self.observations.read(FRONTIER_RUNS)
        if read is None:
            return None
        return fit_hash(read.snapshot.content_hash, None if self.fit is None else self.fit.settings)

    @property
    def forecast_fit_hash(self) -> str | None:
        """The `forecasts.fit_hash` of the run's rows: `fit_hash` when the run fitted the
        frontier (its fitted line, and every trajectory's `data_as_of` and `already_passed`,
        rest on that fit), else None (no row rests on a fit)."""
        return self.fit_hash if self.fit is not None else None

    @property
    def record(self) -> ObservedRecord | None:
        """The observed record the forecasts treat as fact: the fit's (`FrontierFit.record`),
        else every run of the frontier-runs source (no rule without a fit); None when the run
        read no frontier runs."""
        if self.fit is not None:
            return self.fit.record
        as_of = self.data_as_of
        if as_of is None or not self.observations.runs:
            return None
        return record_of(self.observations.runs, as_of)


def record_of(runs: Sequence[ObservedRun], as_of: dt.date) -> ObservedRecord:
    """The records of `runs` published by `as_of` (`record.ObservedRecord.of_runs`)."""
    return ObservedRecord.of_runs(
        [fractional_year(r.publication_date) for r in runs],
        [r.training_flop for r in runs],
        fractional_year(as_of),
    )


def frontier_flags(runs: Sequence[ObservedRun], rule: FrontierRule, top_n: int = 10) -> list[bool]:
    """For each run (in the given order), whether it is at the frontier under `rule`."""
    if rule is FrontierRule.EPOCH_FLAG:
        if any(r.epoch_frontier is None for r in runs):
            raise SourceError(
                f"source frontier_runs: column {FRONTIER_FLAG!r} is missing "
                "(the epoch_flag rule needs it; use forecast.fitted.rule=top_n or running_max)"
            )
        return [bool(r.epoch_frontier) for r in runs]
    order = sorted(range(len(runs)), key=lambda i: runs[i].publication_date)
    flags = [False] * len(runs)
    earlier: list[float] = []  # compute of runs published before the current date, ascending
    i = 0
    while i < len(order):
        day = runs[order[i]].publication_date
        same = [k for k in order[i:] if runs[k].publication_date == day]
        for k in same:
            c = runs[k].training_flop
            larger = len(earlier) - bisect.bisect_right(earlier, c)
            flags[k] = larger == 0 if rule is FrontierRule.RUNNING_MAX else larger < top_n
        for k in same:
            bisect.insort(earlier, runs[k].training_flop)
        i += len(same)
    return flags


def in_window(run: ObservedRun, settings: FrontierSettings) -> bool:
    """Whether the run's publication date lies in the window."""
    end = settings.window_end
    return settings.window_start <= run.publication_date and (
        end is None or run.publication_date <= end
    )


def fit_frontier(
    runs: Sequence[ObservedRun],
    settings: FrontierSettings,
    *,
    n_resamples: int = N_BOOTSTRAP,
    seed: int = SEED,
) -> tuple[FrontierFit, list[bool]]:
    """The fit over the window's frontier runs, and each run's frontier flag (in `runs` order).

    Runs after `window_end` are left out before the rule is applied. Raises SourceError (one
    line) with fewer than three frontier runs in the window, or when the frontier does not grow
    in some bootstrap resample (no year would be reached).
    """
    known = [
        r for r in runs if settings.window_end is None or r.publication_date <= settings.window_end
    ]
    if not known:
        raise SourceError("source frontier_runs: no usable run up to the window's end")
    flags_known = frontier_flags(known, settings.rule, settings.top_n)
    chosen = sorted(  # the `observed_runs` table's order, so a reader can redraw the same band
        (r for r, f in zip(known, flags_known, strict=True) if f and in_window(r, settings)),
        key=lambda r: (r.publication_date, r.model, r.line),
    )
    if len({r.publication_date for r in chosen}) < 3:
        raise SourceError(
            f"source frontier_runs: {len(chosen)} frontier runs ({settings.rule}) from "
            f"{settings.window_start}: a fit needs at least three on different dates"
        )
    x = np.array([fractional_year(r.publication_date) for r in chosen])
    c = np.array([r.training_flop for r in chosen])
    slopes, at_mean = bootstrap_lines(x, np.log(c), n_resamples, seed)  # resampled once
    trend = fit_trend(x, c, n_resamples=n_resamples, seed=seed, slopes=slopes)
    if not np.all(slopes > 0.0):
        raise SourceError(
            f"source frontier_runs: the frontier ({settings.rule}, from {settings.window_start}) "
            "does not grow in every bootstrap resample; widen the window"
        )
    window = [r for r in known if in_window(r, settings)]
    intercept, at_mean, gaps = _line_and_gaps(
        settings.line, trend, x, np.log(c), window, slopes, at_mean
    )
    flag_of = {id(r): f for r, f in zip(known, flags_known, strict=True)}
    as_of = max(r.publication_date for r in known)
    record = record_of([r for r in known if flag_of[id(r)]], as_of)
    flags = [bool(flag_of.get(id(r), False)) and in_window(r, settings) for r in runs]
    fit = FrontierFit(
        n_points=trend.n_points,
        reference_year=trend.reference_year,
        log_flop_at_reference=intercept,
        log_growth_per_year=trend.log_growth_per_year,
        growth_per_year_low=trend.growth_per_year_low,
        growth_per_year_high=trend.growth_per_year_high,
        sample_log_flop=at_mean,
        sample_log_growth=slopes,
        sample_log_gap=paired_gaps(gaps, len(slopes), seed),
        data_as_of=as_of,
        rule=settings.rule,
        window_start=settings.window_start,
        window_end=settings.window_end,
        record=record,
        line=settings.line,
        top_n=settings.top_n,
    )
    return fit, flags


def _line_and_gaps(
    line: FrontierLine,
    trend: TrendFit,
    x: np.ndarray,
    log_flop: np.ndarray,
    window: Sequence[ObservedRun],
    slopes: np.ndarray,
    at_mean: np.ndarray,
) -> tuple[float, np.ndarray, np.ndarray]:
    """The central line's intercept, the bootstrap lines' intercepts and the scatter sample:
    the least-squares ones and the frontier runs' residuals (typical), or the envelope of every
    run of the window and its running maximum's gaps (envelope)."""
    ref, b = trend.reference_year, trend.log_growth_per_year
    if line is FrontierLine.TYPICAL:
        a = trend.log_value_at_reference
        return a, at_mean, a + b * (x - ref) - log_flop
    wx = np.array([fractional_year(r.publication_date) for r in window])
    wl = np.log([r.training_flop for r in window])
    a = float(envelope_intercepts(wx, wl, np.array([b]), ref)[0])
    return a, envelope_intercepts(wx, wl, slopes, ref), running_max_gaps(wx, wl, a, b, ref)
