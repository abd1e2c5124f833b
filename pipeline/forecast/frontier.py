"""The moving frontier of a run: each series on every year's projected hardware.

For a series whose hardware is a catalog GPU's preset as shipped (h100_sxm, ...), `frontier_scenarios`
builds the same scenario on that GPU projected to each year of `forecast.moving_frontier_years`
(`pipeline.trends.project`, the catalog's fitted trends, no overrides).
`pipeline.app.frontier.run_frontiers` evaluates them and returns each base series'
`MovingFrontier`; the forecasts table then gets the moving years (`moving.moving_year`) and the
`frontier` table the thresholds (`frontier_dicts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pipeline.catalog import Catalog
from pipeline.identity import config_hash
from pipeline.io.rows import Provenance, SeriesKey
from pipeline.schema import Scenario
from pipeline.schema.projected import preset_spec, projected_name
from pipeline.trends.catalog_fits import CatalogTrends
from pipeline.trends.project import PROJECTED_METRICS, project_hardware

PROJECTED = "projected"
"""Prefix of the projected hardware's name, as `hardware=projected` gives it."""


@dataclass(frozen=True, slots=True)
class FrontierYear:
    """A base series evaluated on one year's projected hardware."""

    year: float
    hardware: str
    series_id: str
    peak_flop_per_s: float
    linear_end_flop: float | None
    last_feasible_flop: float | None
    first_infeasible_flop: float | None
    wall_flop: float | None
    """The year's wall, as the frozen forecasts' (`SeriesLimits.wall_flop`): the first size that
    is infeasible or runs below the utilization floor; None only at the end of the grid."""
    end_reason: str | None
    """How the year's series ended (`limits.SeriesEnd`): wall, utilization_collapse, end_of_grid."""
    linear_end_beyond_grid: bool | None = None
    """Whether the year's linear scaling outlasted its recorded points (`linear_end_flop` None
    with a feasible point), as `thresholds.linear_end_beyond_grid`
    (`limits.linear_end_beyond_grid`)."""


@dataclass(frozen=True, slots=True)
class MovingFrontier:
    """A base series' thresholds on the projected hardware of each year, ascending."""

    base_gpu: str
    catalog_hash: str
    years: tuple[FrontierYear, ...]


def frontier_scenarios(
    scenario: Scenario, years: Sequence[float], catalog: Catalog, trends: CatalogTrends
) -> list[Scenario]:
    """`scenario` on its GPU projected to each year.

    [] when the hardware is not a catalog preset as shipped: another preset, or one changed by an
    override or a sweep axis (a sensitivity sweep would otherwise project every axis point).
    """
    entry = catalog.by_preset(scenario.hardware_name)
    if entry is None or not all(m in trends.fits for m in PROJECTED_METRICS):
        return []
    if scenario.hardware != preset_spec(scenario.hardware_name):
        return []
    growth = {m: trends.fits[m].growth_per_year for m in PROJECTED_METRICS}
    out = []
    for year in years:
        name = projected_name(PROJECTED, scenario.hardware_name, year)
        hw = project_hardware(scenario.hardware, entry.release_year, year, growth, name)
        out.append(replace(scenario, hardware=hw, hardware_name=name))
    return out


def frontier_dicts(
    key: SeriesKey, frontier: MovingFrontier, provenance: Provenance
) -> list[dict[str, Any]]:
    """The `frontier` rows of one base series: one per projected year."""
    return [
        {
            **key.columns(),
            "year": y.year,
            "projected_hardware": y.hardware,
            "projected_series_id": y.series_id,
            "catalog_hash": frontier.catalog_hash,
            "peak_flop_per_s": y.peak_flop_per_s,
            "linear_end_flop": y.linear_end_flop,
            "last_feasible_flop": y.last_feasible_flop,
            "first_infeasible_flop": y.first_infeasible_flop,
            "wall_flop": y.wall_flop,
            "end_reason": y.end_reason,
            "linear_end_beyond_grid": y.linear_end_beyond_grid,
            "run_id": provenance.run_id,
            "config_hash": config_hash({"series_id": key.series_id, "year": y.year}),
            "schema_version": int(provenance.schema_version),
            "dmlimits_version": provenance.dmlimits_version,
            "created_at": provenance.created_at,
        }
        for y in frontier.years
    ]
