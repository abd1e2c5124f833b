"""Evaluated series as rows, rows of many series as tables, and writing them into the dataset.

Each finished series becomes its rows as dicts, one list per per-series table of the registry
(`series_rows`, cheap); a batch of series of one partition becomes one Arrow table per table
(`tables_of`), which is written as one part per table (`write_batch`) or kept in memory
(`pipeline.run(write=False)`): the API's frames and the Parquet parts hold the same rows. A
run's per-run tables (`run_tables`: the trends its moving frontier used, the observed data it
read) are written once (`write_run_tables`).

The tables themselves (names, schemas, write order) are `pipeline.io.tables.TABLES`; this
module holds their row builders: a per-series table's in `series_rows`, a per-run table's in
`run_tables`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa

from pipeline.execute.series import SeriesOutcome
from pipeline.forecast import ForecastSettings, forecast_dicts
from pipeline.forecast.frontier import MovingFrontier, frontier_dicts
from pipeline.forecast.observed import ObservedFrontier
from pipeline.forecast.reality import observed_reality_dicts
from pipeline.identity import canonical_json
from pipeline.io.lock import flush_lock
from pipeline.io.parquet import write_parts, write_run_parts
from pipeline.io.parts import SeriesIndex, partition_key
from pipeline.io.rows import (
    Provenance,
    SeriesKey,
    point_dicts,
    series_dict,
    table_from_rows,
    threshold_dict,
)
from pipeline.io.tables import RUN_SCOPE_TABLES, SERIES_TABLES, table_spec
from pipeline.io.trends import trend_rows
from pipeline.schema import Scenario
from pipeline.sources.rows import observed_run_dicts, reject_dicts, source_dicts
from pipeline.trends.catalog_fits import CatalogTrends

Tables = dict[str, pa.Table]
"""Rows of some tables of the dataset, by table name, each with its registered schema."""


def scenario_key(scenario: Scenario, series_id: str) -> SeriesKey:
    """The identity columns and partition of the rows of the series `series_id` of `scenario`."""
    s = scenario
    return SeriesKey(
        s.hardware_name, s.scaling_name, s.batch_law_name, s.duration_s, series_id, s.year_s
    )


def series_key(outcome: SeriesOutcome) -> SeriesKey:
    """The identity columns and partition of an evaluated series' rows."""
    return scenario_key(outcome.scenario, outcome.series_id)


def threshold_of(outcome: SeriesOutcome, key: SeriesKey, provenance: Provenance) -> dict[str, Any]:
    """The `thresholds` row of one evaluated series: its limits and closed forms."""
    cf = outcome.closed_forms
    return threshold_dict(
        key,
        outcome.limits,
        n_points=len(outcome.points),
        alpha=cf.alpha,
        t_lat_s=cf.t_lat_s,
        t_crit_flop=cf.t_crit_flop,
        t_limit_flop=cf.t_limit_flop,
        provenance=provenance,
        model_b_inputs=(cf.duration_s, cf.b0_tokens, cf.tokens_per_param),
    )


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


class SeriesRows(NamedTuple):
    """One evaluated series' rows as dicts, per table, with its key: cheap to make per series,
    made into Arrow tables per batch (`tables_of`)."""

    key: SeriesKey
    tables: dict[str, list[dict[str, Any]]]
    """Per-series table name -> the series' rows (`frontier` empty unless the series is a base
    of the run's moving frontier)."""


