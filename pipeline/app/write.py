"""One evaluated series as its four tables, and writing them into the dataset.

The tables are built once (`series_tables`) and either written (`write_tables`) or kept in
memory (`pipeline.run(write=False)`): the API's frames and the Parquet parts hold the same rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa

from pipeline.execute.series import SeriesOutcome
from pipeline.forecast import ForecastSettings, forecast_rows
from pipeline.forecast.frontier import MovingFrontier, frontier_rows
from pipeline.io.parquet import write_part, write_series
from pipeline.io.rows import (
    Provenance,
    SeriesKey,
    canonical_json,
    point_rows,
    series_row,
    threshold_row,
)
from pipeline.schema import Scenario


class SeriesTables(NamedTuple):
    """The rows of one series in each table of the dataset (docs/schema.md)."""

    points: pa.Table
    thresholds: pa.Table
    forecasts: pa.Table
    series: pa.Table


def scenario_key(scenario: Scenario, series_id: str) -> SeriesKey:
    """The identity columns and partition of the rows of the series `series_id` of `scenario`."""
    s = scenario
    return SeriesKey(
        s.hardware_name, s.scaling_name, s.batch_law_name, s.duration_s, series_id, s.year_s
    )


def series_key(outcome: SeriesOutcome) -> SeriesKey:
    """The identity columns and partition of an evaluated series' rows."""
    return scenario_key(outcome.scenario, outcome.series_id)


def outcome_tables(
    outcome: SeriesOutcome, key: SeriesKey, provenance: Provenance
) -> tuple[pa.Table, pa.Table]:
    """The `points` rows and the `thresholds` row of one evaluated series."""
    cf = outcome.closed_forms
    thresholds = threshold_row(
        key,
        outcome.limits,
        n_points=len(outcome.points),
        alpha=cf.alpha,
        t_lat_s=cf.t_lat_s,
        t_crit_flop=cf.t_crit_flop,
        t_limit_flop=cf.t_limit_flop,
        provenance=provenance,
    )
    return point_rows(outcome.points, key, provenance), thresholds


def _override_value(value: Any) -> str:
    return value if isinstance(value, str) else canonical_json(value)


def overrides_json(overrides: Sequence[str] | None, sweep_point: str) -> str | None:
    """The `series.overrides` text: the run's overrides, then the sweep point as key=value.

    E.g. ``["hardware=a100_sxm","batch=critical","hardware.hbm_bandwidth_gb_per_s=2000"]``;
    None when the run's overrides are unknown.
    """
    if overrides is None:
        return None
    point = json.loads(sweep_point)
    entries = [*overrides, *(f"{k}={_override_value(v)}" for k, v in point.items())]
    return canonical_json(entries)


def series_tables(
    outcome: SeriesOutcome,
    provenance: Provenance,
    forecast: ForecastSettings,
    *,
    sweep_point: str = "{}",
    whole_grid: bool = False,
    overrides: Sequence[str] | None = None,
    moving: MovingFrontier | None = None,
) -> SeriesTables:
    """The points, thresholds, forecasts and series rows of one evaluated series.

    With `moving`, its moving frontier, the forecasts carry the moving-frontier years.
    """
    key = series_key(outcome)
    cf = outcome.closed_forms
    forecasts = forecast_rows(
        key, outcome.limits, cf.t_crit_flop, cf.t_limit_flop, forecast, provenance, moving
    )
    points, thresholds = outcome_tables(outcome, key, provenance)
    series = series_row(
        outcome.scenario,
        key,
        whole_grid=whole_grid,
        sweep_point=sweep_point,
        provenance=provenance,
        overrides=overrides_json(overrides, sweep_point),
    )
    return SeriesTables(points, thresholds, forecasts, series)


def write_tables(root: Path, key: SeriesKey, tables: SeriesTables) -> None:
    """Write one series' forecasts, series, points and thresholds parts, each atomically.

    Thresholds last: resumption counts a series as done once its thresholds part exists.
    """
    write_part(root, "forecasts", tables.forecasts, key.partition, key.series_id)
    write_series(
        root,
        tables.points,
        tables.thresholds,
        key.partition,
        key.series_id,
        series=tables.series,
    )


def write_frontier(
    root: Path, key: SeriesKey, moving: MovingFrontier, provenance: Provenance
) -> None:
    """Write one base series' `frontier` part (before its thresholds: resumption's marker)."""
    write_part(
        root, "frontier", frontier_rows(key, moving, provenance), key.partition, key.series_id
    )


def write_outcome(
    root: Path,
    outcome: SeriesOutcome,
    provenance: Provenance,
    forecast: ForecastSettings,
    *,
    sweep_point: str = "{}",
    whole_grid: bool = False,
    overrides: Sequence[str] | None = None,
) -> SeriesTables:
    """Build one series' tables (`series_tables`), write them (`write_tables`), return them."""
    tables = series_tables(
        outcome,
        provenance,
        forecast,
        sweep_point=sweep_point,
        whole_grid=whole_grid,
        overrides=overrides,
    )
    write_tables(root, series_key(outcome), tables)
    return tables
