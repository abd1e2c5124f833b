"""The one dataset reader: only the parts the writer wrote, each checked against the schema.

A dataset directory holds one folder per table of the registry (`pipeline.io.tables`), laid
out as the writer lays it out (`pipeline.io.parquet`): a per-series table hive-partitioned,
a per-run table without partitions:

    DIR/<table>/hardware=H/scaling=S/batch_law=B/part-<hex id>.parquet
    DIR/<table>/part-<hex id>.parquet

A nightly root holds one such directory per date, `ROOT/run_date=YYYY-MM-DD/`.

What is read is decided file by file, from `pathlib` listings, never from a glob pattern, so a
root named `data[1]` or `data*` is that directory and no other:

- a partitioned table folder's entries must be `hardware=<name>`, then `scaling=<name>`, then
  `batch_law=<name>` folders, with names the writer could have made (`SAFE_NAME`);
- a partition folder's files must be named `part-<hex id>.parquet` (`PART_NAME`); the writer's
  temporary files (`.part-….tmp`) are listed apart as leftovers of interrupted writes;
- a part's stored schema must be the table's columns of the part's schema version, by name and
  Arrow type (`tables.columns_of`): a part of an older version lacks only the columns added
  since, which read as null; a missing, extra or retyped column, a file that does not open
  (truncated, not Parquet) or a version newer than this code refuses the part.

Everything else is skipped, and each skip is returned as a `Skipped` (path and reason) for the
caller to print: a copied part (`part-X (copy).parquet`), a foreign file, a backup folder
(`run_date=2025-01-01 (old)`) or a malformed date. Accepted parts are read by polars from
their literal paths with the table's declared schema, so parts never mix columns by guesswork.

The writer keeps each series in one part per per-series table (`pipeline.app.write`). A series
with rows in two accepted parts of one table of one dataset directory (two roots merged with
`cp -r`, a part copied under a new name) would be read twice, so `read_table` refuses that
table (`SplitSeriesError`), as `dmlimits-bi` does; `dmlimits-gather` lists every such series.
All three find them with `part_series`.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io.columns import PARTITION_COLUMNS, SCHEMA_VERSION
from pipeline.io.parquet import PART_NAME, TEMP_NAME, OutputError
from pipeline.io.tables import BY_NAME, EVERY_SERIES_TABLES, columns_of, file_schema, table_spec
from pipeline.schema.section import SAFE_NAME

if TYPE_CHECKING:
    import polars as pl

RUN_DATE_KEY = "run_date"
"""The partition key of a nightly root's dated directories."""
DATE_NAME = re.compile(rf"{RUN_DATE_KEY}=(?P<date>\d{{4}}-\d{{2}}-\d{{2}})")
NIGHTLY_ENTRIES = frozenset({".staging", ".replaced", "reports"})
"""Entries of a nightly root besides its dates (`pipeline.nightly.partition`)."""
SET_ASIDE_DIR = ".set_aside"
"""Parts a run set aside (`pipeline.io.heal`), at the top of a dataset root."""
SOURCE_STORE = "snapshots"
"""The folder of source copies a run keeps under a dataset or nightly root
(`pipeline.sources.store`); no table reader reads it."""
LOCK_PREFIX = ".dmlimits.lock"
"""The run lock and its helper files (`pipeline.io.lock`), at the top of any root."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file or folder a reader left out, and why."""

    path: Path
    reason: str
    damaged: bool = False
    """Named and placed as a part, but not a good one (others are files that are not parts)."""
    rows: int | None = None
    """The rows a skipped part holds by its Parquet footer (not read); None when unknown."""

    def __str__(self) -> str:
        if self.rows is None:
            return f"{self.path}: {self.reason}"
        return f"{self.path}: {self.reason} ({self.rows} rows not read)"


@dataclass(frozen=True, slots=True)
class TableParts:
    """The parts of one table in one dataset directory, as found on disk."""

    parts: tuple[Path, ...] = ()
    """Part files named and placed as the writer does, sorted (contents not yet checked)."""
    skipped: tuple[Skipped, ...] = ()
    """Entries that are neither parts nor partition folders."""
    temp_files: tuple[Path, ...] = ()
    """The writer's temporary files: leftovers of interrupted writes."""


@dataclass(frozen=True, slots=True)
class TableRead:
    """A table read back: its rows (None when no part was accepted) and what was left out."""

    frame: pl.DataFrame | None
    skipped: tuple[Skipped, ...] = ()
    parts: tuple[Path, ...] = field(default=())
    """The parts whose rows are in `frame`."""


def date_dir(root: Path, run_date: dt.date) -> Path:
    """ROOT/run_date=YYYY-MM-DD, the partition of one date."""
    return root / f"{RUN_DATE_KEY}={run_date.isoformat()}"


