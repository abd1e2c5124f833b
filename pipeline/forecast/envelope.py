"""The envelope of the largest runs: a line no observed run lies above, and the gap below it.

The largest training run at a date is the running maximum M(t) of the runs published by then.
Its trajectory is taken as an upper envelope, ln E(y) = a + b · (y − ȳ): the slope b of the
least-squares fit through the frontier runs (`observed.fit_frontier`), the intercept raised
until no run of the window lies above the line,

    a = max_k [ln C_k − b · (y_k − ȳ)]                                           (1)

(corrected least squares, the deterministic frontier of Winsten 1957 and Greene 1980,
"Maximum likelihood estimation of econometric frontier functions", J. Econometrics 13: 27-56).
With b > 0 the line is then not below the largest run published by any date of the window.

Between records the largest run lags the envelope: the gap D(t) = ln E(t) − ln M(t) ≥ 0 is
sampled on a monthly grid of the window (`running_max_gaps`). The year the largest run reaches
T is the year the envelope does plus the wait for the next record, D / b; for a stationary
record process the wait from a uniformly chosen date has the distribution of the gap back to the
last record (forward and backward recurrence times agree: Cox, *Renewal Theory*, 1962, §5.2),
so each bootstrap line i carries one gap D_i drawn from the sample (`paired_gaps`):

    y_i = ȳ + (ln T − a_i + D_i) / b_i                                           (2)

Pure numpy; no I/O.
"""

from __future__ import annotations

import numpy as np

MONTH_YEARS = 1.0 / 12.0
"""The step of the grid the running maximum's gap is sampled on (years)."""


def envelope_intercepts(
    x_years: np.ndarray, log_flop: np.ndarray, slopes: np.ndarray, reference_year: float
) -> np.ndarray:
    """a_i = max_k [ln C_k − b_i · (y_k − ȳ)] (eq. 1) for each slope b_i: the lowest line of
    that slope with no point (y_k, ln C_k) above it, as ln C at `reference_year`."""
    offsets = log_flop[None, :] - slopes[:, None] * (x_years[None, :] - reference_year)
    return np.asarray(offsets.max(axis=1), dtype=np.float64)


def running_max_gaps(
    x_years: np.ndarray,
    log_flop: np.ndarray,
    intercept: float,
    slope: float,
    reference_year: float,
    step_years: float = MONTH_YEARS,
) -> np.ndarray:
    """D(t) = ln E(t) − ln M(t) on a grid from the first point's date to the last one's.

    M(t) is the largest point dated at or before t; E the line a + b · (t − ȳ). Every gap is
    ≥ 0 when the line is an envelope of the points (eq. 1)."""
    order = np.argsort(x_years, kind="stable")
    xs, running = x_years[order], np.maximum.accumulate(log_flop[order])
    grid = np.arange(xs[0], xs[-1] + 0.5 * step_years, step_years)
    latest = np.searchsorted(xs, grid, side="right") - 1
    line = intercept + slope * (grid - reference_year)
    return np.asarray(line - running[latest], dtype=np.float64)


def paired_gaps(gaps: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n gaps drawn with replacement from `gaps` (seeded), one per bootstrap line."""
    rng = np.random.default_rng(seed)
    return np.asarray(gaps[rng.integers(0, len(gaps), size=n)], dtype=np.float64)
