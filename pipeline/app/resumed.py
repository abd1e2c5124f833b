"""The rows of series a resumed run skips, read back from their own part files.

A skipped series is complete in the dataset (`pipeline.sweep.resume`), so its part paths are
known from its key alone; only those files are opened. Partition columns, which the files do
not store, are put back from the key, so the rows have the table's full schema.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.execute.series import ClosedForms
from pipeline.io.columns import PARTITION_COLUMNS, TABLES
from pipeline.io.parquet import part_path
from pipeline.io.rows import SeriesKey
from pipeline.model.results import SeriesLimits


def read_parts(root: Path, table_name: str, keys: Sequence[SeriesKey]) -> pa.Table:
    """The rows of `table_name` of the series `keys`, in that order, with the table's schema.

    A column the file lacks (a part written before a nullable column existed) is null.
    """
    schema = TABLES[table_name]
    pieces = []
    for key in keys:
        data = pq.read_table(part_path(root, table_name, key.partition, key.series_id))
        columns = []
        for field in schema:
            if field.name in PARTITION_COLUMNS:
                columns.append(pa.array([key.partition[field.name]] * len(data), field.type))
            elif field.name in data.column_names:
                columns.append(data.column(field.name).cast(field.type))
            else:
                columns.append(pa.nulls(len(data), field.type))
        pieces.append(pa.Table.from_arrays(columns, schema=schema))
    return pa.concat_tables(pieces) if pieces else schema.empty_table()


def _flop_or_inf(value: Any) -> float:
    """A closed-form limit as computed: null in the table stands for a non-finite value."""
    return math.inf if value is None else float(value)


def limits_of(row: dict[str, Any]) -> tuple[SeriesLimits, ClosedForms, int]:
    """A `thresholds` row as the limits, closed forms and point count it was written from."""
    limits = SeriesLimits(**{f.name: row.get(f.name) for f in dataclasses.fields(SeriesLimits)})
    closed = ClosedForms(
        float(row["alpha"]),
        float(row["t_lat_s"]),
        _flop_or_inf(row["t_crit_flop"]),
        _flop_or_inf(row["t_limit_flop"]),
    )
    return limits, closed, int(row["n_points"])