def parse_date_dir(name: str) -> dt.date | None:
    """The date of a `run_date=YYYY-MM-DD` folder name; None for any other name."""
    match = DATE_NAME.fullmatch(name)
    if match is None:
        return None
    try:
        return dt.date.fromisoformat(match["date"])
    except ValueError:  # run_date=2025-13-45
        return None


def dated_dirs(root: Path) -> tuple[list[tuple[dt.date, Path]], list[Skipped]]:
    """The dated partitions of a nightly root, ascending, and the `run_date=` folders skipped."""
    if not root.is_dir():
        return [], []
    found, skipped = [], []
    for path in sorted(root.iterdir()):
        if not path.name.startswith(f"{RUN_DATE_KEY}="):
            continue
        day = parse_date_dir(path.name)
        if day is None or not path.is_dir():
            skipped.append(Skipped(path, "not a run_date=YYYY-MM-DD folder of a nightly run"))
        else:
            found.append((day, path))
    return found, skipped


def run_dates(root: Path) -> list[dt.date]:
    """The dates that have a published partition under a nightly root, ascending."""
    return [day for day, _ in dated_dirs(root)[0]]


def latest_dataset_dir(root: Path) -> Path:
    """The newest dated partition of a nightly root, or `root` itself when it has none."""
    dates = run_dates(root)
    return date_dir(root, dates[-1]) if dates else root


def _partition_value(path: Path, key: str) -> str | None:
    """The value of a `key=value` folder the writer could have made, else None."""
    prefix = f"{key}="
    if not path.name.startswith(prefix) or not path.is_dir():
        return None
    value = path.name[len(prefix) :]
    return value if SAFE_NAME.fullmatch(value) else None


def _leaf_dirs(table_dir: Path, skipped: list[Skipped]) -> Iterable[Path]:
    """The partition folders of a table, depth-first in name order; others go to `skipped`.
    An unpartitioned table's folder is its one leaf."""
    level = [table_dir]
    for key in table_spec(table_dir.name).partition_columns:
        below = []
        for parent in level:
            for path in sorted(parent.iterdir()):
                if _partition_value(path, key) is None:
                    skipped.append(Skipped(path, f"not a {key}=<name> partition folder"))
                else:
                    below.append(path)
        level = below
    return level


def table_parts(directory: Path, table_name: str) -> TableParts:
    """The part files of a table in a dataset directory, by name and place only."""
    table_spec(table_name)  # a registered table
    table_dir = directory / table_name
    if not table_dir.is_dir():
        return TableParts()
    skipped: list[Skipped] = []
    parts, temps = [], []
    for leaf in _leaf_dirs(table_dir, skipped):
        for path in sorted(leaf.iterdir()):
            if PART_NAME.fullmatch(path.name):
                if path.is_file() and not path.is_symlink():
                    parts.append(path)
                else:
                    skipped.append(Skipped(path, "named like a part but not a regular file", True))
            elif TEMP_NAME.fullmatch(path.name):
                temps.append(path)
            else:
                skipped.append(Skipped(path, "not a part file the writer made (part-<id>.parquet)"))
    return TableParts(tuple(parts), tuple(skipped), tuple(temps))


def part_version(parquet: pq.ParquetFile) -> int:
    """The schema version a part was written with: its `schema_version` column, read from the
    row-group statistics when present (no data read), else from the column itself."""
    index = parquet.schema_arrow.get_field_index("schema_version")
    versions: set[object] = set()
    meta = parquet.metadata
    for group in range(meta.num_row_groups):
        stats = meta.row_group(group).column(index).statistics
        if stats is None or not stats.has_min_max:
            versions = set(parquet.read(columns=["schema_version"]).column(0).to_pylist())
            break
        versions.update((stats.min, stats.max))
    if len(versions) != 1:
        raise ValueError(f"schema_version values {sorted(versions, key=str)}, expected one")
    version = versions.pop()
    if not isinstance(version, int):
        raise ValueError(f"schema_version {version!r} is not an integer")
    return version


@functools.cache
def _expected_types(table_name: str, version: int) -> dict[str, pa.DataType]:
    """Column name -> Arrow type stored in a part of `table_name` at schema `version`."""
    schema = columns_of(table_name, version)
    return dict(zip(schema.names, schema.types, strict=True))


