"""One series' tables and parts, built and written by hand: what the package does in batches.

The package builds rows as dicts and writes a batch of series as one part per table
(`pipeline.app.write`); tests that look at one series, one table or one part use these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.app.write import Tables, series_key, series_rows, tables_of, threshold_of
from pipeline.execute.series import SeriesOutcome
from pipeline.forecast import ForecastSettings
from pipeline.forecast.frontier import MovingFrontier
from pipeline.io.columns import POINTS_SCHEMA, SERIES_SCHEMA, THRESHOLDS_SCHEMA
from pipeline.io.parquet import write_parts
from pipeline.io.read import table_parts
from pipeline.io.rows import (
    Provenance,
    SeriesKey,
    point_dicts,
    series_dict,
    table_from_rows,
    threshold_dict,
)
from pipeline.model.records.results import PointResult, SeriesLimits
from pipeline.schema import Scenario


def write_part(
    root: Path | str,
    table_name: str,
    table: pa.Table,
    partition: Mapping[str, str],
    key: str | None = None,
) -> Path:
    """One part of `table_name` holding `table`, written as the run writes a batch
    (`write_parts`); its path."""
    (path,) = write_parts(root, [(table_name, table)], partition, key)
    return path


def point_rows(
    points: Sequence[PointResult], series: SeriesKey, provenance: Provenance
) -> pa.Table:
    """The `points` rows of one series as a table, sorted by d_model."""
    return table_from_rows(point_dicts(points, series, provenance), POINTS_SCHEMA)


def threshold_row(series: SeriesKey, limits: SeriesLimits, **values: Any) -> pa.Table:
    """The one `thresholds` row of a series as a table (`values`: those of `threshold_dict`)."""
    return table_from_rows([threshold_dict(series, limits, **values)], THRESHOLDS_SCHEMA)


def series_row(scenario: Scenario, series: SeriesKey, **values: Any) -> pa.Table:
    """The one `series` row of a series as a table (`values`: those of `series_dict`)."""
    return table_from_rows([series_dict(scenario, series, **values)], SERIES_SCHEMA)


def outcome_tables(outcome: SeriesOutcome, provenance: Provenance) -> tuple[pa.Table, pa.Table]:
    """The `points` rows and the `thresholds` row of one evaluated series."""
    key = series_key(outcome)
    thresholds = table_from_rows([threshold_of(outcome, key, provenance)], THRESHOLDS_SCHEMA)
    return point_rows(outcome.points, key, provenance), thresholds


def series_tables(
    outcome: SeriesOutcome,
    provenance: Provenance,
    forecast: ForecastSettings,
    *,
    moving: MovingFrontier | None = None,
) -> Tables:
    """Every per-series table of one evaluated series, as the writer builds a batch of one."""
    return tables_of([series_rows(outcome, provenance, forecast, moving=moving)])


def write_series(
    root: Path | str,
    points: pa.Table,
    thresholds: pa.Table,
    partition: Mapping[str, str],
    series_id: str,
) -> tuple[Path, Path]:
    """Write one series' `points` then `thresholds` part, keyed by its series_id (as every part
    of a version-1 dataset); return their paths."""
    points_path = write_part(root, "points", points, partition, series_id)
    thresholds_path = write_part(root, "thresholds", thresholds, partition, series_id)
    return points_path, thresholds_path


def part_files(directory: Path | str, table_name: str) -> list[Path]:
    """The part files of a table, sorted by path (by name and place; contents not checked)."""
    return list(table_parts(Path(directory), table_name).parts)


SPLIT_PART = "part-00000000deadbeef.parquet"
"""The name `split_part` copies a part under: one the writer could make, no writer made."""


def split_part(directory: Path | str, table_name: str) -> Path:
    """Copy the first part of a table of a dataset directory under another part name beside it:
    its series then have rows in two parts, as when `cp -rn A/* B/` merges two roots that hold
    the same series in differently named parts. Returns the copy."""
    first = part_files(directory, table_name)[0]
    copy = first.with_name(SPLIT_PART)
    copy.write_bytes(first.read_bytes())
    return copy
