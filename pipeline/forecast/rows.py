"""One series' `forecasts` rows: the year each of its limits is reached, per growth scenario.

Columns are `pipeline.io.columns.FORECASTS_SCHEMA`; docs/schema.md explains each. A row's
`config_hash` hashes its scenario: the series (by `series_id`) plus the trajectory.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from pipeline.forecast.frontier import MovingFrontier
from pipeline.forecast.moving import moving_year
from pipeline.forecast.settings import ForecastSettings
from pipeline.forecast.trajectory import year_reaching_flop
from pipeline.io.columns import FORECASTS_SCHEMA
from pipeline.io.rows import Provenance, SeriesKey, config_hash, table_from_rows
from pipeline.model.records.results import SeriesLimits


def forecast_config_hash(series_id: str, growth: float, base_flop: float, base_year: float) -> str:
    """The scenario of one forecast row: its series' config plus the compute trajectory."""
    return config_hash(
        {
            "series_id": series_id,
            "growth_per_year": float(growth),
            "base_flop": float(base_flop),
            "base_year": float(base_year),
        }
    )


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


def forecast_dicts(
    series: SeriesKey,
    limits: SeriesLimits,
    t_crit_flop: float | None,
    t_limit_flop: float | None,
    settings: ForecastSettings,
    provenance: Provenance,
    moving: MovingFrontier | None = None,
) -> list[dict[str, Any]]:
    """The `forecasts` rows of one series, one per growth factor in `settings`, ascending.

    Each `*_year` is the fractional year the trajectory reaches the matching threshold
    (`trajectory.year_reaching_flop`); null where the threshold is null or not finite. The
    `moving_*` years come from `moving` (`moving.moving_year`), null without it.
    """
    thresholds = {
        "linear_end_year": limits.linear_end_flop,
        "last_feasible_year": limits.last_feasible_flop,
        "wall_year": limits.wall_flop,
        "t_crit_year": t_crit_flop,
        "t_limit_year": t_limit_flop,
    }
    rows: list[dict[str, Any]] = []
    for growth in sorted(settings.growth_per_year):
        rows.append(
            {
                **series.columns(),
                "growth_per_year": float(growth),
                "base_flop": settings.base_flop,
                "base_year": settings.base_year,
                **{
                    column: year_reaching_flop(flop, settings.base_flop, settings.base_year, growth)
                    for column, flop in thresholds.items()
                },
                **_moving_years(moving, settings, growth),
                "run_id": provenance.run_id,
                "config_hash": forecast_config_hash(
                    series.series_id, growth, settings.base_flop, settings.base_year
                ),
                "schema_version": int(provenance.schema_version),
                "dmlimits_version": provenance.dmlimits_version,
                "created_at": provenance.created_at,
            }
        )
    return rows


def _moving_years(
    moving: MovingFrontier | None, settings: ForecastSettings, growth: float
) -> dict[str, float | None]:
    """moving_linear_end_year and moving_wall_year of one growth factor (None without `moving`)."""
    if moving is None:
        return {"moving_linear_end_year": None, "moving_wall_year": None}
    years = [y.year for y in moving.years]
    return {
        column: moving_year(
            years,
            [getattr(y, attr) for y in moving.years],
            settings.base_flop,
            settings.base_year,
            growth,
        )
        for column, attr in (
            ("moving_linear_end_year", "linear_end_flop"),
            ("moving_wall_year", "first_infeasible_flop"),
        )
    }
