"""Log-linear trend fits: ln(value) = a + b · (year − reference_year), least squares.

Growth per year is e^b, doubling time ln 2 / b (negative for a shrinking metric, infinite for a
flat one). The interval is a seeded case-resampling bootstrap of the slope: the same data and
seed give the same interval on every machine (numpy's PCG64). Pure numpy, no I/O.

This is the method of Gholami et al., *AI and Memory Wall* (arXiv:2403.14123, 2024), Fig. 1:
peak FLOP/s, DRAM and interconnect bandwidth against release year, fitted on a log scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

N_BOOTSTRAP = 2000
"""Bootstrap resamples per fit."""
CONFIDENCE = 0.90
"""Two-sided coverage of the reported interval (5th to 95th percentile)."""
SEED = 20240312
"""Default seed of the bootstrap (fixed, so fits are reproducible)."""


@dataclass(frozen=True, slots=True)
class TrendFit:
    """One metric's exponential trend against release year."""

    n_points: int
    reference_year: float
    """Mean release year of the points; the intercept is taken there."""
    log_value_at_reference: float
    """a: ln(value) on the fitted line at `reference_year` (value in SI units)."""
    log_growth_per_year: float
    """b: slope of ln(value) per year."""
    growth_per_year_low: float
    growth_per_year_high: float
    """Bootstrap interval of e^b at `CONFIDENCE` (equal to e^b when the points lie on a line)."""

    @property
    def growth_per_year(self) -> float:
        """e^b: the factor the metric grows by per year."""
        return math.exp(self.log_growth_per_year)

    @property
    def growth_per_two_years(self) -> float:
        """e^(2b): per two years, the unit Gholami et al. report."""
        return math.exp(2.0 * self.log_growth_per_year)

    @property
    def doubling_time_years(self) -> float:
        """ln 2 / b years (inf when flat, negative when the metric shrinks)."""
        b = self.log_growth_per_year
        return math.inf if b == 0.0 else math.log(2.0) / b

    def value_at(self, year: float) -> float:
        """e^(a + b · (year − reference_year)): the fitted value in a (fractional) year."""
        return math.exp(
            self.log_value_at_reference + self.log_growth_per_year * (year - self.reference_year)
        )


def _slope_intercept(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares (slope, intercept at mean x) of y on x; slope 0 when x has no spread."""
    if float(np.ptp(y)) == 0.0:  # a flat metric: exactly no growth, not rounding noise
        return 0.0, float(y[0])
    xm = x - x.mean()
    sxx = float(xm @ xm)
    slope = float(xm @ (y - y.mean())) / sxx if sxx > 0 else 0.0
    return slope, float(y.mean())


def bootstrap_lines(
    x: np.ndarray, y: np.ndarray, n_resamples: int = N_BOOTSTRAP, seed: int = SEED
) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares lines of `n_resamples` resamples of the (x, y) pairs with replacement.

    Returns (slopes, values at x's mean): each resample's line b_i, and a_i = ȳ_i + b_i · (x̄ − x̄_i),
    its value at the mean of the original x (the fit's reference). Resamples whose x are all
    equal (no slope) are dropped.
    """
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(n_resamples, len(x)))
    xs, ys = x[idx], y[idx]
    x_mean, y_mean = xs.mean(axis=1), ys.mean(axis=1)
    xm = xs - x_mean[:, None]
    sxx = np.einsum("ij,ij->i", xm, xm)
    sxy = np.einsum("ij,ij->i", xm, ys - y_mean[:, None])
    ok = sxx > 1e-12
    slopes = sxy[ok] / sxx[ok]
    at_mean = y_mean[ok] + slopes * (float(x.mean()) - x_mean[ok])
    return np.asarray(slopes, dtype=np.float64), np.asarray(at_mean, dtype=np.float64)


def bootstrap_slopes(
    x: np.ndarray, y: np.ndarray, n_resamples: int = N_BOOTSTRAP, seed: int = SEED
) -> np.ndarray:
    """The slopes of `bootstrap_lines` (resamples with no spread in x dropped)."""
    return bootstrap_lines(x, y, n_resamples, seed)[0]


def fit_trend(
    years: ArrayLike,
    values: ArrayLike,
    *,
    n_resamples: int = N_BOOTSTRAP,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
    slopes: np.ndarray | None = None,
) -> TrendFit:
    """The log-linear fit of `values` (positive) against fractional release `years`.

    `slopes`, when the caller has them, are `bootstrap_slopes` of these years and ln(values)
    with the same `n_resamples` and `seed` (not resampled again). Raises ValueError with fewer
    than two points, two points in the same year only, or a value that is not positive and
    finite.
    """
    x = np.asarray(years, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if x.shape != v.shape or x.ndim != 1:
        raise ValueError("years and values must be 1-D arrays of one length")
    if len(x) < 2 or float(np.ptp(x)) == 0.0:
        raise ValueError("a trend needs at least two points in different years")
    if not (np.all(np.isfinite(v)) and np.all(v > 0) and np.all(np.isfinite(x))):
        raise ValueError("trend values must be positive and finite, years finite")
    y = np.log(v)
    slope, intercept = _slope_intercept(x, y)
    flat = slope == 0.0 and float(np.ptp(y)) == 0.0
    if flat:
        slopes = np.zeros(0)
    elif slopes is None:
        slopes = bootstrap_slopes(x, y, n_resamples, seed)
    tail = (1.0 - confidence) / 2.0
    lo, hi = (
        (float(np.quantile(slopes, tail)), float(np.quantile(slopes, 1.0 - tail)))
        if len(slopes)
        else (slope, slope)
    )
    return TrendFit(
        n_points=len(x),
        reference_year=float(x.mean()),
        log_value_at_reference=intercept,
        log_growth_per_year=slope,
        growth_per_year_low=math.exp(min(lo, slope)),
        growth_per_year_high=math.exp(max(hi, slope)),
    )
