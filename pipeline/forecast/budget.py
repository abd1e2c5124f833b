"""The `uncertainty` rows: each limit year over the design, and each input's variance share.

Built from the design's evaluated thresholds (`pipeline.app.uncertainty`) with
`uncertainty.year_budget`; columns are `pipeline.io.columns.UNCERTAINTY_SCHEMA`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pipeline.forecast.paths import Trajectory
from pipeline.forecast.record import ObservedRecord
from pipeline.forecast.uncertainty import (
    TRAJECTORY_INPUT,
    UncertainInput,
    UncertaintySettings,
    year_budget,
)
from pipeline.identity import config_hash
from pipeline.io.rows import Provenance, SeriesKey

BUDGET_LIMITS = {"linear_end_year": "linear_end_flop", "wall_year": "wall_flop"}
"""The limit years the budget is drawn for -> the `SeriesLimits` threshold each is reached at."""
MOVING_LIMITS = {"moving_linear_end_year": "linear_end_year", "moving_wall_year": "wall_year"}
"""The moving-hardware limit years (a design with trend inputs) -> their frozen-hardware limit,
whose median threshold gives the trajectory's regressor."""


def budget_dicts(
    base: SeriesKey,
    settings: UncertaintySettings,
    values: np.ndarray,
    thresholds: Mapping[str, Sequence[float | None]],
    trajectory: Trajectory,
    provenance: Provenance,
    moving: Mapping[str, np.ndarray] | None = None,
    record: ObservedRecord | None = None,
) -> list[dict[str, Any]]:
    """One row per limit and input (the design's, then `trajectory`).

    `values` is the design (a row per point, a column per input), `thresholds` each limit's
    threshold per point (FLOP; None: not reached on the grid), `moving` each point's
    moving-hardware year per `MOVING_LIMITS` limit (NaN: not reached), when computed. With the
    observed `record`, a point whose frozen-hardware threshold the runs reached takes the date
    the first run reached it, as the `forecasts` rows do (`record.ObservedRecord.years_given`);
    the moving-hardware years are the lines' (docs/sources.md §10)."""
    n = len(values)
    lines = np.arange(n)
    design_hash = config_hash(
        {
            "base_series_id": base.series_id,
            "samples": settings.samples,
            "seed": settings.seed,
            "inputs": [[i.key, i.describe()] for i in settings.inputs],
            "trajectory": trajectory.name,
        }
    )
    rows: list[dict[str, Any]] = []
    frozen: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for limit in BUDGET_LIMITS:
        flops = np.array([math.nan if t is None else t for t in thresholds[limit]])
        years = trajectory.line_years(flops, lines)
        if record is not None:
            years = record.years_given(flops, years)
        reached = np.isfinite(years)
        middle = float(np.exp(np.median(np.log(flops[reached])))) if reached.any() else math.nan
        frozen[limit] = (years, trajectory.line_years(np.full(n, middle), lines))
    limit_years = {k: v[0] for k, v in frozen.items()}
    along_of = {k: v[1] for k, v in frozen.items()}
    for limit, frozen_limit in MOVING_LIMITS.items():
        if moving is not None and limit in moving:
            limit_years[limit] = moving[limit]
            along_of[limit] = along_of[frozen_limit]
    for limit, years in limit_years.items():
        along = along_of[limit]
        regressors = [
            inp.regressor(values[:, i]) if acts_on(inp, limit) else np.zeros(n)
            for i, inp in enumerate(settings.inputs)
        ]
        budget = year_budget([*regressors, along], years)
        names = [(i.key, i.describe()) for i in settings.inputs]
        names.append((TRAJECTORY_INPUT, f"{trajectory.name}: its lines with their scatter"))
        for (name, distribution), share in zip(names, budget.shares, strict=True):
            rows.append(
                {
                    "hardware": base.hardware,
                    "scaling": base.scaling,
                    "batch_law": base.batch_law,
                    "base_series_id": base.series_id,
                    "trajectory": trajectory.name,
                    "limit": limit,
                    "input": name,
                    "distribution": distribution,
                    "variance_share": share,
                    "explained": budget.explained,
                    "year_median": budget.median,
                    "year_low": budget.low,
                    "year_high": budget.high,
                    "n_samples": n,
                    "n_reached": budget.n_reached,
                    "seed": settings.seed,
                    "design_hash": design_hash,
                    "budget_null_reason": budget.null_reason,
                    "run_id": provenance.run_id,
                    "config_hash": design_hash,
                    "schema_version": int(provenance.schema_version),
                    "dmlimits_version": provenance.dmlimits_version,
                    "created_at": provenance.created_at,
                }
            )
    return rows


def acts_on(inp: UncertainInput, limit: str) -> bool:
    """Whether the design input can move `limit`'s year: a hardware trend
    (`UncertainInput.trend_metric`) moves only the moving-hardware years, which project the GPU
    along it; a frozen-hardware year's series never reads it. An input that cannot act is
    held constant in the regression, so its share is 0 and not the fit's noise (with 32
    samples and a dozen inputs, a few percent of the variance)."""
    return limit in MOVING_LIMITS or inp.trend_metric is None