def check_part(path: Path, table_name: str) -> str | None:
    """Why a part cannot be read as `table_name` (one line), or None when it can."""
    try:
        parquet = pq.ParquetFile(path)
        stored = parquet.schema_arrow
        names = stored.names
        if len(set(names)) != len(names):
            return "duplicate column names"
        if "schema_version" not in names or not pa.types.is_integer(
            stored.field("schema_version").type
        ):
            return "no integer schema_version column: not a dmlimits part"
        version = part_version(parquet)
    except (OSError, ValueError) as exc:  # ArrowInvalid is a ValueError
        return f"does not open as Parquet ({' '.join(str(exc).split())[:160]})"
    if not 1 <= version <= SCHEMA_VERSION:
        return f"schema version {version}, this dmlimits reads 1 to {SCHEMA_VERSION}"
    expected = _expected_types(table_name, version)
    got = dict(zip(names, stored.types, strict=True))
    missing = [name for name in expected if name not in got]
    extra = [name for name in names if name not in expected]
    retyped = [
        f"{name} is {got[name]}, expected {type_}"
        for name, type_ in expected.items()
        if name in got and not got[name].equals(type_)
    ]
    problems = (
        ([f"missing columns {missing}"] if missing else [])
        + ([f"unexpected columns {extra}"] if extra else [])
        + retyped
    )
    if problems:
        return f"not a {table_name} v{version} part: " + "; ".join(problems)
    return None


def partition_of(path: Path) -> dict[str, str]:
    """The partition values of a part, from its three parent folders."""
    folders = [path.parents[2].name, path.parents[1].name, path.parents[0].name]
    return {
        key: name.split("=", 1)[1] for key, name in zip(PARTITION_COLUMNS, folders, strict=True)
    }


