"""Reading the tables of a dataset directory: a plain root, or one dated partition of a nightly root.

polars reads hive keys from the whole path of each file, not only below the scanned directory,
so the run_date=D directory of a dated partition (or any key=value directory above a root)
must be declared in the hive schema too; `read_table` declares them as strings and drops them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from pipeline.io.columns import RUN_TABLES, SORT_KEYS
from pipeline.io.dataset import HIVE_SCHEMA, part_files
from pipeline.nightly.partition import date_dir, run_dates


def latest_dataset_dir(root: Path) -> Path:
    """The newest dated partition of a nightly root, or `root` itself when it has none."""
    dates = run_dates(root)
    return date_dir(root, dates[-1]) if dates else root


def read_table(
    directory: Path, table_name: str, columns: Sequence[str] | None = None
) -> pl.DataFrame | None:
    """One table of a dataset directory, sorted, or None when the directory has none of its parts.

    The columns are `columns` if given, else those of the table's schema in
    `pipeline.io.columns.RUN_TABLES`, in order (for a table not declared there: those its files
    hold, plus the partition columns).
    """
    if not part_files(directory, table_name):
        return None
    above = {
        part.split("=", 1)[0]: pl.String()
        for part in directory.resolve().parts
        if "=" in part and part.split("=", 1)[0] not in HIVE_SCHEMA
    }
    frame = pl.scan_parquet(
        str(directory / table_name / "**" / "*.parquet"),
        hive_partitioning=True,
        hive_schema={**above, **HIVE_SCHEMA},
    )
    if columns is not None:
        names = list(columns)
    elif table_name in RUN_TABLES:
        names = RUN_TABLES[table_name].names
    else:
        names = [n for n in frame.collect_schema().names() if n not in above]
    keys = [k for k in SORT_KEYS.get(table_name, ("series_id",)) if k in names]
    return frame.select(names).sort(keys).collect()
