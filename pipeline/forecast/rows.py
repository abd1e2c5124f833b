"""One series' `forecasts` rows: the year each of its limits is reached, per trajectory.

Columns are `pipeline.io.columns.FORECASTS_SCHEMA`; docs/schema.md explains each. A row's
`config_hash` hashes its scenario: the series (by `series_id`) plus the trajectory.
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa

from pipeline.catalog.load import fractional_year
from pipeline.forecast.frontier import MovingFrontier
from pipeline.forecast.inputs import trajectories
from pipeline.forecast.null_years import year_null_reasons
from pipeline.forecast.paths import Trajectory, YearInterval, hand_set_name, is_threshold
from pipeline.forecast.record import ObservedRecord
from pipeline.forecast.settings import ForecastSettings
from pipeline.identity import config_hash
from pipeline.io.columns import FORECAST_YEARS, FORECASTS_SCHEMA
from pipeline.io.rows import Provenance, SeriesKey, table_from_rows
from pipeline.model.records.results import SeriesLimits

MOVING_THRESHOLDS = (
    ("moving_linear_end_year", "linear_end_flop"),
    ("moving_wall_year", "wall_flop"),  # the frozen forecasts' wall: a collapse is one
)
"""Each moving year column and the `frontier.FrontierYear` threshold it reaches."""


def forecast_config_hash(
    series_id: str, growth: float, base_flop: float, base_year: float, trajectory: str | None = None
) -> str:
    """The scenario of one forecast row: its series' config plus the compute trajectory."""
    scenario: dict[str, Any] = {
        "series_id": series_id,
        "growth_per_year": float(growth),
        "base_flop": float(base_flop),
        "base_year": float(base_year),
    }
    if trajectory is not None and trajectory != hand_set_name(growth):
        scenario["trajectory"] = trajectory  # hand-set rows keep their hash of version 2
    return config_hash(scenario)


def forecast_rows(
    series: SeriesKey,
    limits: SeriesLimits,
    t_crit_flop: float | None,
    t_limit_flop: float | None,
    settings: ForecastSettings,
    provenance: Provenance,
    moving: MovingFrontier | None = None,
) -> pa.Table:
    """The `forecasts` rows of one series as a table (`forecast_dicts`)."""
    rows = forecast_dicts(series, limits, t_crit_flop, t_limit_flop, settings, provenance, moving)
    return table_from_rows(rows, FORECASTS_SCHEMA)


def _years(column: str, interval: YearInterval | None) -> dict[str, float | None]:
    """`column`, `column_low`, `column_high` of one threshold (+inf, beyond the grid, as null)."""
    if interval is None:
        return {column: None, f"{column}_low": None, f"{column}_high": None}
    return {
        column: interval.median,
        f"{column}_low": interval.low,
        f"{column}_high": interval.high if math.isfinite(interval.high) else None,
    }


def years_between(
    row: dict[str, Any], before_year: float, after_year: float, skip: frozenset[str] = frozenset()
) -> str:
    """The year columns of a row, but `skip`, whose year lies in [`after_year`,
    `before_year`), comma-separated."""
    return ",".join(
        c
        for c in FORECAST_YEARS
        if c not in skip and row.get(c) is not None and after_year <= row[c] < before_year
    )


def _reached_years(
    record: ObservedRecord,
    thresholds: dict[str, float | None],
    moving: MovingFrontier | None,
) -> dict[str, float]:
    """The year columns whose threshold the observed runs reached, each with the date of the
    first run at or above it (`record.ObservedRecord`; a moving one on each year's threshold)."""
    reached = {c: record.year_reached(flop) for c, flop in thresholds.items()}
    if moving is not None:
        grid = [y.year for y in moving.years]
        for column, attr in MOVING_THRESHOLDS:
            flops = [getattr(y, attr) for y in moving.years]
            reached[column] = record.moving_year_reached(grid, flops)
    return {c: y for c, y in reached.items() if y is not None}