def _polars_schema(schema: pa.Schema) -> pl.Schema:
    import polars as pl  # deferred, as in every reader here: a run that writes does not load it

    frame = pl.from_arrow(schema.empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.schema


def _scan(parts: Sequence[Path], table_name: str) -> pl.LazyFrame:
    """Checked parts as one frame of the table's current schema.

    The files are given as a literal list (no glob), with the current file schema, so columns
    added after a part's version read as null; partition columns come from each part's folders.
    """
    import polars as pl

    spec = table_spec(table_name)
    path_column = "__dmlimits_part"
    frame = pl.scan_parquet(
        [str(p) for p in parts],
        glob=False,
        hive_partitioning=False,
        schema=_polars_schema(file_schema(table_name)),
        missing_columns="insert",
        include_file_paths=path_column,
    )
    tail = r"/hardware=([^/]+)/scaling=([^/]+)/batch_law=([^/]+)/[^/]+$"
    return frame.with_columns(
        pl.col(path_column).str.extract(tail, i).alias(key)
        for i, key in enumerate(spec.partition_columns, 1)
    ).select(spec.schema.names)


def checked_parts(directory: Path, table_name: str) -> tuple[list[Path], list[Skipped]]:
    """The parts of a table that pass `check_part`, and everything skipped with its reason."""
    found = table_parts(directory, table_name)
    good, skipped = [], list(found.skipped)
    for path in found.parts:
        reason = check_part(path, table_name)
        if reason is None:
            good.append(path)
        else:
            skipped.append(Skipped(path, reason, True, footer_rows(path)))
    return good, skipped


SERIES_KEY = "series_id"
"""The column naming the series of a row in every per-series table."""


@dataclass(frozen=True, slots=True)
class PartSeries:
    """The series of some accepted parts of one per-series table of one dataset directory."""

    rows: int
    series: frozenset[str]
    split: tuple[str, ...]
    """The series with rows in two or more of the parts, sorted: never written so (the writer
    keeps a series in one part per table), so the directory was merged or copied into."""


def part_series(parts: Iterable[Path]) -> PartSeries:
    """Rows, series and split series of `parts` (accepted parts of one per-series table of one
    dataset directory), from their `series_id` column only: the one check of a series in two
    parts, which `dmlimits-gather`, `dmlimits-bi` and `read_table` share."""
    rows = 0
    seen: set[str] = set()
    split: set[str] = set()
    for path in parts:
        ids = pq.read_table(path, columns=[SERIES_KEY]).column(SERIES_KEY).to_pylist()
        distinct = set(ids)
        split |= distinct & seen
        seen |= distinct
        rows += len(ids)
    return PartSeries(rows, frozenset(seen), tuple(sorted(split)))


class SplitSeriesError(OutputError):
    """A per-series table of a dataset directory holds a series in two parts (`part_series`):
    every reader would count its rows twice, so none reads the table."""


def refuse_split_series(directory: Path, table_name: str, parts: Sequence[Path]) -> None:
    """SplitSeriesError (one line: the table, the count, one series id, `dmlimits-gather`) when
    a series has rows in two of `parts`, the accepted parts of a per-series table in
    `directory`; nothing for a per-run table, whose rows belong to no series."""
    if not table_spec(table_name).partitioned:
        return
    split = part_series(parts).split
    if split:
        n = len(split)
        raise SplitSeriesError(
            f"{directory}: {n} series {'have' if n != 1 else 'has'} rows in two parts of the "
            f"{table_name} table (e.g. {split[0]}), so {'their' if n != 1 else 'its'} rows would "
            f"count twice; the writer never splits a series (two roots merged? a part copied?): "
            f"run dmlimits-gather {directory} to list them"
        )


def missing_tables(directory: Path) -> list[Skipped]:
    """The tables every series has rows in (`tables.EVERY_SERIES_TABLES`, from the registry) that
    a dataset directory lacks while it holds parts of another (none for an empty directory): by
    name and place, contents not checked. A resumed run restores them (`pipeline.sweep.resume`)."""
    present = {table: bool(table_parts(directory, table).parts) for table in EVERY_SERIES_TABLES}
    if not any(present.values()):
        return []
    return [
        Skipped(
            directory / table,
            "table missing: the dataset holds series but none of their rows of this table; "
            "re-run the command with output.resume=true to restore it",
            True,
        )
        for table, found in present.items()
        if not found
    ]


def not_read_total(skipped: Iterable[Skipped]) -> str | None:
    """One line totalling the parts a reader refused and the rows they hold by their footers
    (`Skipped.rows`), for a reader to print once after naming each; None when it refused none.

    E.g. "not read in total: 12 rows in 2 parts"; with parts whose footer does not open, "not
    read in total: 3 parts, 12 rows in the 2 whose footer opens and 1 of unknown size" (or "1
    part of unknown size (its footer does not open)"). Entries that are no part (a foreign file,
    a missing table) are not counted: they hold no rows of the dataset.
    """
    parts = [s for s in skipped if s.damaged and PART_NAME.fullmatch(s.path.name)]
    if not parts:
        return None
    known = [s.rows for s in parts if s.rows is not None]
    unknown = len(parts) - len(known)
    n = len(parts)
    if not unknown:
        return f"not read in total: {sum(known)} rows in {n} part{'s' * (n != 1)}"
    if not known:
        return (
            f"not read in total: {n} part{'s' * (n != 1)} of unknown size "
            f"({'their footers do' if n != 1 else 'its footer does'} not open)"
        )
    return (
        f"not read in total: {n} parts, {sum(known)} rows in the {len(known)} whose footer "
        f"opens and {unknown} of unknown size"
    )


def footer_rows(path: Path) -> int | None:
    """The row count a Parquet file's footer states, or None when it cannot be read."""
    try:
        return int(pq.ParquetFile(path).metadata.num_rows)
    except (OSError, ValueError):  # ArrowInvalid is a ValueError
        return None


def read_table(
    directory: Path | str, table_name: str, columns: Sequence[str] | None = None
) -> TableRead:
    """One table of a dataset directory (a root, or one `run_date=` partition of a nightly
    root): the rows of every accepted part, sorted.

    The frame has the table's columns in schema order (or `columns`), sorted by its sort keys;
    it is None when no part was accepted: none skipped, the directory holds no such table (a
    nightly root itself holds none; a directory that does not exist neither). A per-series table
    with a series in two of its parts is refused whole: `SplitSeriesError` (`part_series`).
    """
    good, skipped = checked_parts(Path(directory), table_name)
    if not good:
        return TableRead(None, tuple(skipped))
    refuse_split_series(Path(directory), table_name, good)
    spec = table_spec(table_name)
    names = list(columns) if columns is not None else spec.schema.names
    keys = [k for k in spec.sort_keys if k in names]
    frame = _scan(good, table_name).select(names).sort(keys).collect()
    return TableRead(frame, tuple(skipped), tuple(good))


def read_or_empty(directory: Path, table_name: str) -> pl.DataFrame:
    """A table's rows (`read_table`), or an empty frame with the schema when there are none."""
    frame = read_table(directory, table_name).frame
    if frame is None:
        import polars as pl

        empty = pl.from_arrow(table_spec(table_name).schema.empty_table())
        assert isinstance(empty, pl.DataFrame)
        return empty
    return frame


def root_entries_skipped(root: Path) -> list[Skipped]:
    """Entries at the top of a dataset or nightly root that no reader looks at."""
    if not root.is_dir():
        return []
    dated = any(parse_date_dir(p.name) for p in root.iterdir())
    skipped = []
    for path in sorted(root.iterdir()):
        name = path.name
        if name.startswith(LOCK_PREFIX) or name.startswith(f"{RUN_DATE_KEY}="):
            continue  # the lock; dated folders are checked by `dated_dirs`
        if name == SET_ASIDE_DIR and path.is_dir():
            continue  # parts a run set aside (`pipeline.io.heal`), never read
        if dated and name in NIGHTLY_ENTRIES:
            continue
        if name == SOURCE_STORE and path.is_dir():
            continue
        if not dated and name in BY_NAME and path.is_dir():
            continue
        skipped.append(Skipped(path, "not part of a dmlimits dataset"))
    return skipped
