"""The uncertainty budget of the forecasts: the model's inputs drawn from distributions.

`forecast.uncertainty` names uncertain inputs of the run's own series (config keys in their
human units, as sweep axes write them: `hardware.network.latency_us[*]`) with a distribution
each. A seeded scrambled Sobol' design (`scipy.stats.qmc.Sobol`; Owen scrambling, n a power of
two for balance) gives `samples` points in [0, 1)^d, mapped to each input's distribution
(`design_values`). Each point is one series (`pipeline.sweep.design`), evaluated by the sweep
engine like any other; point k's thresholds give its limit years on the fitted trajectory's
line k (mod the number of lines, with its scatter: `paths.Trajectory`), so the trajectory's
uncertainty enters as one more input, paired with the design.

Each limit year then has a distribution (median, 5th and 95th percentile over the points that
reach it) and a variance share per input: the squared standardized regression coefficient of
the year on the input (on ln of a log-uniform input; the trajectory's input is the year its line
k reaches the points' median threshold), SRC_i² = (β_i σ_i / σ_Y)² (Saltelli et al., *Global
Sensitivity Analysis: The Primer*, 2008, §1.2.5). With uncorrelated inputs the shares add up to
the R² of the linear fit (`explained`); the rest is interaction and curvature. Pure numpy and
scipy; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from statistics import NormalDist

import numpy as np

from pipeline.schema.errors import ConfigError
from pipeline.trends.catalog_fits import CatalogTrends
from pipeline.trends.fit import CONFIDENCE
from pipeline.trends.project import PROJECTED_METRICS

TRAJECTORY_INPUT = "trajectory"
"""The `input` of the fitted trajectory's share (its parameters and the runs' scatter)."""


class Distribution(StrEnum):
    """How an uncertain input is drawn between its `low` and `high`."""

    UNIFORM = "uniform"
    LOGUNIFORM = "loguniform"
    """ln x uniform: a factor, equally likely to be 2x above or below its geometric middle."""
    TREND = "trend"
    """A hardware trend's growth per year (`TREND_PREFIX`): log-normal with the catalog fit's
    growth as median and its 90% bootstrap interval as 5th-95th percentile (σ of ln g from the
    interval's width); its numbers are the run's trends (`with_trends`)."""


TREND_PREFIX = "trends.growth_per_year."
"""Key of a trend input: the prefix, then a metric of `PROJECTED_METRICS`. Not a config key of
the series: the moving frontier of each design point projects its GPU along these rates
(`pipeline.forecast.bracket`)."""
Z_TAIL = NormalDist().inv_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0)
"""Standard normal quantile of the interval's upper end (1.645 at 90%)."""


@dataclass(frozen=True, slots=True)
class UncertainInput:
    """One uncertain config value: its key (a sweep axis key) and its distribution."""

    key: str
    distribution: Distribution
    low: float
    high: float
    centre: float | None = None
    """A trend input's median (the fitted growth); None before `with_trends` fills it."""

    @property
    def trend_metric(self) -> str | None:
        """The projected metric of a trend input, None for a config input."""
        return self.key.removeprefix(TREND_PREFIX) if self.key.startswith(TREND_PREFIX) else None

    def values(self, u: np.ndarray) -> np.ndarray:
        """The quantile function at u in [0, 1): the input's values in config units."""
        if self.distribution is Distribution.TREND:
            if self.centre is None:
                raise ValueError(f"{self.key}: the trend input has no fit (`with_trends`)")
            sigma = (math.log(self.high) - math.log(self.low)) / (2.0 * Z_TAIL)
            from scipy.stats import norm  # deferred, as in design_values

            z = norm.ppf(np.clip(u, 1e-12, 1.0 - 1e-12))
            return np.asarray(self.centre * np.exp(sigma * z), dtype=np.float64)
        if self.distribution is Distribution.LOGUNIFORM:
            lo, hi = math.log(self.low), math.log(self.high)
            return np.asarray(np.exp(lo + u * (hi - lo)), dtype=np.float64)
        return np.asarray(self.low + u * (self.high - self.low), dtype=np.float64)

    def regressor(self, values: np.ndarray) -> np.ndarray:
        """What the year is regressed on: ln x for a log-uniform input, x otherwise."""
        if self.distribution in (Distribution.LOGUNIFORM, Distribution.TREND):
            return np.asarray(np.log(values), dtype=np.float64)
        return values

    def describe(self) -> str:
        """E.g. "loguniform 0.5-2.5", "trend 1.56 (1.49-1.62, 90%)"."""
        if self.distribution is Distribution.TREND:
            if self.centre is None:
                return str(self.distribution)
            return f"{self.distribution} {self.centre:.3g} ({self.low:.3g}-{self.high:.3g}, 90%)"
        return f"{self.distribution} {self.low:g}-{self.high:g}"


@dataclass(frozen=True, slots=True)
class UncertaintySettings:
    """The `forecast.uncertainty` node."""

    samples: int
    """Points of the design (a power of two, at least 8)."""
    seed: int
    inputs: tuple[UncertainInput, ...]


def with_trends(settings: UncertaintySettings, trends: CatalogTrends) -> UncertaintySettings:
    """`settings` with each trend input's median and interval taken from `trends`' fit of its
    metric; ConfigError names an input whose metric is not projected or has no fit."""
    inputs = []
    for inp in settings.inputs:
        metric = inp.trend_metric
        if inp.distribution is not Distribution.TREND:
            inputs.append(inp)
            continue
        if metric not in PROJECTED_METRICS or metric not in trends.fits:
            where = f"forecast.uncertainty.inputs.{inp.key}"
            raise ConfigError(where, metric, "a projected metric the catalog fits")
        fit = trends.fits[metric]
        low, high = fit.growth_per_year_low, fit.growth_per_year_high
        inputs.append(replace(inp, low=low, high=high, centre=fit.growth_per_year))
    return replace(settings, inputs=tuple(inputs))


def design_values(settings: UncertaintySettings) -> np.ndarray:
    """The design: `samples` rows, one column per input, in config units (seeded, scrambled
    Sobol' points mapped through each input's quantile function)."""
    from scipy.stats import qmc  # deferred: scipy.stats takes longer to import than most runs

    sobol = qmc.Sobol(d=len(settings.inputs), scramble=True, seed=settings.seed)
    u = sobol.random_base2(m=int(math.log2(settings.samples)))
    columns = [inp.values(u[:, i]) for i, inp in enumerate(settings.inputs)]
    return np.column_stack(columns)


class BudgetNull(StrEnum):
    """Why a limit year's variance shares are None (`uncertainty.budget_null_reason`)."""

    NONE_REACHED = "none_reached"
    """No point of the design reaches the year (its median and interval are None too)."""
    TOO_FEW_REACHED = "too_few_reached"
    """Fewer points reach it than the regression's inputs plus two."""
    NO_SPREAD = "no_spread"
    """Every point that reaches it has the same year (e.g. a threshold the observed runs
    passed, whose year is their date): there is no variance to share."""


@dataclass(frozen=True, slots=True)
class YearBudget:
    """One limit year over the design: its distribution and each input's variance share."""

    median: float | None
    low: float | None
    high: float | None
    n_reached: int
    shares: tuple[float | None, ...]
    """Per input (the design's, then the trajectory's): SRC_i²; None with too few points."""
    explained: float | None
    """R² of the linear fit: the part of the variance the shares account for."""
    null_reason: BudgetNull | None = None
    """Why `shares` and `explained` are None; None where they are set."""


def year_budget(regressors: Sequence[np.ndarray], years: np.ndarray) -> YearBudget:
    """The distribution of `years` (NaN: not reached) and the SRC² of each regressor.

    Shares need more reaching points than regressors plus two and a year with spread;
    `YearBudget.null_reason` says which is missing.
    """
    reached = np.isfinite(years)
    n = int(reached.sum())
    if n == 0:
        nothing = tuple(None for _ in regressors)
        return YearBudget(None, None, None, 0, nothing, None, BudgetNull.NONE_REACHED)
    y = years[reached]
    tail = (1.0 - CONFIDENCE) / 2.0
    low, median, high = (float(q) for q in np.quantile(y, [tail, 0.5, 1.0 - tail]))
    sd_y = float(y.std())
    if n < len(regressors) + 2 or sd_y == 0.0:
        why = BudgetNull.TOO_FEW_REACHED if n < len(regressors) + 2 else BudgetNull.NO_SPREAD
        return YearBudget(median, low, high, n, tuple(None for _ in regressors), None, why)
    x = np.column_stack([r[reached] for r in regressors])
    sd_x = x.std(axis=0)
    z = np.divide(x - x.mean(axis=0), sd_x, out=np.zeros_like(x), where=sd_x > 0)
    beta, *_ = np.linalg.lstsq(np.column_stack([np.ones(n), z]), (y - y.mean()) / sd_y)
    fitted = np.column_stack([np.ones(n), z]) @ beta
    residual = (y - y.mean()) / sd_y - fitted
    explained = 1.0 - float(residual @ residual) / n
    return YearBudget(
        median, low, high, n, tuple(float(b) ** 2 for b in beta[1:]), max(explained, 0.0)
    )
