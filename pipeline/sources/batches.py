"""Observed batch sizes of large language-model runs -> the `observed` batch law's constants.

The law is B_tok = c · C^e (tokens per optimizer step against training FLOP; the model applies
it as `BatchLawKind.OBSERVED`, docs/model.md §3). Its constants are fitted here, outside the
physics, and reach the model as numbers (conf/batch/observed.yaml, checked against this fit on
the shipped snapshot by a test); every run that reads the frontier-runs source records the fit
of the copy it read in its `sources` table (docs/sources.md, "Observed batch sizes").

Runs fitted (`batch_runs`): a batch size stated, at least `MIN_FLOP` of training compute, and
Language as the only domain (Epoch AI records tokens for these; for image, multimodal or robotics
runs it records images or sequences). At most the `MAX_RUNS` largest by compute.

Fit: Theil-Sen on (ln C, ln B): e the median of the pairwise slopes, ln c the median of
ln B − e · ln C (Sen 1968, *J. Am. Stat. Assoc.* 63:1379). A few runs whose batch Epoch records
in sequences (tens of thousands "tokens" beside millions) cannot drag it, where least squares
moves by a third. Interval: a seeded case-resampling bootstrap of the same estimator, the 5th
and 95th percentile of e (`pipeline.trends.fit`'s resamples and seed). Pure numpy; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.sources.epoch import ObservedRun
from pipeline.trends.fit import CONFIDENCE, N_BOOTSTRAP, SEED

MIN_FLOP = 1e23
"""Runs of at least this training compute are fitted: the large runs the limits concern (Epoch
AI's own "large-scale" threshold, docs/sources.md)."""
LANGUAGE = "Language"
MAX_RUNS = 200
"""At most this many runs (the largest by compute) are fitted: Theil-Sen compares every pair,
so the bound keeps a hostile source's cost small (the shipped snapshot has 32)."""
MIN_RUNS = 3
CHUNK = 50
"""Bootstrap resamples evaluated at once (memory: CHUNK · n² floats)."""


@dataclass(frozen=True, slots=True)
class BatchFit:
    """B_tok = coefficient · C^exponent fitted to observed runs, and the exponent's interval."""

    n_runs: int
    coefficient: float
    """c: tokens at C = 1 FLOP."""
    exponent: float
    exponent_low: float
    exponent_high: float
    """The 5th and 95th percentile of the bootstrap's exponents."""


def batch_runs(runs: Sequence[ObservedRun]) -> list[ObservedRun]:
    """The runs the law is fitted to (module docstring), largest first."""
    chosen = [
        r
        for r in runs
        if r.batch_size is not None
        and r.training_flop >= MIN_FLOP
        and r.domain is not None
        and {d.strip() for d in r.domain.split(",")} == {LANGUAGE}
    ]
    chosen.sort(key=lambda r: (-r.training_flop, r.line))
    return chosen[:MAX_RUNS]


def _median_ignoring_nan(rows: np.ndarray) -> np.ndarray:
    """Each row's median over its non-NaN values (NaN for a row of NaN only): the values sorted
    with NaN last, the middle one or two of those that are numbers."""
    ordered = np.sort(rows, axis=1)
    count = np.sum(~np.isnan(rows), axis=1)
    low = np.take_along_axis(ordered, np.maximum(count - 1, 0)[:, None] // 2, axis=1)[:, 0]
    high = np.take_along_axis(ordered, np.maximum(count // 2, 0)[:, None], axis=1)[:, 0]
    return np.where(count > 0, (low + high) / 2.0, np.nan)


def _theil_sen(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of (x, y) samples -> each row's Theil-Sen (slope, intercept); NaN with no spread."""
    i, j = np.triu_indices(x.shape[1], 1)
    dx = x[:, j] - x[:, i]
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.where(dx != 0.0, (y[:, j] - y[:, i]) / dx, np.nan)
    slope = _median_ignoring_nan(slopes)
    intercept = np.median(y - slope[:, None] * x, axis=1)
    return slope, intercept


def fit_batch_law(
    runs: Sequence[ObservedRun], n_resamples: int = N_BOOTSTRAP, seed: int = SEED
) -> BatchFit | None:
    """The law fitted to `batch_runs(runs)`; None with fewer than `MIN_RUNS` of two computes."""
    chosen = batch_runs(runs)
    x = np.log(np.array([r.training_flop for r in chosen], dtype=np.float64))
    y = np.log(np.array([r.batch_size or 1.0 for r in chosen], dtype=np.float64))
    if len(chosen) < MIN_RUNS or float(np.ptp(x)) == 0.0:
        return None
    slope, intercept = _theil_sen(x[None, :], y[None, :])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(n_resamples, len(x)))
    samples = np.concatenate(
        [
            _theil_sen(x[idx[k : k + CHUNK]], y[idx[k : k + CHUNK]])[0]
            for k in range(0, n_resamples, CHUNK)
        ]
    )
    samples = samples[~np.isnan(samples)]
    tail = (1.0 - CONFIDENCE) / 2.0
    return BatchFit(
        n_runs=len(chosen),
        coefficient=math.exp(float(intercept[0])),
        exponent=float(slope[0]),
        exponent_low=float(np.quantile(samples, tail)),
        exponent_high=float(np.quantile(samples, 1.0 - tail)),
    )
