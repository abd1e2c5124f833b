"""The one table registry: every table of a dataset, with how it is laid out, written and read.

Each `TableSpec` gives a table's Arrow schema (from `pipeline.io.columns`), its layout (hive
partitions or none), its sort keys, the column naming its parts, and what one row is. Everything
that lists tables is derived from `TABLES`: the writer (`pipeline.app.write`: one part per
table, in registry order, the last per-series table the completion marker), the reader
(`pipeline.io.read`), the series index (`pipeline.io.parts`), gather, the BI views, the report,
and `pipeline.run`'s `Result` (one frame per table, under the table's name).

Adding a table is one `TableSpec` here (its columns in `pipeline.io.columns`, listed in
docs/schema.md) plus its row builder: `pipeline.app.write.series_rows` for a per-series table,
`pipeline.app.write.run_tables` for a per-run table (docs/architecture.md, "Adding code").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum

import pyarrow as pa

from pipeline.io.columns import (
    ADDED_IN,
    ADDED_IN_TABLE,
    FORECASTS_SCHEMA,
    FRONTIER_SCHEMA,
    OBSERVED_RUNS_SCHEMA,
    PARTITION_COLUMNS,
    POINTS_SCHEMA,
    REALITY_SCHEMA,
    SCHEMA_VERSION,
    SERIES_SCHEMA,
    SOURCE_REJECTS_SCHEMA,
    SOURCES_SCHEMA,
    THRESHOLDS_SCHEMA,
    TRENDS_SCHEMA,
    UNCERTAINTY_SCHEMA,
)


class Scope(StrEnum):
    """What a table's rows belong to, which decides how they are laid out and written."""

    SERIES = "series"
    """Rows of one series each: hive-partitioned by `PARTITION_COLUMNS`
    (ROOT/<table>/hardware=H/scaling=S/batch_law=B/part-<key>.parquet), written in batches of
    series, a part keyed by its series ids; resumption removes and rewrites a series' rows."""
    RUN = "run"
    """Rows describing a run's inputs, not its series: ROOT/<table>/part-<key>.parquet, without
    partitions, written once per run; the same inputs give the same part."""


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One table of the dataset: everything about it but its rows (module docstring)."""

    name: str
    """Directory name under a dataset root, view name, and `Result` attribute."""
    schema: pa.Schema
    """Every column in order, partition columns included (docs/schema.md lists them)."""
    scope: Scope
    sort_keys: tuple[str, ...]
    """The deterministic row order: of a part, of a frame read back, of a `Result` frame."""
    part_key_column: str
    """The column whose distinct values name a part (`pipeline.io.parquet.part_key`)."""
    rows: str
    """What one row is, in a phrase ("one per ..."): view comments and docs."""
    every_series: bool = False
    """Every series has rows in it, whatever the run's settings: a dataset directory holding
    series but no part of this table lacks it (`read.missing_tables`), and a series is done
    only with rows here (`pipeline.sweep.resume.DONE_TABLES`), so resuming restores it."""

    @property
    def partitioned(self) -> bool:
        """Whether the table is hive-partitioned by `PARTITION_COLUMNS`."""
        return self.scope is Scope.SERIES

    @property
    def partition_columns(self) -> tuple[str, ...]:
        """The hive partition keys of the table, outermost first (none when unpartitioned)."""
        return PARTITION_COLUMNS if self.partitioned else ()


TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "forecasts",
        FORECASTS_SCHEMA,
        Scope.SERIES,
        ("series_id", "growth_per_year", "trajectory"),
        "series_id",
        "one per series and compute trajectory (fitted, hand-set): the years limits are "
        "reached, with intervals",
        every_series=True,
    ),
    TableSpec(
        "frontier",
        FRONTIER_SCHEMA,
        Scope.SERIES,
        ("series_id", "year"),
        "series_id",
        "one per series and projected year: its limits on that year's hardware "
        "(only a run with a moving frontier)",
    ),
    TableSpec(
        "series",
        SERIES_SCHEMA,
        Scope.SERIES,
        ("series_id",),
        "series_id",
        "one per series: its scenario in SI units, sweep point and overrides",
        every_series=True,
    ),
    TableSpec(
        "points",
        POINTS_SCHEMA,
        Scope.SERIES,
        ("series_id", "d_model"),
        "series_id",
        "one per evaluated model size of each series, feasible or not",
        every_series=True,
    ),
    TableSpec(
        "thresholds",
        THRESHOLDS_SCHEMA,
        Scope.SERIES,
        ("series_id",),
        "series_id",
        "one per series: linear-scaling end, latency wall, closed forms",
        every_series=True,
    ),
    TableSpec(
        "trends",
        TRENDS_SCHEMA,
        Scope.RUN,
        ("catalog_hash", "metric"),
        "catalog_hash",
        "one per catalog metric: its growth against release year "
        "(only a run with a moving frontier)",
    ),
    TableSpec(
        "sources",
        SOURCES_SCHEMA,
        Scope.RUN,
        ("source",),
        "content_hash",
        "one per observed-data source a run read: where from, the copy's hash, age, stale or not",
    ),
    TableSpec(
        "observed_runs",
        OBSERVED_RUNS_SCHEMA,
        Scope.RUN,
        ("publication_date", "model", "line"),
        "fit_hash",
        "one per usable training run of the frontier-runs source and fit (fit_hash), and "
        "whether it defines that fit's frontier",
    ),
    TableSpec(
        "source_rejects",
        SOURCE_REJECTS_SCHEMA,
        Scope.RUN,
        ("source", "line"),
        "content_hash",
        "one per source row that could not be used, with its reason",
    ),
    TableSpec(
        "reality",
        REALITY_SCHEMA,
        Scope.RUN,
        ("physics", "publication_date", "model", "line"),
        "content_hash",
        "one per physics and observed run that states its compute, accelerator, count and "
        "hours: the model's smallest cluster for it, and whether it contradicts the run",
    ),
    TableSpec(
        "uncertainty",
        UNCERTAINTY_SCHEMA,
        Scope.RUN,
        ("limit", "input"),
        "design_hash",
        "one per limit and uncertain input: the limit year's distribution over the model's "
        "inputs and the input's variance share (only a run with forecast.uncertainty)",
    ),
)
"""Every table, in write order. A batch of series is written one part per per-series table in
this order, and the last per-series table (`COMPLETION_MARKER`) is written last: a series with
rows there has its rows in every other table, which resumption (`pipeline.sweep.resume`) relies
on. Per-run tables are written before the run's series."""