def forecast_dicts(
    series: SeriesKey,
    limits: SeriesLimits,
    t_crit_flop: float | None,
    t_limit_flop: float | None,
    settings: ForecastSettings,
    provenance: Provenance,
    moving: MovingFrontier | None = None,
) -> list[dict[str, Any]]:
    """The `forecasts` rows of one series: one per trajectory (`inputs.trajectories`), the
    fitted one first, then the hand-set growth factors ascending.

    Each `*_year` is the median fractional year the trajectory's lines reach the matching
    threshold (`paths.Trajectory.year_intervals`), with its interval; null where the threshold is
    null or not finite. The `moving_*` years come from `moving` (`moving.moving_year` per line),
    null without it; `moving_projected` says which (`moving` is the series' moving frontier,
    None where the run projected no hardware or not this series'). A threshold the runs the fit could see reached (at or below the largest
    published by `data_as_of`, the fit's) is a fact on every trajectory's row: its year, low and
    high are the date of the first run at or above it, and it is listed in `already_passed`
    (docs/sources.md §5); without a fit the record is every run of the source. With no observed
    runs a year before a hand-set `base_year` is listed there (below the scenario's own C_0). A
    year of any other threshold from `data_as_of` (else `base_year`) to before the run date is
    listed in `passed_by_run_date` (null when the settings have no run date). Every row of a
    run that fitted the frontier names the fit in `fit_hash` (`ObservedFrontier.forecast_fit_hash`:
    its fitted line, and each row's `data_as_of` and `already_passed`, rest on it), the key of the
    `observed_runs` rows it was fitted to; null without a fit.
    """
    thresholds = {
        "linear_end_year": limits.linear_end_flop,
        "last_feasible_year": limits.last_feasible_flop,
        "wall_year": limits.wall_flop,
        "t_crit_year": t_crit_flop,
        "t_limit_year": t_limit_flop,
    }
    observed = settings.observed
    as_of = observed.data_as_of if observed is not None else None
    hashes = observed.observations.hashes or None if observed is not None else None
    record = observed.record if observed is not None else None
    fit = observed.forecast_fit_hash if observed is not None else None
    reached = {} if record is None else _reached_years(record, thresholds, moving)
    reached_columns = ",".join(c for c in FORECAST_YEARS if c in reached)
    without = moving_without_threshold(moving)
    beyond = moving is not None and all(y.linear_end_beyond_grid for y in moving.years)
    rows: list[dict[str, Any]] = []
    for path in trajectories(settings):
        years: dict[str, float | None] = {}
        intervals = path.year_intervals(list(thresholds.values()))
        for column, interval in zip(thresholds, intervals, strict=True):
            years |= _years(column, interval)
        years |= _moving_years(moving, path)
        for column, year in reached.items():
            years |= _years(column, YearInterval(year, year, year))
        passed = (  # with nothing observed: below the hand-set scenario's own C_0
            reached_columns
            if record is not None
            else years_between(years, path.base_year, -math.inf)
        )
        passed_before = fractional_year(as_of) if as_of is not None else path.base_year
        run_date = settings.run_date
        passed_by_run = (
            None
            if run_date is None
            else years_between(
                years, fractional_year(run_date), passed_before, frozenset(passed.split(","))
            )
        )
        rows.append(
            {
                **series.columns(),
                "growth_per_year": path.growth_per_year,
                "base_flop": path.base_flop,
                "base_year": path.base_year,
                **years,
                "trajectory": path.name,
                "growth_per_year_low": path.growth_per_year_low,
                "growth_per_year_high": path.growth_per_year_high,
                "already_passed": passed,
                "data_as_of": as_of,
                "passed_by_run_date": passed_by_run,
                "forecast_date": run_date,
                "moving_without_threshold": without,
                "moving_projected": moving is not None,
                "fit_hash": fit,
                "year_null_reasons": year_null_reasons(
                    years,
                    thresholds,
                    limits,
                    tuple(c for c, _ in MOVING_THRESHOLDS),
                    moving is not None,
                    without,
                    beyond,
                ),
                "source_hashes": hashes,
                "run_id": provenance.run_id,
                "config_hash": forecast_config_hash(
                    series.series_id,
                    path.growth_per_year,
                    path.base_flop,
                    path.base_year,
                    path.name,
                ),
                "schema_version": int(provenance.schema_version),
                "dmlimits_version": provenance.dmlimits_version,
                "created_at": provenance.created_at,
            }
        )
    return rows


def moving_without_threshold(moving: MovingFrontier | None) -> str | None:
    """The `moving_*` year columns none of whose projected years' series has the threshold on
    its grid (`paths.is_threshold`), comma-separated ("" for none): null on every line because
    there is nothing to reach, not because the lines fall short of it; None without `moving`."""
    if moving is None:
        return None
    return ",".join(
        column
        for column, attr in MOVING_THRESHOLDS
        if not any(is_threshold(getattr(y, attr)) for y in moving.years)
    )


def _moving_years(moving: MovingFrontier | None, path: Trajectory) -> dict[str, float | None]:
    """moving_linear_end_year and moving_wall_year of one trajectory, with intervals (null
    without `moving`)."""
    out: dict[str, float | None] = {}
    for column, attr in MOVING_THRESHOLDS:
        interval = None
        if moving is not None:
            grid = [y.year for y in moving.years]
            interval = path.moving_interval(grid, [getattr(y, attr) for y in moving.years])
        out |= _years(column, interval)
    return out
