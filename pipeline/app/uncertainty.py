"""The uncertainty design of a run, evaluated: its series run by the sweep engine, then the
`uncertainty` table (`pipeline.forecast.budget`).

Runs before the plan's own series, beside the moving frontier (`pipeline.app.execute`). With
trend inputs (`forecast.uncertainty.inputs.trends.growth_per_year.<metric>`), each design point
also gets its moving-frontier years: its GPU (with the point's config values) projected along
the run's trends with the point's rates, evaluated only on the grid years that bracket each
crossing (`pipeline.forecast.bracket`), again by the sweep engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace

import numpy as np
import pyarrow as pa

from pipeline.app.write import scenario_key
from pipeline.catalog import Catalog
from pipeline.execute.runner import run_series
from pipeline.execute.settings import ExecutionSettings
from pipeline.forecast.bracket import Probe, bracketed_moving_years
from pipeline.forecast.budget import BUDGET_LIMITS, MOVING_LIMITS, budget_dicts
from pipeline.forecast.frontier import PROJECTED
from pipeline.forecast.inputs import moving_hardware, trajectories
from pipeline.forecast.paths import Trajectory
from pipeline.forecast.settings import ForecastSettings
from pipeline.forecast.uncertainty import UncertaintySettings, design_values
from pipeline.identity import series_id
from pipeline.io.columns import UNCERTAINTY_SCHEMA
from pipeline.io.rows import Provenance, table_from_rows
from pipeline.model.records.results import SeriesLimits
from pipeline.schema import Scenario
from pipeline.schema.projected import projected_name
from pipeline.sweep.expand import SweepSeries
from pipeline.trends.catalog_fits import CatalogTrends
from pipeline.trends.project import PROJECTED_METRICS, project_hardware


def _ignore(points: int) -> None:
    """No progress to count."""


Progress = Callable[[int], AbstractContextManager[Callable[[int], None]]]
"""Opens a progress for n series and yields the function counting each one's points."""


def _limits(
    scenarios: Sequence[Scenario], execution: ExecutionSettings, progress: Progress | None
) -> list[SeriesLimits]:
    """Each scenario's `SeriesLimits`, in order (the sweep engine, in parallel), counted by
    `progress` as each finishes."""
    ids = [series_id(s, False) for s in scenarios]
    found = {}
    with progress(len(scenarios)) if progress is not None else nullcontext(_ignore) as advance:
        for outcome in run_series(iter(scenarios), execution, False):
            found[outcome.series_id] = outcome.limits
            advance(len(outcome.points))
    return [found[i] for i in ids]


def moving_design_years(
    points: Sequence[SweepSeries],
    settings: UncertaintySettings,
    values: np.ndarray,
    frozen: Mapping[str, Sequence[float | None]],
    trajectory: Trajectory,
    years: Sequence[float],
    hardware: tuple[Catalog, CatalogTrends],
    execution: ExecutionSettings,
    progress: Progress | None = None,
) -> dict[str, np.ndarray] | None:
    """Each point's moving-frontier year per limit (`MOVING_LIMITS`), on its line of
    `trajectory`; None when the design has no trend input or its GPU is not a catalog preset.
    Each round of probed years is counted by `progress`."""
    rates = {
        inp.trend_metric: values[:, i]
        for i, inp in enumerate(settings.inputs)
        if inp.trend_metric is not None
    }
    catalog, trends = hardware
    base = points[0].scenario
    entry = catalog.by_preset(base.hardware_name)
    if not rates or entry is None or not all(m in trends.fits for m in PROJECTED_METRICS):
        return None
    fitted = {m: trends.fits[m].growth_per_year for m in PROJECTED_METRICS}

    def projected(probe: Probe) -> Scenario:
        p, i = probe
        growth = {**fitted, **{m: float(v[p]) for m, v in rates.items()}}
        name = projected_name(PROJECTED, base.hardware_name, years[i])
        point = points[p].scenario
        hw = project_hardware(point.hardware, entry.release_year, years[i], growth, name)
        return replace(point, hardware=hw, hardware_name=name)

    def evaluate(probes: Sequence[Probe]) -> dict[Probe, dict[str, float | None]]:
        limits = _limits([projected(q) for q in probes], execution, progress)
        return {
            q: {m: getattr(lim, BUDGET_LIMITS[f]) for m, f in MOVING_LIMITS.items()}
            for q, lim in zip(probes, limits, strict=True)
        }

    lines = [trajectory.log_line(p) for p in range(len(points))]
    grid = np.asarray(years, dtype=np.float64)
    starts = {}
    for moving, frozen_limit in MOVING_LIMITS.items():
        flops = np.array([np.nan if t is None else t for t in frozen[frozen_limit]])
        at = trajectory.line_years(flops, np.arange(len(points)))  # the frozen-hardware years
        starts[moving] = [int(np.searchsorted(grid, y)) if np.isfinite(y) else 0 for y in at]
    return bracketed_moving_years(
        years, starts, lines, trajectory.reference_year, list(MOVING_LIMITS), evaluate
    )


def run_uncertainty(
    base: SweepSeries,
    design: Sequence[SweepSeries],
    forecast: ForecastSettings,
    execution: ExecutionSettings,
    provenance: Provenance,
    progress: Progress | None = None,
    moving_progress: Progress | None = None,
) -> pa.Table | None:
    """The `uncertainty` rows of the run's design (None without one); `progress` as
    `pipeline.app.frontier.run_frontiers` takes it, `moving_progress` the same for each round
    of the design's moving-hardware probes."""
    settings = forecast.uncertainty
    if settings is None or not design:
        return None
    limits = _limits([s.scenario for s in design], execution, progress)
    thresholds = {
        year: [getattr(lim, flop) for lim in limits] for year, flop in BUDGET_LIMITS.items()
    }
    values = design_values(settings)
    trajectory = trajectories(forecast)[0]
    moving = None
    if forecast.moving_frontier_years:
        moving = moving_design_years(
            design,
            settings,
            values,
            thresholds,
            trajectory,
            forecast.moving_frontier_years,
            moving_hardware(forecast),
            execution,
            moving_progress,
        )
    rows = budget_dicts(
        scenario_key(base.scenario, base.series_id),
        settings,
        values,
        thresholds,
        trajectory,
        provenance,
        moving,
        None if forecast.observed is None else forecast.observed.record,
    )
    return table_from_rows(rows, UNCERTAINTY_SCHEMA)