BY_NAME: dict[str, TableSpec] = {t.name: t for t in TABLES}
"""Every table by name."""

SERIES_TABLES: tuple[str, ...] = tuple(t.name for t in TABLES if t.scope is Scope.SERIES)
EVERY_SERIES_TABLES: tuple[str, ...] = tuple(t.name for t in TABLES if t.every_series)
"""The tables every series has rows in (`TableSpec.every_series`), in write order."""
"""The per-series (hive-partitioned) tables, in write order."""
RUN_SCOPE_TABLES: tuple[str, ...] = tuple(t.name for t in TABLES if t.scope is Scope.RUN)
"""The per-run (unpartitioned) tables, in write order."""
COMPLETION_MARKER = SERIES_TABLES[-1]
"""The per-series table written last in each batch (`thresholds`)."""
REMOVAL_ORDER: tuple[str, ...] = tuple(reversed(SERIES_TABLES))
"""The per-series tables in the order series are removed from them: the completion marker
first, so a removal cut short leaves incomplete series, which resumption redoes."""


def table_spec(name: str) -> TableSpec:
    """The registered table `name`; a ValueError naming the tables when there is none."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown table {name!r}; expected one of {sorted(BY_NAME)}") from None


@functools.cache
def file_schema(table_name: str) -> pa.Schema:
    """The schema stored inside a part file: the table's schema less its partition columns."""
    spec = table_spec(table_name)
    schema = spec.schema
    for name in spec.partition_columns:
        schema = schema.remove(schema.get_field_index(name))
    return schema


def columns_of(table_name: str, version: int = SCHEMA_VERSION) -> pa.Schema:
    """The columns stored in a part of `table_name` written with schema `version`: the file
    schema less the columns added after `version` (`columns.ADDED_IN_TABLE`, `columns.ADDED_IN`)."""
    schema = file_schema(table_name)
    added = {n: ADDED_IN_TABLE.get((table_name, n), ADDED_IN.get(n, 1)) for n in schema.names}
    for name in [n for n in schema.names if added[n] > version]:
        schema = schema.remove(schema.get_field_index(name))
    return schema