def series_rows(
    outcome: SeriesOutcome,
    provenance: Provenance,
    forecast: ForecastSettings,
    *,
    sweep_point: str = "{}",
    whole_grid: bool = False,
    overrides: Sequence[str] | None = None,
    moving: MovingFrontier | None = None,
) -> SeriesRows:
    """The points, thresholds, forecasts, series (and frontier) rows of one evaluated series.

    With `moving`, its moving frontier, the forecasts carry the moving-frontier years and the
    series has `frontier` rows.
    """
    key = series_key(outcome)
    cf = outcome.closed_forms
    threshold = threshold_of(outcome, key, provenance)
    series = series_dict(
        outcome.scenario,
        key,
        whole_grid=whole_grid,
        sweep_point=sweep_point,
        provenance=provenance,
        overrides=overrides_json(overrides, sweep_point),
    )
    rows = {
        "forecasts": forecast_dicts(
            key, outcome.limits, cf.t_crit_flop, cf.t_limit_flop, forecast, provenance, moving
        ),
        "frontier": [] if moving is None else frontier_dicts(key, moving, provenance),
        "series": [series],
        "points": point_dicts(outcome.points, key, provenance),
        "thresholds": [threshold],
    }
    return SeriesRows(key, rows)


def tables_of(batch: Sequence[SeriesRows]) -> Tables:
    """Every per-series table of a batch of series, in write order: each table's rows over the
    batch's series, in batch order (the same rows as each series' tables concatenated)."""
    return {
        name: table_from_rows(
            [row for rows in batch for row in rows.tables[name]], table_spec(name).schema
        )
        for name in SERIES_TABLES
    }


def write_batch(root: Path, batch: Sequence[SeriesRows], index: SeriesIndex) -> Tables:
    """Write a batch of series of one partition as one part per table, in write order
    (`pipeline.io.tables.TABLES`: thresholds last, the completion marker).

    Under the root's `flush_lock`: the partition's parts are re-indexed (another run may have
    written some), the batch's series are removed from any part holding them, then the batch's
    parts are written and recorded in `index`. So no series has rows in two parts of a table,
    and old rows of a series stay readable until its new ones are written. Returns the batch's
    tables.
    """
    partitions = {partition_key(rows.key.partition) for rows in batch}
    if len(partitions) != 1:
        raise ValueError(f"a batch is written into one partition, got {sorted(partitions)}")
    (partition,) = partitions
    tables = tables_of(batch)
    ordered = list(tables.items())
    with flush_lock(root):
        index.refresh(partition)
        index.remove([rows.key.series_id for rows in batch])
        paths = write_parts(root, ordered, batch[0].key.partition)
        for (name, table), path in zip([o for o in ordered if o[1].num_rows], paths, strict=True):
            index.record(name, path, table.column("series_id").to_pylist())
    return tables


def run_tables(
    trends: CatalogTrends | None,
    observed: ObservedFrontier | None,
    provenance: Provenance,
    *,
    reality: bool = False,
) -> Tables:
    """Every per-run table of a run, by name: `trends`, the catalog trends its moving frontier
    projected hardware along (none without a moving frontier: `trends` None), and the observed
    data it read (`sources`, `observed_runs`, one part per fit: `ObservedFrontier.fit_hash`;
    `source_rejects`; none without `observed`), and
    with `reality` (`forecast.reality`) the model's answer to each run that says how it was
    trained (`reality`). A table with no rows (no rejects) is left out."""
    rows: dict[str, pa.Table] = {}
    if trends is not None:
        rows["trends"] = trend_rows(trends, provenance)
    if observed is not None:
        found = observed.observations
        fit = observed.fit_hash
        runs = [] if fit is None else observed_run_dicts(found, observed.frontier, fit, provenance)
        for name, dicts in (
            ("sources", source_dicts(found, provenance)),
            ("observed_runs", runs),
            ("source_rejects", reject_dicts(found, provenance)),
            ("reality", observed_reality_dicts(found, provenance) if reality else []),
        ):
            if dicts:
                rows[name] = table_from_rows(dicts, table_spec(name).schema)
    return {name: rows[name] for name in RUN_SCOPE_TABLES if name in rows}


def write_run_tables(root: Path, tables: Tables) -> list[Path]:
    """Write each per-run table that has rows as one part (`pipeline.io.parquet.write_run_parts`),
    in order; return the paths written."""
    return write_run_parts(
        root, [(name, table) for name, table in tables.items() if table.num_rows]
    )
