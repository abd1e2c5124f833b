"""The uncertainty design of a run, evaluated: its series run by the sweep engine, then the
`uncertainty` table (`pipeline.forecast.budget`).

Runs before the plan's own series, beside the moving frontier (`pipeline.app.execute`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext

import pyarrow as pa

from pipeline.app.write import scenario_key
from pipeline.execute.runner import run_series
from pipeline.execute.settings import ExecutionSettings
from pipeline.forecast.budget import BUDGET_LIMITS, budget_dicts
from pipeline.forecast.inputs import trajectories
from pipeline.forecast.settings import ForecastSettings
from pipeline.forecast.uncertainty import design_values
from pipeline.io.columns import UNCERTAINTY_SCHEMA
from pipeline.io.rows import Provenance, table_from_rows
from pipeline.sweep.expand import SweepSeries


def _ignore(points: int) -> None:
    """No progress to count."""


def run_uncertainty(
    base: SweepSeries,
    design: Sequence[SweepSeries],
    forecast: ForecastSettings,
    execution: ExecutionSettings,
    provenance: Provenance,
    progress: Callable[[int], AbstractContextManager[Callable[[int], None]]] | None = None,
) -> pa.Table | None:
    """The `uncertainty` rows of the run's design (None without one); `progress` as
    `pipeline.app.frontier.run_frontiers` takes it."""
    settings = forecast.uncertainty
    if settings is None or not design:
        return None
    outcomes = {}
    with progress(len(design)) if progress is not None else nullcontext(_ignore) as advance:
        for outcome in run_series((s.scenario for s in design), execution, False):
            outcomes[outcome.series_id] = outcome.limits
            advance(len(outcome.points))
    limits = [outcomes[s.series_id] for s in design]
    thresholds = {
        year: [getattr(lim, flop) for lim in limits] for year, flop in BUDGET_LIMITS.items()
    }
    rows = budget_dicts(
        scenario_key(base.scenario, base.series_id),
        settings,
        design_values(settings),
        thresholds,
        trajectories(forecast)[0],
        provenance,
    )
    return table_from_rows(rows, UNCERTAINTY_SCHEMA)
