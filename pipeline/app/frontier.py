"""The moving frontier of a run: every base series on each year's projected hardware, evaluated.

Runs before the plan's own series (`pipeline.app.execute.execute_plan`), in one parallel pass over
all projected scenarios of all bases (`pipeline.forecast.frontier.frontier_scenarios`), one task
per base: a base's years share the search's hardware-free tables (layouts, keyed by model and
cluster size), which a worker then builds once per base instead of every worker once per base
(docs/nightly.md, "What it does, and for how long").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace

from pipeline.catalog import Catalog
from pipeline.execute.runner import run_series, tasks_at_once
from pipeline.execute.settings import ExecutionSettings
from pipeline.forecast.frontier import FrontierYear, MovingFrontier, frontier_scenarios
from pipeline.identity import series_id
from pipeline.model.limits import linear_end_beyond_grid
from pipeline.model.records.hardware import peak_flop_per_s
from pipeline.model.records.results import SeriesLimits
from pipeline.schema import Scenario
from pipeline.schema.projected import catalog_and_trends
from pipeline.trends.catalog_fits import CatalogTrends


def _ignore(points: int) -> None:
    """No progress to count."""


def frontier_tasks(
    execution: ExecutionSettings, years: Sequence[float]
) -> Callable[[int], tuple[int, int]]:
    """How many tasks of a moving frontier of n series run at once, and the series of each:
    one base's years a task (`run_frontiers`), n / len(years) tasks over the pool's workers
    (`tasks_at_once`)."""

    def tasks(n: int) -> tuple[int, int]:
        each = max(1, len(years))
        return tasks_at_once(execution, -(-n // each)), each

    return tasks


def run_frontiers(
    series: Sequence[tuple[str, Scenario]],
    years: Sequence[float],
    execution: ExecutionSettings,
    hardware: tuple[Catalog, CatalogTrends] | None = None,
    progress: Callable[[int], AbstractContextManager[Callable[[int], None]]] | None = None,
) -> dict[str, MovingFrontier]:
    """Base series_id -> its moving frontier, for every (series_id, scenario) on a catalog GPU.

    All projected series of all bases are evaluated in one `run_series` pass (parallel), each
    up to its wall (its first infeasible size, or the size where utilization collapsed), a
    base's years in one task (`execution.chunk_size` is the run's own series').
    `progress(n)`, given, opens the stage's progress for n series and gives the function that
    counts each one's points.
    """
    if not years:
        return {}
    catalog, trends = hardware or catalog_and_trends(None)
    plans: dict[str, tuple[str, list[tuple[float, Scenario]]]] = {}
    for base_id, base in series:
        projected = frontier_scenarios(base, years, catalog, trends)
        if projected:
            plans[base_id] = (base.hardware_name, list(zip(years, projected, strict=True)))
    todo = {series_id(s, False): s for _, plan in plans.values() for _, s in plan}
    per_base = replace(execution, chunk_size=len(years))  # todo holds each base's years in turn
    limits: dict[str, SeriesLimits] = {}  # not the points: 136 series' worth add up
    with progress(len(todo)) if progress is not None else nullcontext(_ignore) as advance:
        for outcome in run_series(todo.values(), per_base, False):
            limits[outcome.series_id] = outcome.limits
            advance(len(outcome.points))
    frontiers = {}
    for base_id, (base_gpu, plan) in plans.items():
        rows = []
        for year, s in plan:
            found = limits[series_id(s, False)]
            rows.append(
                FrontierYear(
                    year,
                    s.hardware_name,
                    series_id(s, False),
                    peak_flop_per_s(s.hardware),
                    found.linear_end_flop,
                    found.last_feasible_flop,
                    found.first_infeasible_flop,
                    found.wall_flop,
                    found.end_reason,
                    linear_end_beyond_grid(found),
                )
            )
        frontiers[base_id] = MovingFrontier(base_gpu, trends.catalog_hash, tuple(rows))
    return frontiers
